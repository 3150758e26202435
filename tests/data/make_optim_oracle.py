"""Record MindSpore 2.10's optimizer updates, wrapper cells, learning-rate lists and argument
errors into ``optim_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests)::

    /tmp/ms/bin/python tests/data/make_optim_oracle.py

Same format as ``make_loss_oracle.py`` (whose encoder this reuses): each case is a snippet
that sets ``result``, run with ``ms``, ``nn``, ``ops``, ``T``, ``np`` and the ``PRELUDE``
helpers bound; ``tests/test_nn_optim_oracle.py`` runs it with mscore. Parameters and
gradients come from closed formulas, three steps each. ``differs`` marks what MindSpore's
CPU build cannot run (LARS, Lamb: checked against numpy) or where mscore deliberately
differs (docs/differences.md).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_loss_oracle import run_cases  # noqa: E402

OUT = os.path.join(HERE, "optim_oracle.json")

PRELUDE = '''
SHAPES = {"w": (3, 2), "gamma": (2,), "b": (2,), "conv.weight": (2, 2), "bias": (2,)}

def arr(shape, seed, scale=1.0, shift=0.0):
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n) * 1.7 + seed) * scale + shift).reshape(shape).astype(np.float32)

def params(names=("w", "gamma", "b")):
    return [ms.Parameter(T(arr(SHAPES[n], i + 1)), name=n) for i, n in enumerate(names)]

def grads(ps, step, scale=1.0):
    return tuple(T(arr(p.shape, 10 + 3 * step + i, scale)) for i, p in enumerate(ps))

def train(make, steps=3, scale=1.0, names=("w", "gamma", "b")):
    """The parameters and global_step after ``steps`` updates of ``make(params)``."""
    ps = params(names)
    opt = make(ps)
    for s in range(steps):
        opt(grads(ps, s, scale))
    return [p.asnumpy() for p in ps] + [opt.global_step.asnumpy().astype(np.float32)]

def state_names(make, names=("w", "gamma", "b")):
    """The names of every Parameter the optimizer holds (its checkpoint keys)."""
    opt = make(params(names))
    return sorted(p.name for p in opt.get_parameters())

def state_values(make, prefix, steps=2):
    ps = params()
    opt = make(ps)
    for s in range(steps):
        opt(grads(ps, s))
    found = sorted((p.name, p) for p in opt.get_parameters() if p.name.startswith(prefix))
    return [p.asnumpy().astype(np.float32) for _, p in found]

def groups(ps, lr=0.05, wd=0.01):
    return [{"params": [ps[0]], "lr": lr, "weight_decay": wd}, {"params": ps[1:]}]

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2, weight_init=T(arr((2, 3), 1)), bias_init=T(arr((2,), 2)))
    def construct(self, x):
        return self.dense(x)

x43, y42 = T(arr((4, 3), 3)), T(arr((4, 2), 4))
'''

CASES = {}
FTRL_SIGN = ("MindSpore 2.10's CPU FTRL kernel uses +l1 where the documented formula (and its GPU "
             "kernel) use l1 * sign(linear): mscore follows the formula, checked against numpy")
NO_CPU_KERNEL = ("MindSpore 2.10's CPU build has no kernel for this optimizer: the update is "
                 "checked against numpy")


def case(name, code, differs=None):
    """``differs``: why the mscore result is checked another way."""
    CASES[name] = {"code": code.strip("\n"), "differs": differs}


# -- every optimizer: default, weight decay, loss scale, groups, dynamic rates, states -------
OPTIMIZERS = {
    "adagrad": "nn.Adagrad(ps, learning_rate=0.1{kw})",
    "adadelta": "nn.Adadelta(ps, learning_rate=0.5{kw})",
    "adamax": "nn.AdaMax(ps, learning_rate=0.05{kw})",
    "asgd": "nn.ASGD(ps, learning_rate=0.1, t0=1.0{kw})",
    "ftrl": "nn.FTRL(ps, learning_rate=0.1, l2=0.02{kw})",
    "lazyadam": "nn.LazyAdam(ps, learning_rate=0.05{kw})",
    "proximal_adagrad": "nn.ProximalAdagrad(ps, learning_rate=0.1, l1=0.01, l2=0.02{kw})",
    "rmsprop": "nn.RMSProp(ps, learning_rate=0.05{kw})",
    "rprop": "nn.Rprop(ps, learning_rate=0.05{kw})",
    "momentum": "nn.Momentum(ps, 0.1, 0.9{kw})",
    "sgd": "nn.SGD(ps, 0.1, momentum=0.8, dampening=0.1{kw})",
    "adam": "nn.Adam(ps, learning_rate=0.05{kw})",
    "adamw": "nn.AdamWeightDecay(ps, learning_rate=0.05{kw})",
}
NO_LOSS_SCALE = ("asgd", "rprop", "adamw")
NO_GROUP_LR = ("ftrl",)
for key, make in OPTIMIZERS.items():
    fn = "lambda ps: " + make
    case(f"{key}_default", f"result = train({fn.format(kw='')})")
    case(f"{key}_weight_decay", f"result = train({fn.format(kw=', weight_decay=0.1')})")
    case(f"{key}_state_names", f"result = state_names({fn.format(kw='')})")
    if key not in NO_LOSS_SCALE:
        case(f"{key}_loss_scale",
             f"result = train({fn.format(kw=', loss_scale=8.0')}, scale=8.0)")
    if key not in NO_GROUP_LR:
        grouped = "lambda ps: " + make.replace("(ps,", "(groups(ps),")
        case(f"{key}_groups", f"result = train({grouped.format(kw=', weight_decay=0.02')})")
        dynamic = fn.format(kw="").replace("learning_rate=0.1", "learning_rate=[0.1, 0.05, 0.02]")
        dynamic = dynamic.replace("learning_rate=0.05", "learning_rate=[0.05, 0.02, 0.01]")
        dynamic = dynamic.replace("learning_rate=0.5", "learning_rate=[0.5, 0.2, 0.1]")
        dynamic = dynamic.replace("(ps, 0.1,", "(ps, [0.1, 0.05, 0.02],")
        case(f"{key}_dynamic_lr", f"result = train({dynamic})")

# -- options of single optimizers ------------------------------------------------------------
case("adagrad_no_update_slots", "result = train(lambda ps: nn.Adagrad(ps, accum=0.5, update_slots=False))",
     "MindSpore 2.10's CPU kernel updates accum even with update_slots=False; mscore does what "
     "the documentation says: checked against numpy")
case("adagrad_accum_int", "nn.Adagrad(params(), accum=1)")
case("adagrad_update_slots_int", "nn.Adagrad(params(), update_slots=1)")
case("adadelta_rho_range", "nn.Adadelta(params(), rho=1.5)")
case("adadelta_epsilon_negative", "nn.Adadelta(params(), epsilon=-1.0)")
case("adadelta_states", "result = state_values(lambda ps: nn.Adadelta(ps), 'accum')")
case("adamax_states", "result = state_values(lambda ps: nn.AdaMax(ps, 0.05), 'moment') + state_values(lambda ps: nn.AdaMax(ps, 0.05), 'beta1')")
case("adamax_beta_range", "nn.AdaMax(params(), beta1=1.0)")
case("adamax_eps_int", "nn.AdaMax(params(), eps=1)")
case("asgd_states", "result = state_values(lambda ps: nn.ASGD(ps, 0.1, lambd=0.1, alpha=0.5, t0=1.0), '')")
case("asgd_averaging_starts", "result = train(lambda ps: nn.ASGD(ps, 0.1, lambd=0.05, t0=2.0), steps=4)")
case("asgd_schedule", "result = train(lambda ps: nn.ASGD(ps, nn.ExponentialDecayLR(0.1, 0.5, 1), t0=1.0))")
case("asgd_lambd_int", "nn.ASGD(params(), lambd=1)")
case("ftrl_lr_power_zero", "result = train(lambda ps: nn.FTRL(ps, learning_rate=0.1, lr_power=0.0))")
case("ftrl_l1", "result = train(lambda ps: nn.FTRL(ps, learning_rate=0.1, l1=0.05, l2=0.01))", FTRL_SIGN)
case("ftrl_dynamic_lr", "nn.FTRL(params(), learning_rate=[0.1, 0.2])")
case("ftrl_lr_int", "nn.FTRL(params(), learning_rate=1)")
case("ftrl_lr_power_positive", "nn.FTRL(params(), lr_power=0.5)")
case("ftrl_group_weight_decay", "result = train(lambda ps: nn.FTRL([{'params': ps[:1], 'weight_decay': 0.1}, {'params': ps[1:]}], learning_rate=0.1))")
case("ftrl_target", "opt = nn.FTRL(params()); opt.target = 'CPU'; result = opt.target")
case("ftrl_target_bad", "opt = nn.FTRL(params()); opt.target = 'TPU'")
case("lazyadam_nesterov", "result = train(lambda ps: nn.LazyAdam(ps, 0.05, use_nesterov=True))")
case("lazyadam_weight_decay_int", "nn.LazyAdam(params(), weight_decay=0)")
case("lazyadam_states", "result = state_values(lambda ps: nn.LazyAdam(ps, 0.05), 'beta')")
case("proximal_adagrad_l1_int", "nn.ProximalAdagrad(params(), l1=1)")
case("rmsprop_centered_momentum", "result = train(lambda ps: nn.RMSProp(ps, 0.05, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True))")
case("rmsprop_momentum_state_names", "result = state_names(lambda ps: nn.RMSProp(ps, centered=True))")
case("rmsprop_epsilon_zero", "nn.RMSProp(params(), epsilon=0.0)")
case("rmsprop_decay_int", "nn.RMSProp(params(), decay=1)")
case("rmsprop_centered_int", "nn.RMSProp(params(), centered=1)")
case("rprop_options", "result = train(lambda ps: nn.Rprop(ps, 0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.08)), steps=4)")
case("rprop_states", "result = state_values(lambda ps: nn.Rprop(ps, 0.05), 'step_size', steps=3)")
case("rprop_etas_list", "nn.Rprop(params(), etas=[0.5, 1.2])")
case("rprop_etas_len", "nn.Rprop(params(), etas=(0.5, 1.2, 2.0))")
case("rprop_etaplus_small", "nn.Rprop(params(), etas=(0.5, 1.0))")
case("rprop_etaminus_range", "nn.Rprop(params(), etas=(1.5, 2.0))")
case("rprop_step_sizes_order", "nn.Rprop(params(), step_sizes=(1.0, 0.5))")
case("adam_amsgrad", "result = train(lambda ps: nn.Adam(ps, 0.05, use_amsgrad=True))")
case("adam_amsgrad_state_names", "result = state_names(lambda ps: nn.Adam(ps, use_amsgrad=True))")
case("adam_nesterov_wd", "result = train(lambda ps: nn.Adam(ps, 0.05, use_nesterov=True, weight_decay=0.05))")
case("adam_use_lazy", "result = train(lambda ps: nn.Adam(ps, 0.05, use_lazy=True))")
case("adam_offload", "result = train(lambda ps: nn.AdamOffload(ps, 0.05, weight_decay=0.01))")
case("adam_offload_nesterov", "result = train(lambda ps: nn.AdamOffload(ps, 0.05, use_nesterov=True))")
case("adam_offload_state_names", "result = state_names(lambda ps: nn.AdamOffload(ps))")
case("adam_offload_states", "result = state_values(lambda ps: nn.AdamOffload(ps, 0.05), 'moment') + state_values(lambda ps: nn.AdamOffload(ps, 0.05), 'beta')")
case("adam_offload_negative_wd", "nn.AdamOffload(params(), weight_decay=-0.1)")
case("adam_offload_beta_range", "nn.AdamOffload(params(), beta2=1.0)")
case("adam_unknown_kwarg", "nn.Adam(params(), foo=True)")
case("adam_lazy_and_offload", "nn.Adam(params(), use_lazy=True, use_offload=True)")
case("adam_amsgrad_lazy", "nn.Adam(params(), use_amsgrad=True, use_lazy=True)")
case("adam_beta_powers", "opt = nn.Adam(params(), 0.05); result = [opt.beta1_power.asnumpy(), opt.beta2_power.asnumpy()]")
case("adam_target", "opt = nn.Adam(params()); opt.target = 'CPU'; result = opt.target")
case("adam_target_gpu_on_cpu", "opt = nn.Adam(params()); opt.target = 'GPU'")
case("sgd_nesterov", "result = train(lambda ps: nn.SGD(ps, 0.1, momentum=0.9, nesterov=True, weight_decay=0.01))")
case("sgd_dynamic_weight_decay", "nn.SGD(params(), 0.1, weight_decay=nn.ExponentialDecayLR(0.1, 0.5, 1))")
case("momentum_negative", "nn.Momentum(params(), 0.1, -0.5)")
case("momentum_int", "nn.Momentum(params(), 0.1, 1)")
case("momentum_target_set", "opt = nn.Momentum(params(), 0.1, 0.9); opt.target = 'CPU'")
case("adamw_groups_decay", """
result = train(lambda ps: nn.AdamWeightDecay([{'params': ps[:1], 'weight_decay': 0.1},
                                              {'params': ps[1:], 'lr': 0.01}], 0.05))""")
case("lamb_state_names", "result = state_names(lambda ps: nn.Lamb(ps, 0.01))")
case("lamb_eps_int", "nn.Lamb(params(), 0.01, eps=1)")
case("lamb_update", "result = train(lambda ps: nn.Lamb(ps, 0.01, weight_decay=0.1))", NO_CPU_KERNEL)
case("lars_state_names", "result = state_names(lambda ps: nn.LARS(nn.Momentum(ps, 0.1, 0.9)))")
case("lars_not_optimizer", "nn.LARS(params())",
     "MindSpore fails with an AttributeError from inside; mscore raises TypeError naming "
     "'optimizer'")
case("lars_epsilon_int", "nn.LARS(nn.Momentum(params(), 0.1, 0.9), epsilon=1)")
case("lars_update", "result = train(lambda ps: nn.LARS(nn.Momentum(ps, 0.1, 0.9, weight_decay=0.1), coefficient=0.1))",
     NO_CPU_KERNEL)

# -- the Optimizer base --------------------------------------------------------------------
case("base_global_step_counts_fixed_lr", """
ps = params(); opt = nn.Momentum(ps, 0.1, 0.9)
for s in range(3):
    opt(grads(ps, s))
