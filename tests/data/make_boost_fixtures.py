"""Record MindSpore 2.10's ``mindspore.boost`` behaviour into ``boost_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests):

    /tmp/ms/bin/python tests/data/make_boost_fixtures.py

Like ``make_metrics_fixtures.py``: each case is a snippet that sets ``result``; it runs here
with ``boost`` (``mindspore.boost``), ``nn``, ``ms``, ``T`` (Tensor), ``np``, ``nets``
(``boost_nets.build(ms)``), ``fill`` and ``inputs`` (``boost_nets`` bound to ``ms``) and the
prelude below; ``tests/test_boost_oracle.py`` runs the same snippet with mscore. The JSON keeps
the snippet with its value or exception. ``differs`` says why mscore deliberately does
something else (docs/differences.md); ``graph`` cases run in GRAPH_MODE here (MindSpore's
less-BN pass is a graph pass).

``AutoBoost`` is a process-wide singleton in MindSpore, and its "manual" mode writes into the
module's level table: before every case the generator resets both, so each case starts as a
fresh process would.
"""
import copy
import inspect
import json
import os
import sys
from functools import partial

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "boost_oracle.json")
sys.path.insert(0, HERE)
import boost_nets  # noqa: E402
from make_metrics_fixtures import encode  # noqa: E402

PRELUDE = """
def plain_names(params):
    # MindSpore's wrappers prefix parameter names ('single_opt.', 'network.', 'optimizer.');
    # mscore keeps them
    out = []
    for p in params:
        name = p.name
        for part in ('single_opt.', 'network.', 'optimizer.'):
            name = name.replace(part, '')
        out.append(name)
    return out

def plain_name(name):
    return plain_names([type('P', (), {'name': name})()])[0]

def checksums(params):
    return {plain_name(p.name): float(np.abs(p.asnumpy()).sum()) for p in params}

def bn_cells(net):
    return [(n, c) for n, c in net.cells_and_names() if isinstance(c, nn.BatchNorm2d)]

def untouched_bns(bns):
    # BatchNorm cells whose moving statistics a train-mode forward did not update
    return [n for n, c in bns if np.allclose(c.moving_mean.asnumpy(), 0)
            and np.allclose(c.moving_variance.asnumpy(), 1)]

def loss_net(net):
    return nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean'))

class Pair(nn.Cell):
    # two parameters: a (4, 16, 3, 3) kernel (gradient-centralised) and a (4, 8) matrix
    def __init__(self):
        super().__init__()
        self.conv_w = ms.Parameter(T(np.linspace(-1, 1, 576).reshape(4, 16, 3, 3).astype(np.float32)), name='conv_w')
        self.mat = ms.Parameter(T(np.linspace(0, 1, 32).reshape(4, 8).astype(np.float32)), name='mat')
    def construct(self, x):
        return (self.conv_w.sum() + self.mat.sum()) * x

pair_grads = (T(np.cos(np.arange(576)).reshape(4, 16, 3, 3).astype(np.float32)),
              T(np.sin(np.arange(32)).reshape(4, 8).astype(np.float32)))
"""

CASES = {}
NO_NPU = ("MindSpore 2.10's BoostTrainOneStepWithLossScaleCell reads NPUGetFloatStatusV2, "
          "which has no CPU kernel; mscore checks overflow with all_finite on every backend")
NO_GC = ("MindSpore 2.10 has no CPU kernel for Centralization (gradient centralization); "
         "mscore centralises on every backend (tests/test_boost.py checks it against numpy)")


def case(name, code, differs=None, graph=False):
    """``differs``: why mscore deliberately does something else (its own test checks it);
    ``graph``: run in GRAPH_MODE here."""
    CASES[name] = {"code": code.strip("\n"), "differs": differs, "graph": graph}


