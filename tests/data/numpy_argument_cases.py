"""What MindSpore does with numpy arrays given where it takes Tensors, run with MindSpore
(``make_numpy_argument_oracle.py``) and with mscore (``tests/test_numpy_arguments.py``).

Each case is a name and an expression over ``ms`` (the framework), ``np``, ``a`` (a numpy
float32 array), ``t`` (the same values as a Tensor) and ``net`` (a Dense(3, 2) Cell)."""
import numpy as np

CASES = [
    ("ops.add(array, tensor)", "ms.ops.add(a, t)"),
    ("ops.add(tensor, array)", "ms.ops.add(t, a)"),
    ("ops.add(array, array)", "ms.ops.add(a, a)"),
    ("ops.mul(array, 2)", "ms.ops.mul(a, 2)"),
    ("ops.relu(array)", "ms.ops.relu(a)"),
    ("ops.exp(array)", "ms.ops.exp(a)"),
    ("ops.softmax(array)", "ms.ops.softmax(a)"),
    ("ops.matmul(array, array)", "ms.ops.matmul(a, a.T)"),
    ("ops.sum(array)", "ms.ops.sum(a)"),
    ("ops.reshape(array)", "ms.ops.reshape(a, (3, 2))"),
    ("ops.cast(array)", "ms.ops.cast(a, ms.int32)"),
    ("ops.Add()(array, array)", "ms.ops.Add()(a, a)"),
    ("ops.ReLU()(array)", "ms.ops.ReLU()(a)"),
    ("tensor + array", "t + a"),
    ("array + tensor", "a + t"),
    ("array * tensor", "a * t"),
    ("array < tensor", "a < t"),
    ("numpy scalar + tensor", "np.float32(2) + t"),
    ("tensor + numpy scalar", "t + np.float32(2)"),
    ("ops.add(numpy scalar, tensor)", "ms.ops.add(np.float32(2), t)"),
    ("Dense(array)", "net(a)"),
    ("nn.ReLU()(array)", "ms.nn.ReLU()(a)"),
    ("Model.predict(array)", "ms.train.Model(net).predict(a)"),
]


def inputs(ms):
    """The shared inputs, built with the framework ``ms``."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    return {"a": a, "t": ms.Tensor(a), "net": ms.nn.Dense(3, 2)}