result = [opt.global_step.asnumpy().astype(np.float32), opt.get_lr().asnumpy()]""")
case("base_get_lr_does_not_advance", """
ps = params(); opt = nn.Momentum(ps, [0.1, 0.05, 0.02], 0.9)
first = [opt.get_lr().asnumpy(), opt.get_lr().asnumpy(), opt.global_step.asnumpy().astype(np.float32)]
opt(grads(ps, 0))
result = first + [opt.get_lr().asnumpy(), opt.global_step.asnumpy().astype(np.float32)]""")
case("base_get_lr_groups", """
ps = params(); opt = nn.SGD(groups(ps, lr=0.05), 0.2)
result = [v.asnumpy() for v in opt.get_lr()]""")
case("base_get_lr_parameter", """
ps = params(); opt = nn.SGD(groups(ps, lr=0.05), 0.2)
result = [opt.get_lr_parameter(ps[0]).asnumpy(), opt.get_lr_parameter(ps[2]).asnumpy(),
          [p.asnumpy() for p in opt.get_lr_parameter([ps[1], ps[0]])]]""")
case("base_get_lr_parameter_unknown", """
ps = params(); opt = nn.SGD(ps[:2], 0.2)
opt.get_lr_parameter(ps[2])""")
case("base_get_weight_decay", """
ps = params(); opt = nn.SGD(ps, 0.2, weight_decay=0.05)
result = opt.get_weight_decay().asnumpy()""")
case("base_tensor_lr", "result = train(lambda ps: nn.Momentum(ps, T(np.array([0.1, 0.05, 0.02], np.float32)), 0.9))")
case("base_tensor_lr_scalar", "result = train(lambda ps: nn.Momentum(ps, T(np.float32(0.05)), 0.9))")
case("base_schedule_lr", "result = train(lambda ps: nn.Momentum(ps, nn.PolynomialDecayLR(0.1, 0.01, 2, 1.0), 0.9), steps=4)")
case("base_dynamic_weight_decay", "result = train(lambda ps: nn.Momentum(ps, 0.1, 0.9, weight_decay=nn.ExponentialDecayLR(0.1, 0.5, 1)))")
case("base_order_params", """
ps = params()
result = train(lambda ps: nn.Momentum([{'params': [ps[1]], 'weight_decay': 0.1}, {'params': [ps[0], ps[2]], 'lr': 0.05},
                                       {'order_params': ps}], 0.1, 0.9))""")
case("base_order_params_names", """
ps = params()
opt = nn.Momentum([{'params': [ps[2], ps[1]]}, {'params': [ps[0]]}, {'order_params': ps}], 0.1, 0.9)
result = [p.name for p in opt.parameters]""")
case("base_group_unknown_key", "ps = params(); nn.Momentum([{'params': ps, 'momentum': 0.5}], 0.1, 0.9)")
case("base_group_order_params_mismatch", "ps = params(); nn.Momentum([{'params': ps[:2]}, {'order_params': ps}], 0.1, 0.9)")
case("base_group_repeated_param", "ps = params(); nn.Momentum([{'params': ps[:2]}, {'params': ps[1:]}], 0.1, 0.9)")
case("base_group_dynamic_lr_sizes", "ps = params(); nn.Momentum([{'params': ps[:1], 'lr': [0.1, 0.2]}, {'params': ps[1:]}], [0.1, 0.2, 0.3], 0.9)")
case("base_loss_scale_zero", "nn.Momentum(params(), 0.1, 0.9, loss_scale=0.0)")
case("base_loss_scale_str", "nn.Momentum(params(), 0.1, 0.9, loss_scale='1')")
case("base_loss_scale_int", "result = train(lambda ps: nn.Momentum(ps, 0.1, 0.9, loss_scale=4), scale=4.0)")
case("base_weight_decay_negative", "nn.Momentum(params(), 0.1, 0.9, weight_decay=-0.1)")
case("base_weight_decay_str", "nn.Momentum(params(), 0.1, 0.9, weight_decay='0.1')")
case("base_lr_negative", "nn.Momentum(params(), -0.1, 0.9)")
case("base_lr_str", "nn.Momentum(params(), 'a', 0.9)")
case("base_lr_tensor_2d", "nn.Momentum(params(), T(np.ones((2, 2), np.float32)), 0.9)")
case("base_params_empty", "nn.Momentum([], 0.1, 0.9)")
case("base_params_none", "nn.Momentum(None, 0.1, 0.9)")
case("base_params_not_iterable", "nn.Momentum(1, 0.1, 0.9)")
case("base_params_mixed", "ps = params(); nn.Momentum([ps[0], {'params': ps[1:]}], 0.1, 0.9)")
case("base_params_tuple", "result = train(lambda ps: nn.Momentum(tuple(ps), 0.1, 0.9))")
case("base_target_default", "result = nn.Momentum(params(), 0.1, 0.9).target")
case("base_unique", "opt = nn.Momentum(params(), 0.1, 0.9); first = opt.unique; opt.unique = False; result = [first, opt.unique]")
case("base_unique_not_bool", "opt = nn.Momentum(params(), 0.1, 0.9); opt.unique = 1")
case("base_attributes", """
opt = nn.Adam(params(), 0.1, weight_decay=0.1, loss_scale=4.0)
result = [opt.dynamic_lr, opt.is_group, opt.is_group_lr, list(opt.decay_flags), opt.exec_weight_decay,
          opt.need_scale, opt.loss_scale, opt.reciprocal_scale.asnumpy(), opt.param_length,
          opt.global_step_increase_tensor.asnumpy()]""")
case("base_custom_optimizer", """
class MyMomentum(nn.Optimizer):
    def __init__(self, params, learning_rate, momentum=0.9):
        super().__init__(learning_rate, params)
        self.momentum = ms.Parameter(T(momentum, ms.float32), name="momentum")
        self.moments = self.parameters.clone(prefix="moments", init="zeros")
    def construct(self, gradients):
        lr = self.get_lr()
        params = self.parameters
        for i in range(len(params)):
            ops.assign(self.moments[i], self.moments[i] * self.momentum + gradients[i])
            ops.assign(params[i], params[i] - self.moments[i] * lr)
        self.assignadd(self.global_step, self.global_step_increase_tensor)
        return params