def _attrs(level, config=None):
    arg = "" if config is None else f", {config!r}"
    return f"""
ab = boost.AutoBoost({level!r}{arg})
result = [ab.level, ab.boost_config, ab._fn_flag, ab._gc_flag, ab._param_groups,
          ab._freeze_type, ab._freeze_p, ab._total_steps, ab.gradient_groups, ab.device_number,
          ab.grad_accumulation_step, ab.rho, ab.gamma, ab.alpha, ab.sigma, ab.n_components,
          ab.pca_mat_path, ab.weight_load_dir, ab.timeout]
"""


# -- names and AutoBoost ----------------------------------------------------------------------
case("all_names", "result = sorted(boost.__all__)")
for lvl in ("O0", "O1", "O2"):
    case(f"autoboost_{lvl}", _attrs(lvl))
case("autoboost_default_level", _attrs("O0").replace("AutoBoost('O0')", "AutoBoost()"))
case("autoboost_unknown_level_is_O0", _attrs("O3"))
case("autoboost_auto_mode", _attrs("O1", {"boost": {"mode": "auto"}}))
case("autoboost_manual", _attrs("O0", {"boost": {"mode": "manual", "less_bn": True,
                                                 "adasum": True, "unknown": True}}))
case("autoboost_enable_all", _attrs("O0", {"boost": {"mode": "enable_all"}}))
case("autoboost_disable_all", _attrs("O2", {"boost": {"mode": "disable_all"}}))
case("autoboost_bad_mode", "boost.AutoBoost('O1', {'boost': {'mode': 'fast'}})")
case("autoboost_sections_O1", _attrs("O1", {
    "common": {"device_number": 2, "gradient_split_groups": [3, 6], "foo": 1},
    "less_bn": {"fn_flag": False, "gc_flag": False},
    "grad_freeze": {"param_groups": 4, "freeze_type": 0, "freeze_p": 0.5, "total_steps": 100},
    "grad_accumulation": {"grad_accumulation_step": 4}}))
case("autoboost_sections_O0_only_common", _attrs("O0", {
    "common": {"device_number": 2},
    "grad_freeze": {"param_groups": 4}, "less_bn": {"fn_flag": False}}))
case("autoboost_split_groups_int",
     "result = boost.AutoBoost('O1', {'common': {'gradient_split_groups': 5}}).gradient_groups",
     differs="MindSpore's list(5) raises TypeError although its docs accept an int; mscore "
             "takes an int as one split point")
case("autoboost_split_groups_str",
     "boost.AutoBoost('O1', {'common': {'gradient_split_groups': 'x'}})")
case("autoboost_singleton", """
boost.AutoBoost('O1')
result = [boost.AutoBoost('O2').level, boost.AutoBoost().level]
""", differs="MindSpore's AutoBoost is a process-wide singleton (the first level wins); "
             "mscore's is an ordinary class")
case("autoboost_manual_leaks", """
boost.AutoBoost('O1', {'boost': {'mode': 'manual', 'less_bn': False}})
boost.AutoBoost._instance = None
result = boost.AutoBoost('O1').boost_config['less_bn']
""", differs="MindSpore's manual mode writes into its shared level table, so later "
             "AutoBoost('O1') objects inherit it; mscore copies the table")

