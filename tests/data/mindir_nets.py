"""The networks of the MINDIR fixtures, written once for MindSpore and mscore alike.

``build(ms)`` takes the framework module (``mindspore`` or ``mscore``: the same source runs on
both, which is the point of mscore) and returns ``{name: (make_net, make_inputs)}``. Weights
and BatchNorm statistics are set from a fixed numpy seed, keyed by ``Parameter.name``, so both
frameworks build the same numbers. The ``*_o2`` entries are the same networks after
``amp.auto_mixed_precision(net, "O2")``.

``MLP_WIDTH`` is the hidden width of the Automatic Mix Precision tutorial's network in the checked-in fixtures (the seed
uses 512; the make scripts take ``--width 512`` to check the full-size network by hand).
"""
import numpy as np

MLP_WIDTH = 8
BATCH = 2


def _fill(ms, net, seed):
    """Set every parameter of ``net`` from ``seed`` (deterministic, framework-independent)."""
    rng = np.random.default_rng(seed)
    params = sorted(net.parameters_and_names(), key=lambda item: item[1].name)
    for _, p in params:
        shape = tuple(p.shape)
        name = p.name
        if name.endswith("moving_variance"):
            value = rng.uniform(0.5, 2.0, shape)
        elif name.endswith("moving_mean"):
            value = rng.standard_normal(shape) * 0.5
        elif name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            value = rng.standard_normal(shape) / np.sqrt(fan_in)
        p.set_data(ms.Tensor(value.astype(np.float32)))
    return net


def build(ms, mlp_width=MLP_WIDTH):
    """``{name: (make_net, make_inputs)}`` for framework ``ms``."""
    nn, ops = ms.nn, ms.ops

    class Network(nn.Cell):
        """The Automatic Mix Precision tutorial's network (784-w-w-10 with ReLU)."""

        def __init__(self, width):
            super().__init__()
            self.flatten = nn.Flatten()
            self.dense_relu_sequential = nn.SequentialCell(
                nn.Dense(28 * 28, width), nn.ReLU(),
                nn.Dense(width, width), nn.ReLU(),
                nn.Dense(width, 10))

        def construct(self, x):
            x = self.flatten(x)
            return self.dense_relu_sequential(x)

    class LeNetBN(nn.Cell):
        """A LeNet-like conv net with BatchNorm."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True)
            self.bn1 = nn.BatchNorm2d(6)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
            self.bn2 = nn.BatchNorm2d(16)
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 4 * 4, 16)
            self.fc2 = nn.Dense(16, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.bn1(self.conv1(x))))
            x = self.pool(self.relu(self.bn2(self.conv2(x))))
            return self.fc2(self.relu(self.fc1(self.flatten(x))))

    class ManyOps(nn.Cell):
        """Padded and 'same' convolutions and pooling, BatchNorm1d, Dense over a 3-d input,
        elementwise math, comparisons, reductions, shape ops and several outputs."""

        def __init__(self):
            super().__init__()
            self.conv_pad = nn.Conv2d(2, 3, 3, pad_mode="pad", padding=(1, 0, 2, 1),
                                      has_bias=True)
            self.conv_same = nn.Conv2d(2, 3, 3, stride=2, pad_mode="same")
            self.max_same = nn.MaxPool2d(3, 2, pad_mode="same")
            self.avg = nn.AvgPool2d(2, 2)
            self.bn = nn.BatchNorm1d(4)
            self.fc = nn.Dense(4, 3)
            self.softmax = nn.Softmax(-1)
            self.log_softmax = nn.LogSoftmax(1)

        def construct(self, x, y):
            c = self.conv_pad(x)                                   # (2, 3, 4, 8)
            s = self.max_same(self.conv_same(x))                   # (2, 3, 2, 2)
            a = self.avg(c)                                        # (2, 3, 2, 4)
            d = ops.div(ops.sub(ops.mul(a, 2.0), 0.5), ops.add(ops.abs(a), 1.0))
            e = ops.exp(ops.neg(d)) + ops.log(ops.abs(d) + 1) + ops.sqrt(ops.abs(d))
            e = e + ops.tanh(d) + ops.sin(d) + ops.cos(d) + ops.erf(d) + ops.sign(d)
            e = e + ops.floor(d) + ops.ceil(d) + ops.pow(ops.abs(d), 2.0)
            f = ops.maximum(e, d) + ops.minimum(e, 1.0)
            g = ops.select(f > 1.5, f, d)
            t = ops.transpose(ops.reshape(g, (2, 3, 8)), (0, 2, 1))     # (2, 8, 3)
            r = ops.sum(t, 1, keepdim=True) + ops.amax(t, 1, True) + ops.amin(t, 1, True)
            bt = ops.broadcast_to(r, (2, 4, 3))
            cat = ops.concat((bt, t), 1)                           # (2, 12, 3)
            m = ops.matmul(cat, ops.transpose(cat, (0, 2, 1)))     # (2, 12, 12)
            z = self.fc(self.bn(y))                                # (2, 3)
            h = self.softmax(z) + self.log_softmax(z)
            am = ops.argmax(cat, 1)
            return m, s, h, am, ops.cast(r, ms.float16)

    def inputs_image(seed):
        x = np.random.default_rng(seed).standard_normal((BATCH, 1, 28, 28))
        return (ms.Tensor(x.astype(np.float32)),)

    def inputs_many(seed):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((BATCH, 2, 5, 7)).astype(np.float32)
        y = rng.standard_normal((BATCH, 4)).astype(np.float32)
        return ms.Tensor(x), ms.Tensor(y)

    def made(cls, seed, *args, amp=False):
        def make():
            net = _fill(ms, cls(*args), seed)
            net.set_train(False)
            if amp:
                net = ms.amp.auto_mixed_precision(net, "O2")
                net.set_train(False)
            return net
        return make

    return {
        "mlp": (made(Network, 4, mlp_width), lambda: inputs_image(40)),
        "mlp_o2": (made(Network, 4, mlp_width, amp=True), lambda: inputs_image(40)),
        "lenet_bn": (made(LeNetBN, 5), lambda: inputs_image(50)),
        "lenet_bn_o2": (made(LeNetBN, 5, amp=True), lambda: inputs_image(50)),
        "many_ops": (made(ManyOps, 6), lambda: inputs_many(60)),
    }