result = train(lambda ps: MyMomentum(ps, [0.1, 0.05, 0.02]))""")
case("base_custom_optimizer_hyper_map", """
_opt = ops.MultitypeFuncGraph("opt")
@_opt.register("Tensor", "Tensor", "Tensor")
def _update(lr, grad, param):
    ops.assign(param, param - lr * grad)
    return True
class Plain(nn.Optimizer):
    def __init__(self, params, learning_rate):
        super().__init__(learning_rate, params, weight_decay=0.1)
    def construct(self, gradients):
        gradients = self.decay_weight(gradients)
        gradients = self.scale_grad(gradients)
        lr = self.get_lr()
        return self.hyper_map(ops.partial(_opt, lr), gradients, self._parameters)
result = train(lambda ps: Plain(ps, 0.1))""")
case("base_custom_optimizer_sets_helpers", """
class Own(nn.Optimizer):
    def __init__(self, params, learning_rate):
        super().__init__(learning_rate, params)
        self.assignadd = ops.AssignAdd()
        self.hyper_map = ops.HyperMap()
        self.global_step_increase_tensor = T(np.array([2], np.int32))
    def construct(self, gradients):
        lr = self.get_lr()
        self.assignadd(self.global_step, self.global_step_increase_tensor)
        for p, g in zip(self._parameters, gradients):
            ops.assign(p, p - lr * g)
        return True