# -- gradient freezing ----------------------------------------------------------------------------
case("split_groups_plain", """
gf = boost.GradientFreeze(3, 1, 0.7, 100)
result = [plain_names(g) for g in gf.split_parameters_groups(nets['plain'](), 3)]
""")
case("split_groups_plain_more_groups_than_blocks", """
gf = boost.GradientFreeze(10, 1, 0.7, 100)
result = [len(g) for g in gf.split_parameters_groups(nets['plain'](), 10)]
""")
case("split_groups_bottleneck", """
gf = boost.GradientFreeze(4, 1, 0.7, 100)
result = [plain_names(g) for g in gf.split_parameters_groups(nets['bottleneck_three'](), 4)]
""")
case("freeze_sequence_one_group", """
result = boost.GradientFreeze(1, 0, 0.7, 10).generate_freeze_index_sequence(1, 0, 0.7, 10)
""")
case("freeze_sequence_continuous", """
gf = boost.GradientFreeze(4, 0, 0.7, 20)
result = [gf.generate_freeze_index_sequence(4, 0, 0.7, 20),
          gf.generate_freeze_index_sequence(10, 0, 0.7, 30),
          gf.generate_freeze_index_sequence(3, 0, 0.5, 7)]
""")
case("freeze_sequence_continuous_default_length", """
seq = boost.GradientFreeze(10, 0, 0.7, 65536).generate_freeze_index_sequence(10, 0, 0.7, 65536)
result = [len(seq), seq[:40]]
""")
case("freeze_sequence_interval_seeded", """
np.random.seed(0)
gf = boost.GradientFreeze(4, 1, 0.7, 40)
first = gf.generate_freeze_index_sequence(4, 1, 0.7, 40)
np.random.seed(3)
second = gf.generate_freeze_index_sequence(10, 1, 0.5, 60)
result = [first, second]
""")
case("freeze_sequence_interval_default_length", """
np.random.seed(0)
seq = boost.GradientFreeze(10, 1, 0.7, 65536).generate_freeze_index_sequence(10, 1, 0.7, 65536)
result = [len(seq), seq[:30], int(sum(1 for s in seq if s == 0))]
""")
case("freeze_sequence_bad_type",
     "boost.GradientFreeze(4, 2, 0.7, 10).generate_freeze_index_sequence(4, 2, 0.7, 10)")
case("freeze_sequence_p_one_continuous",
     "boost.GradientFreeze(4, 0, 1.0, 10).generate_freeze_index_sequence(4, 0, 1.0, 10)")
case("freeze_generate_plain", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
np.random.seed(0)
net2, opt2 = boost.GradientFreeze(3, 1, 0.7, 20).freeze_generate(net, opt)
result = [net2 is net, type(opt2).__name__, opt2.groups_num, len(opt2.opts),
          [type(o).__name__ for o in opt2.opts], [plain_names(o.parameters) for o in opt2.opts],
          [int(v) for v in opt2.train_strategy.asnumpy()],
          opt2.train_strategy.dtype == ms.int32]
""")
case("freeze_opt_defaults", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
f = boost.FreezeOpt(opt)
result = [f.groups_num, f.train_strategy, len(f.opts), plain_names(f.opts[0].parameters),
          [plain_name(m.name) for m in f.opts[0].moments][:2]]
""")
case("freeze_opt_strategy_list", """
net = nets['plain']()
ps = net.trainable_params()
f = boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps, ps[4:]], [0, 1, 0])
result = [f.groups_num, [int(v) for v in f.train_strategy.asnumpy()], f.train_strategy.dtype == ms.int32,
          [len(o.parameters) for o in f.opts]]
""")
case("freeze_opt_strategy_tensor", """
net = nets['plain']()
ps = net.trainable_params()
f = boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), (ps,), T(np.array([0, 0], np.int32)))
result = [int(v) for v in f.train_strategy.asnumpy()]
""")
case("freeze_opt_not_optimizer", "boost.FreezeOpt(nn.Dense(2, 2))")
case("freeze_opt_strategy_without_groups", """
net = nets['plain']()
boost.FreezeOpt(nn.Momentum(net.trainable_params(), 0.1, 0.9), None, [0])
""")
case("freeze_opt_groups_not_sequence", """
net = nets['plain']()
ps = net.trainable_params()
boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), {'a': ps})
""")
case("freeze_opt_group_not_sequence", """
net = nets['plain']()
ps = net.trainable_params()
boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps[0]])
""")
case("freeze_opt_strategy_float", """
net = nets['plain']()
ps = net.trainable_params()
boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps], [0, 1.0])
""")
case("freeze_opt_strategy_tensor_int64", """
net = nets['plain']()
ps = net.trainable_params()
boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps], T(np.array([0, 0], np.int64)))
""")
case("freeze_opt_strategy_bad_type", """
net = nets['plain']()
ps = net.trainable_params()
boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps], 'x')
""")
case("freeze_cell_nets", """
net = nets['plain']()
ps = net.trainable_params()
f = boost.FreezeOpt(nn.Momentum(ps, 0.1, 0.9), [ps, ps[6:]], [0, 1])
grad = ms.ops.GradOperation(get_by_list=True, sens_param=True)
cells = boost.freeze_cell(False, loss_net(net), f, 1.0, grad, False, None, None, 1)
result = [type(cells).__name__, len(cells), [len(c.parameters) for c in cells]]
""")
case("freeze_train_losses", """
net = fill(nets['plain']())
ln = loss_net(net)
opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
ln2, opt2 = boost.GradientFreeze(3, 0, 0.5, 10).freeze_generate(ln, opt)
train = boost.BoostTrainOneStepCell(ln2, opt2)
train.set_train()
x, y = inputs()
losses = [float(train(x, y).asnumpy()) for _ in range(6)]
result = [losses, int(train.step.asnumpy()), checksums(net.trainable_params())]
""")

