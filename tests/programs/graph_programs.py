"""GRAPH_MODE idioms of MindSpore's tutorials and model zoo, as small whole programs written
for this corpus (data made here), run unchanged on MindSpore 2.10 and on mscore.

Each program takes the framework's top-level module, runs in GRAPH_MODE and returns a list of
floats (the loss of each step, or a function's results). ``record_graph_oracle.py`` records
MindSpore's into ``mindspore_graph_results.json``; ``tests/test_graph_programs.py`` compares
mscore's on every backend. The idioms: keyword arguments to ``construct``; custom
``nn.Optimizer`` s that assign into ``ParameterTuple`` s (``ops.Assign``, ``ops.assign``) and
return the assignment, with ``ParameterTuple.clone`` state; a ``TrainOneStepCell`` subclass
calling ``ops.GradOperation`` with ``F.depend``; ``ms.jit`` functions with Python control
flow on constants.
"""
import numpy as np
from programs import fixed_weights


def _regression_data(n=32, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def _steps(ms, step, x, y, batches=4):
    n = len(x) // batches
    return [float(step(ms.Tensor(x[i * n:(i + 1) * n]), ms.Tensor(y[i * n:(i + 1) * n]))
                  .asnumpy()) for i in range(batches)]


# -- the linear-regression tutorial's custom optimizer: Assign into a cloned ParameterTuple --
def custom_momentum(ms):
    nn, ops = ms.nn, ms.ops

    class MyMomentum(nn.Optimizer):
        def __init__(self, params, learning_rate, momentum=0.9):
            super().__init__(learning_rate, params)
            self.momentum = ms.Parameter(ms.Tensor(momentum, ms.float32), name="momentum")
            self.moments = self.parameters.clone(prefix="moments", init="zeros")
            self.assign = ops.Assign()

        def construct(self, gradients):
            lr = self.get_lr()
            params = self.parameters
            for i in range(len(params)):
                self.assign(self.moments[i], self.moments[i] * self.momentum + gradients[i])
                update = params[i] - self.moments[i] * lr
                self.assign(params[i], update)
            return params

    net = nn.Dense(3, 1)
    fixed_weights(ms, net)
    loss = nn.WithLossCell(net, nn.MSELoss())
    step = nn.TrainOneStepCell(loss, MyMomentum(net.trainable_params(), 0.05))
    x, y = _regression_data()
    return _steps(ms, step, x, y) + _steps(ms, step, x, y)


# -- functional ops.assign, the optimizer's result through F.depend ----------------------------
def _functional(ms):
    """``mindspore.ops.functional`` (``F``) of ``ms``."""
    import importlib
    return importlib.import_module(ms.__name__ + ".ops.functional")


def depend_train_cell(ms):
    nn, ops = ms.nn, ms.ops
    F = _functional(ms)

    class PlainSGD(nn.Optimizer):
        def __init__(self, params, learning_rate):
            super().__init__(learning_rate, params)

        def construct(self, gradients):
            lr = self.get_lr()
            params = self.parameters
            out = ()
            for i in range(len(params)):
                out = out + (ops.assign(params[i], params[i] - lr * gradients[i]),)
            return out

    class TrainStep(nn.TrainOneStepCell):
        """A TrainOneStepCell subclass with its own GradOperation, as model-zoo scripts
        write it."""

        def __init__(self, network, optimizer, sens=1.0):
            super().__init__(network, optimizer, sens)
            self.grad = ops.GradOperation(get_by_list=True, sens_param=True)

        def construct(self, data, label):
            weights = self.weights
            loss = self.network(data, label)
            sens = ops.fill(loss.dtype, loss.shape, self.sens)
            grads = self.grad(self.network, weights)(data, label, sens)
            return F.depend(loss, self.optimizer(grads))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(3, 8)
            self.act = nn.Tanh()
            self.fc2 = nn.Dense(8, 1)

        def construct(self, x):
            return self.fc2(self.act(self.fc1(x)))

    net = Net()
    fixed_weights(ms, net, scale=0.3)
    step = TrainStep(nn.WithLossCell(net, nn.MSELoss()), PlainSGD(net.trainable_params(), 0.1))
    x, y = _regression_data(seed=1)
    return _steps(ms, step, x, y) + _steps(ms, step, x, y)


# -- keyword arguments to construct -------------------------------------------------------------
def keyword_construct(ms):
    nn, ops = ms.nn, ms.ops

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 4)
            self.out = nn.Dense(4, 1)

        def construct(self, x, scale=1.0, bias=None):
            h = ops.relu(self.fc(x)) * scale
            if bias is not None:
                h = h + bias
            return self.out(h)

    class WithLoss(nn.Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.loss = nn.MSELoss()

        def construct(self, x, y):
            return self.loss(self.net(x, scale=0.5, bias=ms.Tensor(0.1, ms.float32)), y)

    net = Net()
    fixed_weights(ms, net, scale=0.4)
    x, y = _regression_data(seed=2)
    results = [float(v) for v in
               net(ms.Tensor(x[:2]), scale=2.0).asnumpy().ravel()]
    results += [float(v) for v in
                net(ms.Tensor(x[:2]), bias=ms.Tensor(np.ones(4, np.float32))).asnumpy().ravel()]
    step = nn.TrainOneStepCell(WithLoss(net), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    return results + _steps(ms, step, x, y)


# -- ms.jit with Python control flow on constants -----------------------------------------------
def jit_constant_control_flow(ms):
    ops = ms.ops

    @ms.jit
    def reduce(x, mode="sum", times=2):
        out = x
        for _ in range(times):          # unrolled: times is a constant
            out = out * 2
        if mode == "sum":               # decided when compiled: mode is a constant
            return ops.reduce_sum(out)
        if mode == "max":
            return ops.reduce_max(out)
        return ops.reduce_mean(out)

    x = ms.Tensor(np.array([[1.0, -2.0], [3.0, 0.5]], np.float32))
    return [float(reduce(x).asnumpy()), float(reduce(x, "max").asnumpy()),
            float(reduce(x, "mean", 3).asnumpy()), float(reduce(x, mode="max", times=1)
                                                         .asnumpy())]


GRAPH_PROGRAMS = {"custom_momentum": custom_momentum, "depend_train_cell": depend_train_cell,
                  "keyword_construct": keyword_construct,
                  "jit_constant_control_flow": jit_constant_control_flow}