result = train(lambda ps: Own(ps, [0.1, 0.05, 0.02, 0.01, 0.005]))""")

# -- wrapper cells ---------------------------------------------------------------------------
case("forward_value_and_grad_weights", """
net = Net(); loss_net = nn.WithLossCell(net, nn.MSELoss())
cell = nn.ForwardValueAndGrad(loss_net, weights=loss_net.trainable_params(), get_by_list=True)
loss, g = cell(x43, y42)
result = [loss.asnumpy()] + [v.asnumpy() for v in g]""")
case("forward_value_and_grad_inputs", """
net = Net()
cell = nn.ForwardValueAndGrad(lambda x, y: (net(x) * y).sum(), get_all=True)
loss, g = cell(x43, y42)
result = [loss.asnumpy()] + [v.asnumpy() for v in g]""")
case("forward_value_and_grad_first_input_sens", """
net = Net()
cell = nn.ForwardValueAndGrad(net, sens_param=True)
out, g = cell(x43, T(arr((4, 2), 7)))
result = [out.asnumpy(), g.asnumpy()]""")
case("forward_value_and_grad_both", """
net = Net(); loss_net = nn.WithLossCell(net, nn.MSELoss())
cell = nn.ForwardValueAndGrad(loss_net, weights=loss_net.trainable_params(), get_all=True, get_by_list=True)
loss, (gi, gw) = cell(x43, y42)
result = [loss.asnumpy()] + [v.asnumpy() for v in gi] + [v.asnumpy() for v in gw]""")
case("forward_value_and_grad_no_weights", "nn.ForwardValueAndGrad(Net(), get_by_list=True)")
case("forward_value_and_grad_bad_network", "nn.ForwardValueAndGrad(1)")
case("forward_value_and_grad_get_all_int", "nn.ForwardValueAndGrad(Net(), get_all=1)")
case("with_grad_cell_loss_fn", """
g = nn.WithGradCell(Net(), nn.MSELoss())(x43, y42)
result = [v.asnumpy() for v in g]""")
case("with_grad_cell_sens", """
net = Net()
g = nn.WithGradCell(net, sens=T(arr((4, 2), 8)))(x43)
result = [v.asnumpy() for v in g]""")
case("train_one_step_return_grad", """
net = Net(); loss_net = nn.WithLossCell(net, nn.MSELoss())
step = nn.TrainOneStepCell(loss_net, nn.SGD(net.trainable_params(), 0.1), return_grad=True)
loss, g = step(x43, y42)
result = [loss.asnumpy(), sorted(g), [g[k].asnumpy() for k in sorted(g)], net.dense.weight.asnumpy()]""")
case("train_one_step_sens_zero", "net = Net(); nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params()), sens=0.0)")
case("grad_accumulation_cell", """
net = Net(); loss_net = nn.WithLossCell(net, nn.MSELoss())
acc = nn.GradAccumulationCell(loss_net, 2)
g = ms.value_and_grad(acc, None, loss_net.trainable_params())(x43, y42)
result = [g[0].asnumpy()] + [v.asnumpy() for v in g[1]]""")
case("grad_accumulation_micro_size_zero", "nn.GradAccumulationCell(Net(), 0)")
case("grad_accumulation_micro_size_float", "nn.GradAccumulationCell(Net(), 2.0)")
case("grad_accumulation_not_cell", "nn.GradAccumulationCell(lambda x: x, 2)")
case("parameter_update", """
p = ms.Parameter(T(np.zeros(3, np.float32)), name="p")
out = nn.ParameterUpdate(p)(T(np.array([1.0, 2.0, 3.0], np.float32)))
result = [out.asnumpy(), p.asnumpy()]""")
case("parameter_update_not_parameter", "nn.ParameterUpdate(T(np.zeros(3, np.float32)))")
case("time_distributed_unstack", """
td = nn.TimeDistributed(nn.Dense(3, 2, weight_init=T(arr((2, 3), 1)), bias_init=T(arr((2,), 2))), time_axis=1)
result = td(T(arr((2, 4, 3), 5))).asnumpy()""")
case("time_distributed_reshape", """
td = nn.TimeDistributed(nn.Dense(3, 2, weight_init=T(arr((2, 3), 1)), bias_init=T(arr((2,), 2))), time_axis=1, reshape_with_axis=0)
result = td(T(arr((2, 4, 3), 5))).asnumpy()""")
case("time_distributed_time_axis_0", """
td = nn.TimeDistributed(nn.ReLU(), time_axis=-1)
result = td(T(arr((2, 3, 4), 6))).asnumpy()""")
case("time_distributed_2d_input", "nn.TimeDistributed(nn.ReLU(), time_axis=1)(T(arr((2, 3), 1)))")
case("time_distributed_bad_layer", "nn.TimeDistributed(1, time_axis=1)")
case("time_distributed_float_axis", "nn.TimeDistributed(nn.ReLU(), time_axis=1.0)")
case("vjp", """
fn = lambda x, y: x * x * y
out, g = nn.Vjp(fn)(T(arr((2, 3), 1)), T(arr((2, 3), 2)), T(arr((2, 3), 3)))
result = [out.asnumpy()] + [v.asnumpy() for v in g]""")
case("vjp_single_input", """
def twice_exp(x):
    return ops.exp(x) * 2.0