# -- less BN ----------------------------------------------------------------------------------
case("common_head_last_fn", """
CH = boost.less_batch_normalization.CommonHeadLastFN
w = np.array([[1.0, 2.0, 2.0], [0.0, 3.0, 4.0], [1.0, 0.0, 0.0], [-1.0, 1.0, 0.5]], np.float32)
cell = CH(3, 4, T(w), T(np.array([0.5, -0.5, 0.0, 1.0], np.float32)), True)
x = T(np.array([[180, 234, 154], [244, 48, 247]], np.float32))
tiny = T(np.array([[1e-3, 0.0, 0.0]], np.float32))
result = [cell(x).asnumpy(), cell(tiny).asnumpy(), sorted(p.name for p in cell.get_parameters()),
          cell.multiplier.asnumpy()]
""")
case("common_head_last_fn_no_bias", """
CH = boost.less_batch_normalization.CommonHeadLastFN
w = np.array([[1.0, 2.0, 2.0], [0.0, 3.0, 4.0]], np.float32)
cell = CH(3, 2, T(w), 'zeros', False)
result = [cell(T(np.array([[1.0, 1.0, 1.0]], np.float32))).asnumpy(),
          sorted(p.name for p in cell.get_parameters())]
""")
case("less_bn_fn_conversion", """
net = fill(nets['plain']())
w_fc = net.fc.weight.asnumpy().copy()
lb = boost.LessBN(net, fn_flag=True)
x, _ = inputs()
lb.set_train(False)
result = [type(net.fc).__name__, type(net.fc1).__name__, plain_names(net.trainable_params()),
          bool(np.allclose(net.fc.weight.asnumpy(), w_fc)), lb(x).asnumpy()]
""")
case("less_bn_default_keeps_dense", """
net = nets['plain']()
lb = boost.LessBN(net)
result = [type(net.fc).__name__, lb.network is net]
""")
for _name in ("bottleneck_project", "bottleneck_pool", "bottleneck_identity", "bottleneck_three",
              "basic", "basic_pool", "basic_conv_bias", "inverted", "dense"):
    case(f"less_bn_removes_{_name}", f"""
net = fill(nets[{_name!r}]())
bns = bn_cells(net)
lb = boost.LessBN(net)
lb.set_train(True)
x, _ = inputs()
out = lb(x)
result = [untouched_bns(bns), out.asnumpy()]
""", graph=True)
case("less_bn_eval_output", """
net = fill(nets['basic']())
lb = boost.LessBN(net)
lb.set_train(False)
x, _ = inputs()
result = lb(x).asnumpy()
""", graph=True)

