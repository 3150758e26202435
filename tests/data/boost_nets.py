"""The networks of the boost fixtures, written once for MindSpore and mscore alike.

``build(ms)`` takes the framework module (``mindspore`` or ``mscore``) and returns
``{name: make_net}``; :func:`fill` sets every parameter from a fixed numpy seed keyed by
``Parameter.name``, so both frameworks start from the same numbers. The residual networks
are the shapes MindSpore's less-BN graph pass looks for (ResNet bottleneck and basic blocks,
MobileNetV2's inverted residual, DenseNet's concatenating layers) plus near misses (a
convolution with a bias, a block behind a pooling layer). ``Plain`` is a small conv net with
two Dense layers (gradient-freeze grouping, the Dense to FN conversion).

Every ``construct`` names its first argument ``self``: MindSpore's graph compiler reads it.
"""
import numpy as np

IN_CHANNELS, SIZE, CLASSES, BATCH = 3, 8, 10, 4


def fill(ms, net, seed=0):
    """Set every parameter of ``net`` from ``seed`` (deterministic, framework-independent)."""
    rng = np.random.default_rng(seed)
    for p in sorted(net.get_parameters(), key=lambda p: p.name):
        shape = tuple(p.shape)
        if p.name.endswith("moving_variance"):
            value = np.ones(shape)
        elif p.name.endswith("moving_mean"):
            value = np.zeros(shape)
        elif p.name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, shape)
        elif p.name.endswith("beta") or p.name.endswith("bias"):
            value = rng.standard_normal(shape) * 0.1
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            value = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        p.set_data(ms.Tensor(value.astype(np.float32)))
    return net


def inputs(ms, seed=1, batch=BATCH):
    """``(x, label)``: a CIFAR-shaped batch and int32 class labels."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, IN_CHANNELS, SIZE, SIZE)).astype(np.float32)
    y = rng.integers(0, CLASSES, batch).astype(np.int32)
    return ms.Tensor(x), ms.Tensor(y)


def build(ms):
    """``{name: make_net}`` for framework ``ms``."""
    nn = ms.nn

    def conv(cin, cout, k, group=1, bias=False):
        return nn.Conv2d(cin, cout, k, has_bias=bias, group=group)

    class Bottleneck(nn.Cell):
        def __init__(self, cin, width, project):
            super().__init__()
            self.conv1 = conv(cin, width, 1)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = conv(width, width, 3)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = conv(width, width * 4, 1)
            self.bn3 = nn.BatchNorm2d(width * 4)
            self.relu = nn.ReLU()
            self.project = project
            if project:
                self.down = conv(cin, width * 4, 1)
                self.bnd = nn.BatchNorm2d(width * 4)

        def construct(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            if self.project:
                x = self.bnd(self.down(x))
            return self.relu(y + x)

    class Basic(nn.Cell):
        def __init__(self, c, project, bias=False):
            super().__init__()
            self.conv1 = conv(c, c, 3, bias=bias)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = conv(c, c, 3)
            self.bn2 = nn.BatchNorm2d(c)
            self.relu = nn.ReLU()
            self.project = project
            if project:
                self.down = conv(c, c, 1)
                self.bnd = nn.BatchNorm2d(c)

        def construct(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            if self.project:
                x = self.bnd(self.down(x))
            return self.relu(y + x)

    class Inverted(nn.Cell):
        """MobileNetV2's block: expand (1x1, ReLU6), depthwise 3x3 (ReLU6), project (1x1)."""

        def __init__(self, c, expand):
            super().__init__()
            hidden = c * expand
            self.conv1 = conv(c, hidden, 1)
            self.bn1 = nn.BatchNorm2d(hidden)
            self.conv2 = conv(hidden, hidden, 3, group=hidden)
            self.bn2 = nn.BatchNorm2d(hidden)
            self.conv3 = conv(hidden, c, 1)
            self.bn3 = nn.BatchNorm2d(c)
            self.relu6 = nn.ReLU6()

        def construct(self, x):
            y = self.relu6(self.bn1(self.conv1(x)))
            y = self.relu6(self.bn2(self.conv2(y)))
            return x + self.bn3(self.conv3(y))

    class DenseLayer(nn.Cell):
        """DenseNet's layer: BN-ReLU-1x1, BN-ReLU-3x3, joined to its input."""

        def __init__(self, cin, growth):
            super().__init__()
            self.bn1 = nn.BatchNorm2d(cin)
            self.conv1 = conv(cin, 2 * growth, 1)
            self.bn2 = nn.BatchNorm2d(2 * growth)
            self.conv2 = conv(2 * growth, growth, 3)
            self.relu = nn.ReLU()
            self.cat = ms.ops.Concat(1)

        def construct(self, x):
            y = self.conv1(self.relu(self.bn1(x)))
            y = self.conv2(self.relu(self.bn2(y)))
            return self.cat((x, y))

    class Head(nn.Cell):
        def __init__(self, c):
            super().__init__()
            self.pool = nn.AvgPool2d(SIZE, SIZE)
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(c, CLASSES)

        def construct(self, x):
            return self.fc(self.flatten(self.pool(x)))

    class Net(nn.Cell):
        """stem (conv-bn-relu [, maxpool]) -> blocks -> head."""

        def __init__(self, blocks, width, pool=False, stem_relu6=False):
            super().__init__()
            self.conv = conv(IN_CHANNELS, width, 3)
            self.bn = nn.BatchNorm2d(width)
            self.act = nn.ReLU6() if stem_relu6 else nn.ReLU()
            self.pool = pool
            self.maxpool = nn.MaxPool2d(1, 1)
            self.blocks = nn.SequentialCell(blocks)
            self.head = Head(width if not isinstance(blocks[-1], DenseLayer) else
                             width + 4 * len(blocks))

        def construct(self, x):
            x = self.act(self.bn(self.conv(x)))
            if self.pool:
                x = self.maxpool(x)
            return self.head(self.blocks(x))

    class Plain(nn.Cell):
        """conv-bn-relu x2, then two Dense layers (the last becomes FN under LessBN)."""

        def __init__(self):
            super().__init__()
            self.conv1 = conv(IN_CHANNELS, 16, 3)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = conv(16, 16, 3)
            self.bn2 = nn.BatchNorm2d(16)
            self.relu = nn.ReLU()
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * SIZE * SIZE, 32)
            self.fc = nn.Dense(32, CLASSES)

        def construct(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.relu(self.bn2(self.conv2(x)))
            return self.fc(self.relu(self.fc1(self.flatten(x))))

    return {
        "bottleneck_project": lambda: Net([Bottleneck(16, 4, True)], 16),
        "bottleneck_pool": lambda: Net([Bottleneck(16, 4, True)], 16, pool=True),
        "bottleneck_identity": lambda: Net([Bottleneck(16, 4, False)], 16),
        "bottleneck_three": lambda: Net([Bottleneck(16, 4, True), Bottleneck(16, 4, False),
                                         Bottleneck(16, 4, False)], 16),
        "basic": lambda: Net([Basic(16, True), Basic(16, False)], 16),
        "basic_pool": lambda: Net([Basic(16, False), Basic(16, False)], 16, pool=True),
        "basic_conv_bias": lambda: Net([Basic(16, False, bias=True), Basic(16, False)], 16),
        "inverted": lambda: Net([Inverted(16, 2), Inverted(16, 2)], 16, stem_relu6=True),
        "dense": lambda: Net([DenseLayer(16, 4), DenseLayer(20, 4)], 16),
        "plain": Plain,
    }
