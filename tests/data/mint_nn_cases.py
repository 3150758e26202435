"""``mint.nn`` layers and ``mint.nn.functional`` functions, run with MindSpore
(``make_mint_nn_oracle.py``) and with mscore (``tests/test_mint_nn.py``).

Each case is ``(name, expression, reference)``. The expression is what a user writes; it is
what mscore runs. MindSpore's CPU build has no kernel for many ``mint`` functions (they are
Ascend kernels), so where the expression fails there, the oracle records ``reference``: the
same computation through MindSpore's CPU ops (``ops.conv2d``, ``ops.avg_pool3d``, ...), with
the same inputs. ``F`` is ``mint.nn.functional``; the inputs and helpers come from
``inputs(ms)``."""
import numpy as np


def _arrays():
    rng = np.random.RandomState(7)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    return {"x3": f(2, 3, 8), "w1": f(4, 3, 3), "b4": f(4), "x5": f(1, 2, 4, 4, 4),
            "w3": f(3, 2, 2, 2, 2), "b3": f(3), "x4": f(1, 2, 5, 5), "wt": f(2, 3, 3, 3),
            "y5": f(2, 2, 3, 3, 3), "y4": f(3, 2, 2, 2), "a34": f(3, 4),
            "p": np.array([[[[5.0, 6.0], [7.0, 8.0]]]], np.float32),
            "pi": np.array([[[[0, 3], [9, 15]]]], np.int64)}


def inputs(ms):
    """The inputs as the framework ``ms``'s Tensors (``a34`` stays a numpy array: the
    in-place cases make a fresh Tensor of it), and the helpers the cases call."""
    scope = {k: (v if k == "a34" else ms.Tensor(v)) for k, v in _arrays().items()}

    def setp(cell, **values):
        """``cell`` with the named parameters set to ``values``."""
        for name, value in values.items():
            getattr(cell, name).set_data(value)
        return cell

    def after(fn, tensor, *args):
        """``tensor`` after the in-place ``fn(tensor, *args)`` (checks it was changed)."""
        fn(tensor, *args)
        return tensor

    def bn_train(cell, x):
        """A training step of a batch norm: the output and the running statistics."""
        cell.set_train(True)
        out = cell(x)
        return out, ms.Tensor(cell.running_mean.asnumpy()), \
            ms.Tensor(cell.running_var.asnumpy())

    def bn_reference(x, momentum=0.1, eps=1e-5):
        """The same step through MindSpore's functional batch norm."""
        c = x.shape[1]
        mean = ms.Parameter(ms.Tensor(np.zeros(c, np.float32)), name="m")
        var = ms.Parameter(ms.Tensor(np.ones(c, np.float32)), name="v")
        ones, zeros = ms.Tensor(np.ones(c, np.float32)), ms.Tensor(np.zeros(c, np.float32))
        flat = x.reshape(x.shape[0], c, -1, 1)  # MindSpore's CPU kernel takes 2-d to 4-d
        out = ms.ops.batch_norm(flat, mean, var, ones, zeros, True, momentum, eps)
        return out.reshape(x.shape), ms.Tensor(mean.asnumpy()), ms.Tensor(var.asnumpy())

    def params(cell):
        """The names, shapes and trainability of ``cell``'s parameters, as text."""
        return str([(p.name, tuple(p.shape), bool(p.requires_grad))
                    for p in cell.get_parameters()])

    def conv1d_reference(x, w, b, stride, pad):
        """A 1-d convolution as MindSpore's CPU 2-d one over a height of 1."""
        out = ms.ops.conv2d(ms.ops.expand_dims(x, 2), ms.ops.expand_dims(w, 2), b,
                            (1, stride), "pad", (0, pad))
        return ms.ops.squeeze(out, 2)

    def adaptive_max1d_reference(x, size):
        """1-d adaptive max pooling as MindSpore's 2-d one over a height of 1."""
        out, idx = ms.ops.adaptive_max_pool2d(ms.ops.expand_dims(x, 2), (1, size), True)
        return ms.ops.squeeze(out, 2), ms.ops.squeeze(idx, 2)

    def conv_transpose2d_reference(x, w, b, stride, pad, out_pad):
        """A transposed 2-d convolution through MindSpore's CPU ``nn.Conv2dTranspose``
        (whose ``output_padding`` appends zeros, unlike mint's: the cases leave it 0)."""
        cell = ms.nn.Conv2dTranspose(w.shape[0], w.shape[1], w.shape[2], stride, "pad", pad,
                                     out_pad, has_bias=True, weight_init=w, bias_init=b)
        return cell(x)

    scope.update(setp=setp, after=after, bn_train=bn_train, bn_reference=bn_reference,
                 params=params, conv1d_reference=conv1d_reference,
                 adaptive_max1d_reference=adaptive_max1d_reference,
                 conv_transpose2d_reference=conv_transpose2d_reference)
    return scope