# -- optimizer and parameter processing --------------------------------------------------------
case("optimizer_process_gc_groups", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
op = boost.OptimizerProcess(opt)
groups = boost.ParameterProcess.generate_group_params(net.trainable_params(), op.origin_params)
op.origin_params = groups
op.add_grad_centralization(net)
new = op.generate_new_optimizer()
result = [[(plain_names(g['params']), g.get('grad_centralization', False)) for g in op.origin_params],
          type(new).__name__, list(new.grad_centralization_flags), op.learning_rate,
          sorted(op.opt_init_args.items())]
""")
case("optimizer_process_flat_params", """
net = nets['plain']()
op = boost.OptimizerProcess(nn.Momentum(net.trainable_params(), 0.1, 0.9))
op.add_grad_centralization(net)
result = [type(op.origin_params).__name__, len(op.origin_params)]
""")
case("optimizer_process_empty", """
net = nets['plain']()
op = boost.OptimizerProcess(nn.Momentum(net.trainable_params(), 0.1, 0.9))
op.origin_params = []
op.add_grad_centralization(net)
""")
case("optimizer_process_bad_params", """
net = nets['plain']()
op = boost.OptimizerProcess(nn.Momentum(net.trainable_params(), 0.1, 0.9))
op.origin_params = [1, 2]
op.add_grad_centralization(net)
""")
case("parameter_process_groups", """
net = nets['plain']()
ps = net.trainable_params()
flat = boost.ParameterProcess.generate_group_params(ps[:2], ps)
grouped = boost.ParameterProcess.generate_group_params(
    ps[:5], [{'params': ps[:3], 'lr': 0.5}, {'params': ps[3:], 'weight_decay': 0.1}])
result = [[plain_names(g['params']) for g in flat],
          [(plain_names(g['params']), sorted(k for k in g if k != 'params')) for g in grouped]]
""")
case("parameter_process_extra_params", """
net = nets['plain']()
ps = net.trainable_params()
grouped = boost.ParameterProcess.generate_group_params(
    ps, [{'params': ps[:2], 'lr': 0.5}, {'params': ps[2:4]}])
result = [(plain_names(g['params']), sorted(k for k in g if k != 'params')) for g in grouped]
""")
case("parameter_process_empty", "boost.ParameterProcess.generate_group_params([], [])")
case("parameter_process_bad", "boost.ParameterProcess.generate_group_params([], [1])")
case("parameter_process_assign", """
net = nets['plain']()
pp = boost.ParameterProcess()
ps = pp.assign_parameter_group(net.trainable_params())
qq = boost.ParameterProcess().assign_parameter_group(nets['plain']().trainable_params(), [2, 5])
result = [[p.comm_fusion for p in ps], [p.comm_fusion for p in qq],
          boost.ParameterProcess().assign_parameter_group([]), pp._parameter_indices]
""")
case("grad_centralization_step", """
net = Pair()
ps = net.trainable_params()
opt = nn.Momentum([{'params': ps, 'grad_centralization': True}], 0.1, 0.9)
opt(pair_grads)
result = [p.asnumpy() for p in ps]
""", differs=NO_GC)
case("grad_centralization_with_decay", """
net = Pair()
ps = net.trainable_params()
opt = nn.SGD([{'params': ps[:1], 'grad_centralization': True, 'weight_decay': 0.5},
              {'params': ps[1:]}], 0.1)
opt(pair_grads)
opt(pair_grads)
result = [p.asnumpy() for p in ps]
""", differs=NO_GC)

# -- gradient accumulation ---------------------------------------------------------------------
case("gradient_accumulation", """
net = Pair()
ps = net.trainable_params()
acc = boost.GradientAccumulation(2, nn.SGD(ps, 0.5))
seen = []
for i in range(4):
    g = tuple(x * float(i + 1) for x in pair_grads)
    loss = acc(T(np.float32(i)), g)
    seen.append([float(loss.asnumpy()), float(ps[1].asnumpy()[0, 1]),
                 float(acc._grad_accumulation[1].asnumpy()[0, 1]), int(acc._accumulation_step.asnumpy())])
result = [seen, [plain_name(p.name) for p in acc._grad_accumulation]]
""")

# -- train cells --------------------------------------------------------------------------------
case("boost_train_cell_plain_losses", """
net = fill(nets['plain']())
opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
train = boost.BoostTrainOneStepCell(loss_net(net), opt, 1.0)
train.set_train()
x, y = inputs()
result = [[float(train(x, y).asnumpy()) for _ in range(3)], train.freeze,
          train.use_grad_accumulation, train.enable_adasum, train.enable_dim_reduce,
          train.max_accumulation_step]
""")
case("boost_train_cell_default_sens", """
net = fill(nets['plain']())
train = boost.BoostTrainOneStepCell(loss_net(net), nn.Momentum(net.trainable_params(), 0.05, 0.9))
train.set_train()
x, y = inputs()
out = train(x, y)
result = out if out is None else 'a loss'
""", differs="MindSpore 2.10's BoostTrainOneStepCell returns None when 'sens' is not given "
             "(the loss is dropped on that path); mscore returns the loss")
case("boost_train_cell_sens_type", """
net = nets['plain']()
boost.BoostTrainOneStepCell(loss_net(net), nn.Momentum(net.trainable_params(), 0.1, 0.9), 'x')
""", differs="MindSpore accepts a str 'sens' when the cell is built (and fails at the first "
             "step); mscore's TrainOneStepCell refuses it with TypeError")
case("boost_train_cell_grad_accumulation", """
ab = boost.AutoBoost('O0', {'boost': {'mode': 'manual', 'grad_accumulation': True},
                            'grad_accumulation': {'grad_accumulation_step': 2}})
net = fill(nets['plain']())
opt = nn.SGD(net.trainable_params(), 0.05)
train = boost.BoostTrainOneStepCell(loss_net(net), opt, 1.0)
train.set_train()
x, y = inputs()
losses = [float(train(x, y).asnumpy()) for _ in range(4)]
result = [losses, train.use_grad_accumulation, train.max_accumulation_step,
          checksums(net.trainable_params())]
""", graph=True)
case("boost_loss_scale_cell_tensor", """
net = fill(nets['plain']())
opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
train = boost.BoostTrainOneStepWithLossScaleCell(loss_net(net), opt, T(np.float32(1024.0)))
train.set_train()
x, y = inputs()
outs = [train(x, y) for _ in range(2)]
result = [[float(o[0].asnumpy()), bool(o[1].asnumpy()), float(o[2].asnumpy())] for o in outs]
""", differs=NO_NPU)
case("boost_loss_scale_cell_dynamic", """
net = fill(nets['plain']())
opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
manager = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0 ** 10, scale_factor=2, scale_window=2)
train = boost.BoostTrainOneStepWithLossScaleCell(loss_net(net), opt, scale_sense=manager)
train.set_train()
x, y = inputs()
outs = [train(x, y) for _ in range(3)]
result = [[float(o[0].asnumpy()), bool(o[1].asnumpy()), float(o[2].asnumpy())] for o in outs]
""", differs=NO_NPU)
case("boost_loss_scale_cell_bad_shape", """
net = nets['plain']()
boost.BoostTrainOneStepWithLossScaleCell(loss_net(net), nn.Momentum(net.trainable_params(), 0.1, 0.9),
                                         T(np.ones((2,), np.float32)))