out, g = nn.Vjp(twice_exp)(T(arr((2, 3), 1)), T(arr((2, 3), 3)))
result = [out.asnumpy(), g.asnumpy()]""")
case("jvp", """
fn = lambda x, y: x * x * y
out, t = nn.Jvp(fn)(T(arr((2, 3), 1)), T(arr((2, 3), 2)), (T(arr((2, 3), 3)), T(arr((2, 3), 4))))
result = [out.asnumpy(), t.asnumpy()]""")
case("jvp_single_input", """
def twice_exp(x):
    return ops.exp(x) * 2.0
out, t = nn.Jvp(twice_exp)(T(arr((2, 3), 1)), T(arr((2, 3), 3)))
result = [out.asnumpy(), t.asnumpy()]""")
case("jvp_tuple_output", """
class Pair(nn.Cell):
    def construct(self, x):
        return x * x, ops.sin(x).sum()
out, t = nn.Jvp(Pair())(T(arr((2, 3), 1)), T(arr((2, 3), 5)))
result = [o.asnumpy() for o in out] + [v.asnumpy() for v in t]""")
case("jvp_cell_with_weights", """
dense = nn.Dense(3, 2, weight_init=T(arr((2, 3), 1)), bias_init=T(arr((2,), 2)), activation="tanh")
out, t = nn.Jvp(dense)(T(arr((4, 3), 3)), T(arr((4, 3), 6)))
result = [out.asnumpy(), t.asnumpy(), dense.weight.asnumpy()]""")
case("jvp_tangent_count", """
fn = lambda x, y: x * y
nn.Jvp(fn)(T(arr((2, 3), 1)), T(arr((2, 3), 2)), T(arr((2, 3), 3)))""")

# -- learning-rate lists (nn.dynamic_lr) -----------------------------------------------------
LR_CASES = {
    "piecewise_equal_milestones": "nn.piecewise_constant_lr([2, 2, 5], [0.1, 0.05, 0.01])",
    "piecewise_decreasing": "nn.piecewise_constant_lr([2, 1], [0.1, 0.05])",
    "piecewise_int_rate": "nn.piecewise_constant_lr([2, 5], [0.1, 1])",
    "piecewise_tuples": "nn.piecewise_constant_lr((2, 5), (0.1, 0.2))",
    "piecewise_zero_milestone": "nn.piecewise_constant_lr([0, 5], [0.1, 0.2])",
    "piecewise_not_list": "nn.piecewise_constant_lr(5, [0.1])",
    "piecewise_sizes": "nn.piecewise_constant_lr([2], [0.1, 0.2])",
    "piecewise_float_milestone": "nn.piecewise_constant_lr([2.0], [0.1])",
    "piecewise_empty": "nn.piecewise_constant_lr([], [])",
    "inverse": "nn.inverse_decay_lr(0.1, 0.5, 6, 2, 1)",
    "inverse_stair": "nn.inverse_decay_lr(0.1, 0.5, 8, 1, 3, True)",
    "inverse_int_lr": "nn.inverse_decay_lr(1, 0.5, 6, 2, 1)",
    "inverse_negative_lr": "nn.inverse_decay_lr(-0.1, 0.5, 6, 2, 1)",
    "inverse_zero_steps": "nn.inverse_decay_lr(0.1, 0.5, 0, 2, 1)",
    "inverse_float_steps": "nn.inverse_decay_lr(0.1, 0.5, 6, 2.0, 1)",
    "inverse_stair_int": "nn.inverse_decay_lr(0.1, 0.5, 6, 2, 1, 1)",
    "inverse_str_lr": "nn.inverse_decay_lr('a', 0.5, 6, 2, 1)",
    "natural_exp": "nn.natural_exp_decay_lr(0.1, 0.5, 6, 2, 2)",
    "natural_exp_stair": "nn.natural_exp_decay_lr(0.1, 0.5, 8, 1, 3, True)",
    "natural_exp_zero_rate": "nn.natural_exp_decay_lr(0.1, 0.0, 6, 2, 2)",
    "exponential": "nn.exponential_decay_lr(0.1, 0.9, 6, 2, 2)",
    "exponential_stair": "nn.exponential_decay_lr(0.1, 0.9, 8, 1, 3, True)",
    "exponential_bool_steps": "nn.exponential_decay_lr(0.1, 0.9, True, 2, 1)",
    "cosine": "nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2)",
    "cosine_int_min": "nn.cosine_decay_lr(0, 0.1, 6, 2, 1)",
    "cosine_negative_min": "nn.cosine_decay_lr(-0.1, 0.1, 6, 2, 1)",
    "cosine_min_above_max": "nn.cosine_decay_lr(0.2, 0.1, 6, 2, 1)",
    "cosine_int_max": "nn.cosine_decay_lr(0.0, 1, 6, 2, 1)",
    "polynomial": "nn.polynomial_decay_lr(0.1, 0.01, 6, 1, 4, 0.5)",
    "polynomial_update": "nn.polynomial_decay_lr(0.1, 0.01, 8, 1, 3, 2.0, True)",
    "polynomial_int_end": "nn.polynomial_decay_lr(0.1, 0, 6, 2, 1, 0.5)",
    "polynomial_int_power": "nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 1, 0)",
    "polynomial_update_int": "nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 1, 0.5, 1)",
    "warmup": "nn.warmup_lr(0.1, 6, 2, 2)",
    "warmup_int_lr": "nn.warmup_lr(1, 6, 2, 1)",
    "warmup_zero_lr": "nn.warmup_lr(0.0, 6, 2, 1)",
    "warmup_zero_epoch": "nn.warmup_lr(0.1, 6, 2, 0)",
}
for key, call in LR_CASES.items():
    case(f"lr_{key}", f"result = {call}")
case("lr_module_path", """
import importlib
result = importlib.import_module(ms.__name__ + ".nn.dynamic_lr").inverse_decay_lr(0.2, 1.0, 3, 1, 1)""")
case("lr_list_trains_adagrad", "result = train(lambda ps: nn.Adagrad(ps, learning_rate=nn.inverse_decay_lr(0.1, 0.5, 3, 1, 1)))")


def main():
    import mindspore as ms
    from mindspore import nn, ops
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    names = {"ms": ms, "nn": nn, "ops": ops, "T": ms.Tensor, "np": np}
    out = {"generator": "tests/data/make_optim_oracle.py", "mindspore": ms.__version__,
           "numpy": np.__version__, "prelude": PRELUDE.strip("\n"),
           "cases": run_cases(CASES, PRELUDE, names)}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