CASES = [
    ("F.conv1d", "F.conv1d(x3, w1, b4, stride=2, padding=1)",
     "conv1d_reference(x3, w1, b4, 2, 1)"),
    ("F.conv1d_same", "F.conv1d(x3, w1, None, padding='same')",
     "conv1d_reference(x3, w1, None, 1, 1)"),
    ("F.conv3d", "F.conv3d(x5, w3, b3, padding=1)",
     "ms.ops.conv3d(x5, w3, b3, pad_mode='pad', padding=1)"),
    ("F.conv_transpose2d", "F.conv_transpose2d(x4, wt, b3, stride=2, padding=1)",
     "conv_transpose2d_reference(x4, wt, b3, 2, 1, 0)"),
    ("F.conv_transpose2d_full", "F.conv_transpose2d(x4, wt, b3, stride=2)",
     "conv_transpose2d_reference(x4, wt, b3, 2, 0, 0)"),
    ("F.dropout2d_eval", "F.dropout2d(x4, 0.5, training=False)", "x4"),
    ("F.elu_", "after(F.elu_, ms.Tensor(a34))", "ms.ops.elu(ms.Tensor(a34))"),
    ("F.hardtanh_", "after(F.hardtanh_, ms.Tensor(a34), -0.5, 0.5)",
     "ms.ops.hardtanh(ms.Tensor(a34), -0.5, 0.5)"),
    ("F.threshold_", "after(F.threshold_, ms.Tensor(a34), 0.1, 20.0)",
     "ms.ops.threshold(ms.Tensor(a34), 0.1, 20.0)"),
    ("F.avg_pool3d", "F.avg_pool3d(x5, 2, stride=1, padding=1)",
     "ms.ops.avg_pool3d(x5, 2, 1, 1)"),
    ("F.avg_pool3d_ceil", "F.avg_pool3d(x5, 3, 2, 1, ceil_mode=True, count_include_pad=False)",
     "ms.ops.avg_pool3d(x5, 3, 2, 1, True, False)"),
    ("F.avg_pool3d_divisor", "F.avg_pool3d(x5, 2, divisor_override=3)",
     "ms.ops.avg_pool3d(x5, 2, 2, divisor_override=3)"),
    ("F.adaptive_avg_pool3d", "F.adaptive_avg_pool3d(x5, (2, 3, 1))",
     "ms.ops.adaptive_avg_pool3d(x5, (2, 3, 1))"),
    ("F.adaptive_max_pool1d", "F.adaptive_max_pool1d(x3, 3, True)",
     "adaptive_max1d_reference(x3, 3)"),
    ("F.max_unpool2d", "F.max_unpool2d(p, pi, 2)", "ms.ops.max_unpool2d(p, pi, 2)"),
    ("nn.Conv1d", "setp(mint.nn.Conv1d(3, 4, 3, stride=2, padding=1), weight=w1, bias=b4)(x3)",
     "conv1d_reference(x3, w1, b4, 2, 1)"),
    ("nn.Conv3d", "setp(mint.nn.Conv3d(2, 3, 2, padding=1), weight=w3, bias=b3)(x5)",
     "ms.ops.conv3d(x5, w3, b3, pad_mode='pad', padding=1)"),
    ("nn.ConvTranspose2d", "setp(mint.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), "
     "weight=wt, bias=b3)(x4)", "conv_transpose2d_reference(x4, wt, b3, 2, 1, 0)"),
    ("nn.BatchNorm3d_train", "bn_train(mint.nn.BatchNorm3d(2), y5)", "bn_reference(y5)"),
    ("nn.BatchNorm2d_train", "bn_train(mint.nn.BatchNorm2d(2, momentum=0.3), y4)",
     "bn_reference(y4, 0.3)"),
    ("nn.SyncBatchNorm_train", "bn_train(mint.nn.SyncBatchNorm(2), y4)", "bn_reference(y4)"),
    ("nn.AvgPool3d", "mint.nn.AvgPool3d(2, stride=1, padding=1)(x5)",
     "ms.ops.avg_pool3d(x5, 2, 1, 1)"),
    ("nn.AdaptiveAvgPool3d", "mint.nn.AdaptiveAvgPool3d(2)(x5)",
     "ms.ops.adaptive_avg_pool3d(x5, 2)"),
    ("nn.AdaptiveMaxPool1d", "mint.nn.AdaptiveMaxPool1d(3)(x3)",
     "adaptive_max1d_reference(x3, 3)[0]"),
    ("nn.MaxUnpool2d", "mint.nn.MaxUnpool2d(2)(p, pi)", "ms.ops.max_unpool2d(p, pi, 2)"),
    ("params.Conv1d", "params(mint.nn.Conv1d(3, 4, 3))", None),
    ("params.Conv3d", "params(mint.nn.Conv3d(2, 3, 2, bias=False))", None),
    ("params.ConvTranspose2d", "params(mint.nn.ConvTranspose2d(2, 4, 3, groups=2))", None),
    ("params.BatchNorm1d", "params(mint.nn.BatchNorm1d(3))", None),
    ("params.BatchNorm3d", "params(mint.nn.BatchNorm3d(2, affine=False))", None),
    ("params.SyncBatchNorm", "params(mint.nn.SyncBatchNorm(2))", None),
]