""")
case("boost_loss_scale_cell_bad_type", """
net = nets['plain']()
boost.BoostTrainOneStepWithLossScaleCell(loss_net(net), nn.Momentum(net.trainable_params(), 0.1, 0.9), 2.0)
""")

# -- O1 / O2 end to end --------------------------------------------------------------------------
_TRAIN = """
net = fill(nets[{net!r}]())
ab = boost.AutoBoost({level!r}, {config!r})
opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
np.random.seed(0)
net2, opt2 = ab.network_auto_process_train(net, opt)
train = boost.BoostTrainOneStepCell(loss_net(net2), opt2, 1.0)
train.set_train()
x, y = inputs(batch=8)
losses = [float(train(x, y).asnumpy()) for _ in range(8)]
result = [losses, type(net2).__name__, type(opt2).__name__, getattr(opt2, 'adasum', None),
          train.enable_adasum, checksums(net.trainable_params())]
"""
_NO_GC_FREEZE = {"less_bn": {"gc_flag": False},
                 "grad_freeze": {"param_groups": 2, "freeze_type": 0, "freeze_p": 0.5,
                                 "total_steps": 8}}
case("o1_train_basic", _TRAIN.format(net="basic", level="O1", config=_NO_GC_FREEZE), graph=True)
case("o1_train_plain", _TRAIN.format(net="plain", level="O1", config=_NO_GC_FREEZE), graph=True)
case("o1_train_plain_defaults", _TRAIN.format(net="plain", level="O1", config=""), graph=True,
     differs=NO_GC)
case("o2_train_standalone", _TRAIN.format(net="basic", level="O2", config=_NO_GC_FREEZE),
     graph=True)
case("o1_eval_network", """
net = fill(nets['basic']())
ab = boost.AutoBoost('O1')
ev = ab.network_auto_process_eval(net)
ev.set_train(False)
x, _ = inputs()
result = [type(ev).__name__, type(net.head.fc).__name__, ev(x).asnumpy()]
""", graph=True)

# -- build_train_network and Model ----------------------------------------------------------------
case("build_train_network_boost_O3", """
net = nets['plain']()
ms.amp.build_train_network(net, nn.Momentum(net.trainable_params(), 0.1, 0.9), boost_level='O3')
""")
case("build_train_network_boost_int", """
net = nets['plain']()
ms.amp.build_train_network(net, nn.Momentum(net.trainable_params(), 0.1, 0.9), boost_level=1)
""")
case("build_train_network_boost_cell", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
t = ms.amp.build_train_network(net, opt, nn.SoftmaxCrossEntropyWithLogits(sparse=True), boost_level='O1')
result = type(t).__name__
""")
case("build_train_network_boost_fixed_scale", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
t = ms.amp.build_train_network(net, opt, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                               boost_level='O2',
                               loss_scale_manager=ms.amp.FixedLossScaleManager(64.0, False))
result = [type(t).__name__, t.sens]
""")
case("model_boost_with_metrics", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), opt, metrics={'acc'},
                   boost_level='O1')
result = [type(m.train_network).__name__, type(m.train_network.optimizer).__name__,
          type(m.predict_network).__name__, type(net.fc).__name__]
""")
case("model_boost_without_metrics", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), opt, boost_level='O1')
result = [type(m.train_network).__name__, type(m.train_network.optimizer).__name__]
""", differs="MindSpore's Model boosts only with metrics or an eval_network (else it warns "
             "and trains unboosted); mscore boosts whenever an optimizer is given")
case("model_boost_config_dict", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), opt, metrics={'acc'},
                   boost_level='O1', boost_config_dict={'boost': {'mode': 'manual', 'less_bn': False}})
result = [type(m.train_network.optimizer).__name__, type(m.predict_network).__name__]
""")
case("model_boost_level_bad", """
net = nets['plain']()
ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
               nn.Momentum(net.trainable_params(), 0.1, 0.9), boost_level='O5')
""")
case("build_train_network_boost_none", """
net = nets['plain']()
ms.amp.build_train_network(net, nn.Momentum(net.trainable_params(), 0.1, 0.9), boost_level=None)
""")
case("model_boost_level_int", """
net = nets['plain']()
ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
               nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={'acc'}, boost_level=1)
""")
case("model_boost_level_none", """
net = nets['plain']()
ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
               nn.Momentum(net.trainable_params(), 0.1, 0.9), boost_level=None)
""")
case("model_boost_level_bad_without_optimizer", """
net = nets['plain']()
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), boost_level='O5')
result = type(m.train_network).__name__
""", differs="MindSpore checks boost_level only in build_train_network, so without an "
             "optimizer a bad level passes unnoticed; mscore's Model checks it up front")
case("model_boost_without_optimizer", """
net = nets['plain']()
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), metrics={'acc'},
                   boost_level='O1')
result = [type(m.train_network).__name__, type(m.predict_network).__name__, type(net.fc).__name__]
""")
case("model_acc_level", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), opt, metrics={'acc'},
                   acc_level='O1')
result = [type(m.train_network).__name__, type(m.train_network.optimizer).__name__]
""")
case("model_acc_level_bad", """
net = nets['plain']()
ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
               nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={'acc'}, acc_level='O4')
""")
case("model_boost_config_enable_all_at_O0", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
m = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), opt, metrics={'acc'},
                   boost_config_dict={'boost': {'mode': 'enable_all'}})
result = [type(m.train_network).__name__, type(m.train_network.optimizer).__name__]
""")
case("model_boost_config_dict_not_a_dict", """
net = nets['plain']()
ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True),
               nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={'acc'}, boost_level='O1',
               boost_config_dict=['x'])
""", differs="MindSpore fails reaching for the list's .items() (AttributeError); mscore "
             "checks the type up front: TypeAttributeError, both TypeError and AttributeError")

# -- AdaSum, DimReduce, GroupLossScaleManager without a job --------------------------------------
case("adasum_without_init", """
net = nets['plain']()
boost.AdaSum(0, 1, 2, tuple(net.trainable_params()))
""")
case("adasum_flag_standalone", """
net = nets['plain']()
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
opt.adasum = True
train = boost.BoostTrainOneStepCell(loss_net(net), opt)
result = [train.enable_adasum, train.reducer_flag]
""")
case("group_loss_scale_manager", """
m = boost.GroupLossScaleManager(4096, [])
result = [m.get_loss_scale(), m.get_update_cell() is m, m.loss_scale_groups, m.loss_scale_number]
""")


def signatures(module):
    """``inspect.signature`` of every public callable (classes: of ``__init__``)."""
    out = {}
    for name in sorted(module.__all__):
        obj = getattr(module, name)
        target = obj.__init__ if inspect.isclass(obj) else obj
        try:
            out[name] = str(inspect.signature(target))
        except (TypeError, ValueError):
            out[name] = None
    return out


def main():
    import mindspore as ms
    import mindspore.boost.boost as boost_module
    from mindspore import boost, nn
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    levels = copy.deepcopy(boost_module._boost_config_level)
    out = {"generator": "tests/data/make_boost_fixtures.py", "mindspore": ms.__version__,
           "numpy": np.__version__, "prelude": PRELUDE.strip("\n"),
           "signatures": signatures(boost), "cases": {}}
    for name, spec in CASES.items():
        boost.AutoBoost._instance = None
        boost_module._boost_config_level.clear()
        boost_module._boost_config_level.update(copy.deepcopy(levels))
        ms.set_context(mode=ms.GRAPH_MODE if spec["graph"] else ms.PYNATIVE_MODE)
        ns = {"boost": boost, "nn": nn, "ms": ms, "T": ms.Tensor, "np": np,
              "nets": boost_nets.build(ms), "fill": partial(boost_nets.fill, ms),
              "inputs": partial(boost_nets.inputs, ms)}
        exec(PRELUDE, ns)
        entry = dict(spec)
        try:
            exec(spec["code"], ns)
            entry["result"] = encode(ns.get("result"))
        except Exception as exc:
            entry["error"] = {"type": type(exc).__name__, "message": str(exc)[:300]}
        out["cases"][name] = entry
        print(name, "error" if "error" in entry else "ok", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
