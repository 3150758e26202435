"""Cases for MindSpore's ``nn`` layers, shared by the fixture maker and the test.

``tests/data/make_nn_layer_oracle.py`` runs every case with the real MindSpore 2.10 (CPU)
and records the results in ``mindspore_nn_layer_oracle.json``;
``tests/test_nn_layers_oracle.py`` runs the same text with mscore and compares. A case is
``(id, code)``: an expression, or statements that leave the result in ``out``. Names: ``ms``,
``nn``, ``ops``, ``np``, ``T`` (Tensor), the arrays of :func:`arrays`, and the helpers
``setp(net)`` (every trainable parameter set to values derived from its name, so both sides
compute with the same weights) and ``names(net)`` (``[(name, shape), ...]`` of
``parameters_and_names``). ``ERROR_CASES`` record the exception type only.

ClipByNorm with an axis (and EmbeddingLookup's max_norm, which uses it) are left out: MindSpore
2.10's CPU kernel scales rows by other rows' norms there (docs/differences.md).
Layers MindSpore 2.10 cannot run on CPU (ReplicationPad, InstanceNorm, MatrixDiag,
ExtractImagePatches, Roll, MultiFieldEmbeddingLookup, PSNR and SSIM in PyNative) are tested against
numpy references in ``tests/test_nn_layers_extra.py`` instead.
This file imports neither MindSpore nor mscore.
"""
import zlib

import numpy as np


def arrays():
    """The inputs, the same on both sides (fixed seed)."""
    rng = np.random.default_rng(1822)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    return {
        "X4": f32(2, 4, 5, 6), "X3": f32(2, 4, 7), "X5": f32(1, 2, 4, 5, 6),
        "V": f32(2, 6), "SEQ": f32(5, 3, 4), "SEQB": f32(3, 5, 4),
        "H0": f32(2, 3, 6), "C0": f32(2, 3, 6), "H4": f32(4, 3, 6), "C4": f32(4, 3, 6),
        "Q": f32(3, 2, 8), "K": f32(4, 2, 8), "KD": f32(4, 2, 5), "VD": f32(4, 2, 6),
        "IMG": np.abs(f32(2, 3, 16, 16)) * 0.3, "IMG2": np.abs(f32(2, 3, 16, 16)) * 0.3,
        "POS": (rng.random((2, 5)) * 3 + 0.2).astype(np.float32),
        "POS2": (rng.random((2, 5)) * 3 + 0.2).astype(np.float32),
        "IDS": np.array([[0, 3, 2], [1, 1, 4]], np.int32),
        "MASKB": np.array([[False, False, True, False], [False, True, False, False]]),
        "CAUSAL": np.triu(np.full((3, 3), -np.inf, np.float32), 1),
        "A1": f32(3, 5), "A2": f32(3, 4),
        "SAMPLES2": rng.random((2, 4, 2)).astype(np.float32),
        "SAMPLES3": rng.random((1, 2, 3)).astype(np.float32),
    }


def helpers(T):
    """``setp`` and ``names`` for the Tensor class ``T`` of either side."""
    def setp(net):
        for name, p in net.parameters_and_names():
            if not p.requires_grad:
                continue
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            p.set_data(T(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
        return net

    def names(net):
        return [[name, list(p.shape)] for name, p in net.parameters_and_names()]

    return {"setp": setp, "names": names}


_RNN = [
    ("LSTM.names", "names(nn.LSTM(4, 6, 2, bidirectional=True))"),
    ("GRU.names", "names(nn.GRU(4, 6, 1, has_bias=False))"),
    ("RNN.names", "names(nn.RNN(4, 6, 2))"),
    ("LSTM.default_init", "w = nn.LSTM(4, 16).weight_hh_l0.asnumpy()\n"
                          "out = bool(np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2)"),
    ("LSTM", "net = setp(nn.LSTM(4, 6))\nout = net(T(SEQ))"),
    ("LSTM.2layer_bi", "net = setp(nn.LSTM(4, 6, 2, bidirectional=True))\n"
                       "out = net(T(SEQ), (T(H4), T(C4)))"),
    ("LSTM.batch_first", "net = setp(nn.LSTM(4, 6, batch_first=True, has_bias=False))\n"
                         "out = net(T(SEQB))"),
    ("LSTM.seq_length", "net = setp(nn.LSTM(4, 6, 1, bidirectional=True))\n"
                        "out = net(T(SEQ), seq_length=T(np.array([5, 2, 3], np.int32)))"),
    ("GRU", "net = setp(nn.GRU(4, 6, 2))\nout = net(T(SEQ), T(H0))"),
    ("GRU.bi_seq", "net = setp(nn.GRU(4, 6, 1, bidirectional=True))\n"
                   "out = net(T(SEQ), seq_length=T(np.array([3, 5, 1], np.int64)))"),
    ("RNN.tanh", "net = setp(nn.RNN(4, 6, 2))\nout = net(T(SEQ), T(H0))"),
    ("RNN.relu_bi", "net = setp(nn.RNN(4, 6, nonlinearity='relu', bidirectional=True, "
                    "batch_first=True))\nout = net(T(SEQB))"),
]
_ATTENTION = [
    ("MHA.names", "names(nn.MultiheadAttention(8, 2, add_bias_kv=True))"),
    ("MHA.names_kv", "names(nn.MultiheadAttention(8, 2, kdim=5, vdim=6))"),
    ("MHA", "net = setp(nn.MultiheadAttention(8, 2))\nout = net(T(Q), T(K), T(K))"),
    ("MHA.self_masks", "net = setp(nn.MultiheadAttention(8, 2))\n"
                       "out = net(T(Q), T(Q), T(Q), attn_mask=T(CAUSAL), "
                       "average_attn_weights=False)"),
    ("MHA.kpm", "net = setp(nn.MultiheadAttention(8, 4))\n"
                "out = net(T(Q), T(K), T(K), key_padding_mask=T(MASKB), need_weights=False)"),
    ("MHA.kvdim", "net = setp(nn.MultiheadAttention(8, 2, kdim=5, vdim=6))\n"
                  "out = net(T(Q), T(KD), T(VD))"),
    ("MHA.bias_kv_zero", "net = setp(nn.MultiheadAttention(8, 2, add_bias_kv=True, "
                         "add_zero_attn=True))\nout = net(T(Q), T(K), T(K), "
                         "key_padding_mask=T(MASKB))"),
    ("MHA.batch_first", "net = setp(nn.MultiheadAttention(8, 2, batch_first=True))\n"
                        "out = net(T(K.transpose(1, 0, 2)), T(K.transpose(1, 0, 2)), "
                        "T(K.transpose(1, 0, 2)))"),
    ("MHA.unbatched", "net = setp(nn.MultiheadAttention(8, 2, has_bias=False))\n"
                      "out = net(T(Q[:, 0]), T(K[:, 0]), T(K[:, 0]))"),
    ("EncoderLayer.names", "names(nn.TransformerEncoderLayer(8, 2, 16))"),
    ("EncoderLayer", "net = setp(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0))\n"
                     "out = net(T(K), src_key_padding_mask=T(MASKB))"),
    ("EncoderLayer.norm_first_gelu", "net = setp(nn.TransformerEncoderLayer(8, 2, 16, "
                                     "dropout=0.0, activation='gelu', norm_first=True, "
                                     "batch_first=True))\nout = net(T(Q))"),
    ("DecoderLayer", "net = setp(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0))\n"
                     "out = net(T(Q), T(K), tgt_mask=T(CAUSAL), "
                     "memory_key_padding_mask=T(MASKB))"),
    ("DecoderLayer.norm_first", "net = setp(nn.TransformerDecoderLayer(8, 2, 16, "
                                "dropout=0.0, norm_first=True))\nout = net(T(Q), T(K))"),
    ("Encoder.names", "names(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, "
                      "nn.LayerNorm((8,))))"),
    ("Encoder.same_init", "net = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)\n"
                          "p = dict(net.parameters_and_names())\n"
                          "out = bool(np.array_equal(p['layers.0.dense1.weight'].asnumpy(), "
                          "p['layers.1.dense1.weight'].asnumpy()))"),
    ("Encoder", "net = setp(nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, "
                "dropout=0.0), 2, nn.LayerNorm((8,))))\nout = net(T(K), src_mask=T(np.zeros("
                "(4, 4), np.float32)))"),
    ("Decoder", "net = setp(nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, "
                "dropout=0.0), 2))\nout = net(T(Q), T(K))"),
    ("Transformer.names", "names(nn.Transformer(8, 2, 1, 1, 16))"),
    ("Transformer", "net = setp(nn.Transformer(8, 2, 1, 1, 16, dropout=0.0))\n"
                    "out = net(T(K), T(Q), tgt_mask=T(CAUSAL))"),
]
_POOL = [
    ("AdaptiveAvgPool1d", "nn.AdaptiveAvgPool1d(7)(T(X3))"),
    ("AdaptiveMaxPool1d", "nn.AdaptiveMaxPool1d(7)(T(X3[:, :, :7]))"),
    ("AdaptiveAvgPool2d", "nn.AdaptiveAvgPool2d((3, 4))(T(X4))"),
    ("AdaptiveAvgPool2d.none", "nn.AdaptiveAvgPool2d((None, 4))(T(X4[0]))"),
    ("AdaptiveAvgPool2d.up", "nn.AdaptiveAvgPool2d((7, 9))(T(X4))"),
    ("AdaptiveAvgPool3d", "nn.AdaptiveAvgPool3d((2, 3, 4))(T(X5))"),
    ("AdaptiveMaxPool2d", "nn.AdaptiveMaxPool2d((3, 4), True)(T(X4))"),
    ("AdaptiveMaxPool2d.3d", "nn.AdaptiveMaxPool2d((2, None))(T(X4[0]))"),
    ("AdaptiveMaxPool3d", "nn.AdaptiveMaxPool3d((2, 3, 4), True)(T(X5))"),
    ("MaxPool2d.indices", "nn.MaxPool2d(3, 2, pad_mode='pad', padding=1, "
                          "return_indices=True)(T(X4))"),
    ("MaxPool2d.ceil", "nn.MaxPool2d(2, 2, pad_mode='pad', ceil_mode=True)(T(X4))"),
    ("MaxPool2d.dilation", "nn.MaxPool2d(2, 1, pad_mode='pad', dilation=2)(T(X4))"),
    ("MaxPool1d.indices", "nn.MaxPool1d(3, 2, pad_mode='pad', padding=1, "
                          "return_indices=True)(T(X3))"),
    ("MaxPool3d", "nn.MaxPool3d(2, 2)(T(X5))"),
    ("MaxPool3d.same", "nn.MaxPool3d(3, 2, pad_mode='same')(T(X5))"),
    ("MaxPool3d.indices", "nn.MaxPool3d(3, 2, pad_mode='pad', padding=1, "
                          "return_indices=True)(T(X5))"),
    ("MaxPool3d.ceil", "nn.MaxPool3d(2, 2, pad_mode='pad', ceil_mode=True)(T(X5))"),
    ("AvgPool3d", "nn.AvgPool3d(2, 2)(T(X5))"),
    ("AvgPool3d.same", "nn.AvgPool3d(3, 2, pad_mode='same')(T(X5))"),
    ("AvgPool3d.pad", "nn.AvgPool3d(3, 2, pad_mode='pad', padding=1)(T(X5))"),
    ("AvgPool3d.nocount", "nn.AvgPool3d(3, 2, pad_mode='pad', padding=1, "
                          "count_include_pad=False)(T(X5))"),
    ("AvgPool3d.divisor", "nn.AvgPool3d(3, 2, pad_mode='pad', padding=1, "
                          "divisor_override=5)(T(X5))"),
    ("AvgPool3d.ceil", "nn.AvgPool3d(2, 2, ceil_mode=True)(T(X5))"),
    ("AvgPool2d.ceil_pad", "nn.AvgPool2d(3, 2, pad_mode='pad', padding=1, "
                           "ceil_mode=True)(T(X4))"),
    ("AvgPool1d.ceil", "nn.AvgPool1d(2, 2, pad_mode='pad', ceil_mode=True)(T(X3))"),
    ("LPPool1d", "nn.LPPool1d(2, 3, 2)(T(X3))"),
    ("LPPool1d.ceil", "nn.LPPool1d(2, 2, 2, ceil_mode=True)(T(X3))"),
    ("LPPool2d", "nn.LPPool2d(1.5, (2, 3), (1, 2))(T(np.abs(X4)))"),
    ("LPPool2d.odd", "nn.LPPool2d(3, 2)(T(X4))"),
    ("MaxUnpool2d", "x, i = nn.MaxPool2d(2, 2, pad_mode='pad', return_indices=True)(T(X4))\n"
                    "out = nn.MaxUnpool2d(2, 2)(x, i)"),
    ("MaxUnpool2d.size", "x, i = nn.MaxPool2d(3, 2, pad_mode='pad', padding=1, "
                         "return_indices=True)(T(X4))\n"
                         "out = nn.MaxUnpool2d(3, 2, 1)(x, i, output_size=(2, 4, 5, 6))"),
    ("MaxUnpool1d", "x, i = nn.MaxPool1d(2, 2, pad_mode='pad', return_indices=True)(T(X3))\n"
                    "out = nn.MaxUnpool1d(2)(x, i)"),
    ("MaxUnpool3d", "x, i = nn.MaxPool3d(2, 2, pad_mode='pad', return_indices=True)(T(X5))\n"
                    "out = nn.MaxUnpool3d(2)(x, i, output_size=(1, 2, 4, 5, 6))"),
    ("FractionalMaxPool2d", "nn.FractionalMaxPool2d(2, output_size=(3, 4), return_indices=True,"
                            " _random_samples=T(SAMPLES2))(T(X4))"),
    ("FractionalMaxPool2d.ratio", "nn.FractionalMaxPool2d(2, output_ratio=(0.5, 0.5), "
                                  "_random_samples=T(SAMPLES2))(T(X4))"),
    ("FractionalMaxPool3d", "nn.FractionalMaxPool3d(2, output_size=(2, 3, 3), "
                            "return_indices=True, _random_samples=T(SAMPLES3))(T(X5))"),
]
_PAD = [
    ("Pad.constant", "nn.Pad(((0, 0), (0, 0), (1, 1), (2, 0)))(T(X4))"),
    ("Pad.reflect", "nn.Pad(((0, 0), (1, 0), (1, 1), (2, 0)), mode='REFLECT')(T(X4))"),
    ("Pad.symmetric", "nn.Pad(((1, 2), (3, 0)), mode='SYMMETRIC')(T(V))"),
    ("ConstantPad1d", "nn.ConstantPad1d((1, 2), 0.5)(T(X3))"),
    ("ConstantPad2d", "nn.ConstantPad2d((1, -1, 2, 0), -1.0)(T(X4))"),
    ("ConstantPad2d.short", "nn.ConstantPad2d((1, 2), 3)(T(X4))"),
    ("ConstantPad3d", "nn.ConstantPad3d(1, 1.0)(T(X5))"),
    ("ZeroPad2d", "nn.ZeroPad2d((1, 0, -1, 1))(T(X4))"),
    ("ReflectionPad1d", "nn.ReflectionPad1d(2)(T(X3))"),
    ("ReflectionPad2d", "nn.ReflectionPad2d((1, 2, 2, 1))(T(X4))"),
    ("ReflectionPad2d.3d", "nn.ReflectionPad2d((1, 2, 2, 1))(T(X4[0]))"),
    ("ReflectionPad3d", "nn.ReflectionPad3d(1)(T(X5))"),
    ("ops.pad.modes", "[ops.pad(T(X4), (2, 1, 1, 2), mode=m) for m in "
                      "('reflect', 'replicate', 'circular')]"),
    ("ops.pad.crop", "ops.pad(T(X4), (-1, 2, 1, -1), value=5.0)"),
]
_NORM_ACT = [
    ("GroupNorm.names", "names(nn.GroupNorm(2, 4))"),
    ("GroupNorm", "net = setp(nn.GroupNorm(2, 4))\nout = net(T(X4))"),
    ("GroupNorm.3d", "net = setp(nn.GroupNorm(4, 4, eps=1e-3))\nout = net(T(X3))"),
    ("LRN", "nn.LRN(1, 1.0, 0.5, 0.75)(T(X4))"),
    ("LRN.default", "nn.LRN()(T(X4))"),
    ("CELU", "nn.CELU(2.0)(T(V))"),
    ("ELU", "nn.ELU()(T(V))"),
    ("GLU", "nn.GLU()(T(V))"),
    ("GLU.axis0", "nn.GLU(0)(T(V))"),
    ("HSwish", "nn.HSwish()(T(V))"),
    ("HSwish.int", "nn.HSwish()(T(np.array([1, 2, 5], np.int32)))"),
    ("HSigmoid", "nn.HSigmoid()(T(V))"),
    ("Hardtanh", "nn.Hardtanh(-0.5, 2.0)(T(V))"),
    ("HShrink", "nn.HShrink(0.4)(T(V))"),
    ("HShrink.int_lambd", "nn.HShrink(1)(T(V))"),
    ("SoftShrink", "nn.SoftShrink(0.4)(T(V))"),
    ("SoftShrink.int_lambd", "nn.SoftShrink(1)(T(V))"),
    ("LogSigmoid", "nn.LogSigmoid()(T(V))"),
    ("Mish", "nn.Mish()(T(V))"),
    ("SeLU", "nn.SeLU()(T(V))"),
    ("Softsign", "nn.Softsign()(T(V))"),
    ("Softmin", "nn.Softmin()(T(V))"),
    ("Softmin.axis0", "nn.Softmin(0)(T(V))"),
    ("Softmax2d", "nn.Softmax2d()(T(X4))"),
    ("Tanhshrink", "nn.Tanhshrink()(T(V))"),
    ("Threshold", "nn.Threshold(0.3, 20.0)(T(V))"),
    ("Threshold.int", "nn.Threshold(1, 2)(T(np.array([0, 1, 2, 3], np.int32)))"),
    ("RReLU.fixed", "nn.RReLU(0.2, 0.2)(T(V))"),
    ("FastGelu", "nn.FastGelu()(T(V))"),
    ("get_activation", "[type(nn.get_activation(n)).__name__ for n in ('softmin', 'hswish', "
                       "'hsigmoid', 'fast_gelu', 'mish', 'logsigmoid', 'elu', 'softsign')]"),
]
_OTHER = [
    ("Linear.names", "names(nn.Linear(3, 4))"),
    ("Linear", "net = setp(nn.Linear(6, 4))\nout = net(T(V))"),
    ("Linear.nobias", "net = setp(nn.Linear(6, 4, bias=False))\nout = net(T(V))"),
    ("BiDense.names", "names(nn.BiDense(5, 4, 3))"),
    ("BiDense", "net = setp(nn.BiDense(5, 4, 3))\nout = net(T(A1), T(A2))"),
    ("BiDense.3d", "net = setp(nn.BiDense(5, 4, 3, has_bias=False))\n"
                   "out = net(T(A1.reshape(1, 3, 5)), T(A2.reshape(1, 3, 4)))"),
    ("EmbeddingLookup", "net = setp(nn.EmbeddingLookup(5, 3))\nout = net(T(IDS))"),
    ("Dropout2d.eval", "nn.Dropout2d(0.5)(T(X4))"),
    ("Dropout.default_keep_prob", "nn.Dropout().keep_prob"),
    ("Embedding.defaults", "e = nn.Embedding(5, 3)\n"
                           "out = [e.embedding_table.dtype == ms.float32, e(T(IDS)).shape]"),
    ("Embedding.float16_dtype", "nn.Embedding(5, 3, dtype=ms.float16).embedding_table.dtype "
                                "== ms.float32"),
    ("get_activation.prim_name", "type(nn.get_activation('prelu', prim_name='Dense')).__name__"),
    ("BatchNorm3d.positional", "names(nn.BatchNorm3d(2, 1e-5, 0.9, True, 'ones', 'zeros', "
                               "'zeros', 'ones', None, ms.float32))"),
    ("Dropout1d.p0", "d = nn.Dropout1d(0.0)\nd.set_train()\nout = d(T(X3))"),
    ("Dropout3d.p1", "d = nn.Dropout3d(1.0)\nd.set_train()\nout = d(T(X5))"),
    ("Unflatten", "nn.Unflatten(1, (2, 2))(T(X4))"),
    ("Unflatten.last", "nn.Unflatten(-1, [3, -1])(T(X4))"),
    ("PixelShuffle", "nn.PixelShuffle(2)(T(X4))"),
    ("PixelUnshuffle", "nn.PixelUnshuffle(2)(T(X4[:, :, :4]))"),
    ("ChannelShuffle", "nn.ChannelShuffle(2)(T(X4))"),
    ("ChannelShuffle.uneven", "nn.ChannelShuffle(3)(T(X4))"),
    ("Upsample.nearest", "nn.Upsample(size=(7, 9))(T(X4))"),
    ("Upsample.nearest_recompute", "nn.Upsample(scale_factor=2.0, "
                                   "recompute_scale_factor=True)(T(X4))"),
    ("Upsample.bilinear", "nn.Upsample(size=(7, 9), mode='bilinear')(T(X4))"),
    ("Upsample.bilinear_align", "nn.Upsample(size=(3, 8), mode='bilinear', "
                                "align_corners=True)(T(X4))"),
    ("Upsample.bicubic", "nn.Upsample(size=(7, 8), mode='bicubic')(T(X4))"),
    ("Upsample.bicubic_align", "nn.Upsample(size=(3, 4), mode='bicubic', "
                               "align_corners=True)(T(X4))"),
    ("Upsample.linear", "nn.Upsample(size=9, mode='linear')(T(X3))"),
    ("Upsample.area", "nn.Upsample(size=(3, 3), mode='area')(T(X4))"),
    ("Upsample.nearest_exact", "nn.Upsample(size=(7, 9), mode='nearest-exact')(T(X4))"),
    ("Upsample.trilinear_scale", "nn.Upsample(scale_factor=(1.5, 1.5, 1.7), "
                                 "mode='trilinear')(T(X5))"),
    ("Upsample.nearest5d_scale", "nn.Upsample(scale_factor=(1.5, 1.5, 1.7))(T(X5))"),
    ("Tril", "nn.Tril()(T(X4), 1)"),
    ("Triu", "nn.Triu()(T(X4), -1)"),
    ("OneHot", "nn.OneHot(depth=4)(T(np.array([0, 3, 1])))"),
    ("OneHot.axis0", "nn.OneHot(axis=0, depth=4, on_value=2.0, off_value=-1.0, "
                     "dtype=ms.float16)(T(np.array([0, 3, 1], np.int32)))"),
    ("Norm", "nn.Norm()(T(X4))"),
    ("Norm.axis", "nn.Norm(axis=(1, 2), keep_dims=True)(T(X4))"),
    ("Moments", "nn.Moments()(T(X4))"),
    ("Moments.axis", "nn.Moments(axis=(0, 2), keep_dims=True)(T(X4))"),
    ("ClipByNorm", "nn.ClipByNorm()(T(X4), T(np.float32(1.0)))"),
    ("MatMul", "nn.MatMul(True)(T(X4), T(X4))"),
    ("MatMul.1d", "nn.MatMul()(T(V[0, :5]), T(A1.T))"),
    ("ReduceLogSumExp", "nn.ReduceLogSumExp(1)(T(X4))"),
    ("ReduceLogSumExp.keep", "nn.ReduceLogSumExp((1, 2), True)(T(X4))"),
    ("L1Regularizer", "nn.L1Regularizer(0.5)(T(X4))"),
    ("Range", "nn.Range(1, 8, 2)()"),
    ("Range.float", "nn.Range(1.0, 3, 0.5)()"),
    ("CentralCrop", "nn.CentralCrop(0.5)(T(X4))"),
    ("CentralCrop.3d", "nn.CentralCrop(0.6)(T(X4[0]))"),
    ("ImageGradients", "nn.ImageGradients()(T(X4))"),
    ("SSIM.names", "names(nn.SSIM())"),
    ("LGamma", "nn.LGamma()(T(np.array([0.5, 1.5, 3.0, -0.5, 10.0, -2.5], np.float32)))"),
    ("DiGamma", "nn.DiGamma()(T(np.array([0.5, 1.5, 3.0, -0.5, 10.0, -2.5], np.float32)))"),
    ("IGamma", "nn.IGamma()(T(POS), T(POS2))"),
    ("LBeta", "nn.LBeta()(T(POS), T(POS2 * 4))"),
]
CASES = _RNN + _ATTENTION + _POOL + _PAD + _NORM_ACT + _OTHER

ERROR_CASES = [
    # recurrent
    ("LSTM.hidden_float", "nn.LSTM(4, 6.0)"),
    ("LSTM.layers0", "nn.LSTM(4, 6, 0)"),
    ("LSTM.dropout_int", "nn.LSTM(4, 6, 2, dropout=1)"),
    ("LSTM.dropout_1", "nn.LSTM(4, 6, 2, dropout=1.0)"),
    ("LSTM.bidirectional_int", "nn.LSTM(4, 6, bidirectional=1)"),
    ("LSTM.hx_tensor", "nn.LSTM(4, 6)(T(SEQ), T(H0[:1]))"),
    ("LSTM.hx_len", "nn.LSTM(4, 6)(T(SEQ), (T(H0[:1]),))"),
    ("GRU.hx_tuple", "nn.GRU(4, 6)(T(SEQ), (T(H0[:1]),))"),
    ("GRU.hx_dtype", "nn.GRU(4, 6)(T(SEQ), T(H0[:1].astype(np.float64)))"),
    ("GRU.seq_float", "nn.GRU(4, 6)(T(SEQ), seq_length=T(np.array([1., 2., 3.], np.float32)))"),
    ("GRU.seq_len", "nn.GRU(4, 6)(T(SEQ), seq_length=T(np.array([1, 2], np.int32)))"),
    ("RNN.nonlinearity", "nn.RNN(4, 6, nonlinearity='sigmoid')"),
    # attention
    ("MHA.divisible", "nn.MultiheadAttention(8, 3)"),
    ("MHA.query_4d", "nn.MultiheadAttention(8, 2)(T(X4), T(X4), T(X4))"),
    ("MHA.kpm_int", "nn.MultiheadAttention(8, 2)(T(Q), T(K), T(K), "
                    "key_padding_mask=T(np.zeros((2, 4), np.int32)))"),
    ("MHA.kpm_shape", "nn.MultiheadAttention(8, 2)(T(Q), T(K), T(K), "
                      "key_padding_mask=T(np.zeros((2, 3), np.bool_)))"),
    ("MHA.mask_shape", "nn.MultiheadAttention(8, 2)(T(Q), T(K), T(K), "
                       "attn_mask=T(np.zeros((3, 3), np.float32)))"),
    ("MHA.embed", "nn.MultiheadAttention(6, 2)(T(Q), T(K), T(K))"),
    ("EncoderLayer.activation", "nn.TransformerEncoderLayer(8, 2, activation='tanh')"),
    ("EncoderLayer.activation_cell", "nn.TransformerEncoderLayer(8, 2, activation=nn.Tanh())"),
    ("EncoderLayer.kpm_int", "nn.TransformerEncoderLayer(8, 2, 16)(T(K), "
                             "src_key_padding_mask=T(np.zeros((2, 4), np.int32)))"),
    ("Transformer.features", "nn.Transformer(8, 2, 1, 1, 16)(T(KD), T(Q))"),
    # pooling
    ("AdaptiveAvgPool1d.divisible", "nn.AdaptiveAvgPool1d(3)(T(X3))"),
    ("AdaptiveAvgPool1d.4d", "nn.AdaptiveAvgPool1d(7)(T(X4))"),
    ("AdaptiveAvgPool1d.float", "nn.AdaptiveAvgPool1d(2.0)"),
    ("AdaptiveAvgPool1d.zero", "nn.AdaptiveAvgPool1d(0)"),
    ("AdaptiveMaxPool1d.divisible", "nn.AdaptiveMaxPool1d(3)(T(X3))"),
    ("AdaptiveAvgPool2d.negative", "nn.AdaptiveAvgPool2d(-1)"),
    ("AdaptiveAvgPool2d.length", "nn.AdaptiveAvgPool2d((1, 2, 3))"),
    ("AdaptiveAvgPool2d.float", "nn.AdaptiveAvgPool2d(2.0)"),
    ("AdaptiveAvgPool2d.int_input", "nn.AdaptiveAvgPool2d(2)(T(np.ones((1, 1, 4, 4), "
                                    "np.int32)))"),
    ("MaxPool2d.indices_same", "nn.MaxPool2d(2, 1, pad_mode='same', return_indices=True)"),
    ("MaxPool3d.ceil_valid", "nn.MaxPool3d(2, 2, ceil_mode=True)"),
    ("AvgPool3d.divisor", "nn.AvgPool3d(2, divisor_override=-1)"),
    ("LPPool1d.norm_zero", "nn.LPPool1d(0, 2)(T(X3))"),
    ("LPPool1d.norm_str", "nn.LPPool1d('2', 2)(T(X3))"),
    ("MaxUnpool2d.size_list", "x, i = nn.MaxPool2d(2, 2, pad_mode='pad', "
                              "return_indices=True)(T(X4))\nout = nn.MaxUnpool2d(2)(x, i, [4, 6])"),
    ("MaxUnpool3d.small", "x, i = nn.MaxPool3d(2, 2, pad_mode='pad', "
                          "return_indices=True)(T(X5))\nout = nn.MaxUnpool3d(2)(x, i)"),
    # padding
    ("Pad.mode", "nn.Pad(((1, 1),), mode='reflect')"),
    ("Pad.list", "nn.Pad([[1, 1]])"),
    ("Pad.triple", "nn.Pad(((1, 1, 1),))"),
    ("Pad.5d", "nn.Pad(((1, 1),) * 5)"),
    ("Pad.rank", "nn.Pad(((1, 1),))(T(X4))"),
    ("Pad.symmetric_big", "nn.Pad(((0, 0), (0, 0), (0, 0), (7, 0)), mode='SYMMETRIC')(T(X4))"),
    ("ConstantPad1d.len4", "nn.ConstantPad1d((1, 2, 1, 1), 0.5)"),
    ("ConstantPad2d.list", "nn.ConstantPad2d([1, 2], 0.5)"),
    ("ConstantPad2d.value", "nn.ConstantPad2d(1, '0')"),
    ("ReflectionPad1d.list", "nn.ReflectionPad1d([1, 1])"),
    ("ReflectionPad1d.negative", "nn.ReflectionPad1d((-1, 1))"),
    ("ReflectionPad2d.big", "nn.ReflectionPad2d(5)(T(X4))"),
    ("ops.pad.odd", "ops.pad(T(X4), (1, 1, 1))"),
    ("ops.pad.reflect_big", "ops.pad(T(X4), (6, 1), mode='reflect')"),
    # normalisation and activations
    ("GroupNorm.divisible", "nn.GroupNorm(3, 4)"),
    ("GroupNorm.eps_int", "nn.GroupNorm(2, 4, eps=1)"),
    ("GroupNorm.channels", "nn.GroupNorm(2, 6)(T(X4))"),
    ("GroupNorm.int_input", "nn.GroupNorm(2, 4)(T(np.ones((2, 4, 3, 3), np.int32)))"),
    ("InstanceNorm2d.features", "nn.InstanceNorm2d(4.0)"),
    ("InstanceNorm2d.momentum", "nn.InstanceNorm2d(4, momentum=1.5)"),
    ("InstanceNorm2d.eps_int", "nn.InstanceNorm2d(4, eps=1)"),
    ("LRN.radius_float", "nn.LRN(1.5)"),
    ("LRN.region", "nn.LRN(norm_region='WITHIN')"),
    ("LRN.rank", "nn.LRN()(T(X3))"),
    ("ELU.alpha", "nn.ELU(0.5)(T(V))"),
    ("ELU.alpha_int", "nn.ELU(1)(T(V))"),
    ("HShrink.float64", "nn.HShrink()(T(V.astype(np.float64)))"),
    ("SoftShrink.negative", "nn.SoftShrink(-1.0)(T(V))"),
    ("Threshold.str", "nn.Threshold('a', 2)(T(V))"),
    ("Hardtanh.range", "nn.Hardtanh(2.0, -0.5)"),
    ("Hardtanh.equal", "nn.Hardtanh(1.0, 1.0)"),
    ("Softmin.axis_float", "nn.Softmin(0.5)(T(V))"),
    ("Softmax2d.rank", "nn.Softmax2d()(T(V))"),
    ("GLU.odd", "nn.GLU()(T(V[:, :5]))"),
    ("RReLU.range", "nn.RReLU(0.5, 0.1)"),
    ("RReLU.str", "nn.RReLU('a', 0.1)"),
    ("Mish.int", "nn.Mish()(T(np.array([1, 2])))"),
    # others
    ("Linear.bias_int", "nn.Linear(3, 4, bias=1)"),
    ("Linear.weight_shape", "nn.Linear(3, 4, weight_init=T(np.ones((3, 4), np.float32)))"),
    ("BiDense.in1", "nn.BiDense(5, 4, 3)(T(A2), T(A2))"),
    ("EmbeddingLookup.target", "nn.EmbeddingLookup(5, 3, target='GPU')"),
    ("EmbeddingLookup.sparse", "nn.EmbeddingLookup(5, 3, sparse=False)"),
    ("Dropout1d.p_int", "nn.Dropout1d(1)"),
    ("Embedding.bool_dtype", "nn.Embedding(5, 3, dtype=ms.bool_)"),
    ("get_activation.unknown", "nn.get_activation('swishy', 'Dense')"),
    ("Dropout2d.p_big", "nn.Dropout2d(1.5)"),
    ("Dropout2d.rank", "d = nn.Dropout2d(0.5)\nd.set_train()\nout = d(T(X3))"),
    ("Dropout1d.rank", "d = nn.Dropout1d(0.5)\nd.set_train()\nout = d(T(X4))"),
    ("Unflatten.axis", "nn.Unflatten(1.0, (2, 2))"),
    ("Unflatten.size", "nn.Unflatten(1, 2)"),
    ("Unflatten.bad", "nn.Unflatten(1, (3, 2))(T(X4))"),
    ("Unfold.ksizes", "nn.Unfold([2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])"),
    ("PixelShuffle.divisible", "nn.PixelShuffle(3)(T(X4))"),
    ("PixelShuffle.rank", "nn.PixelShuffle(2)(T(V))"),
    ("PixelShuffle.float", "nn.PixelShuffle(2.0)(T(X4))"),
    ("PixelUnshuffle.divisible", "nn.PixelUnshuffle(2)(T(X4))"),
    ("ChannelShuffle.zero", "nn.ChannelShuffle(0)"),
    ("ChannelShuffle.float", "nn.ChannelShuffle(2.0)"),
    ("Upsample.both", "nn.Upsample(size=(2, 2), scale_factor=2.0)(T(X4))"),
    ("Upsample.none", "nn.Upsample()(T(X4))"),
    ("Upsample.scale_4d", "nn.Upsample(scale_factor=2.0)(T(X4))"),
    ("Upsample.mode", "nn.Upsample(size=(2, 2), mode='cubic')(T(X4))"),
    ("Upsample.rank", "nn.Upsample(size=(2, 2), mode='trilinear')(T(X4))"),
    ("Upsample.align_nearest", "nn.Upsample(size=(2, 2), align_corners=True)(T(X4))"),
    ("Upsample.recompute_size", "nn.Upsample(size=(2, 2), recompute_scale_factor=True)(T(X4))"),
    ("Roll.float", "nn.Roll(1.0, 0)"),
    ("Roll.lengths", "nn.Roll((1, -1), (0,))"),
    ("Moments.int", "nn.Moments()(T(np.ones((2, 2), np.int32)))"),
    ("Moments.axis", "nn.Moments(axis=1.0)"),
    ("ClipByNorm.float", "nn.ClipByNorm()(T(X4), 1.0)"),
    ("ReduceLogSumExp.axis", "nn.ReduceLogSumExp(1.0)"),
    ("MatMul.bool", "nn.MatMul(1)"),
    ("L1Regularizer.zero", "nn.L1Regularizer(0)"),
    ("L1Regularizer.str", "nn.L1Regularizer('a')"),
    ("L1Regularizer.inf", "nn.L1Regularizer(float('inf'))"),
    ("Range.delta", "nn.Range(1, 8, 0)"),
    ("CentralCrop.zero", "nn.CentralCrop(0.0)"),
    ("CentralCrop.int", "nn.CentralCrop(1)"),
    ("CentralCrop.rank", "nn.CentralCrop(0.5)(T(V))"),
    ("ImageGradients.rank", "nn.ImageGradients()(T(X3))"),
    ("SSIM.max_val", "nn.SSIM(max_val=0)"),
    ("SSIM.k1", "nn.SSIM(k1=1)"),
    ("SSIM.filter", "nn.SSIM()(T(X4), T(X4))"),
    ("SSIM.dtype", "nn.SSIM(filter_size=3)(T(X4.astype(np.float64)), T(X4.astype(np.float64)))"),
    ("PSNR.max_val", "nn.PSNR(max_val=-1.0)"),
    ("PSNR.rank", "nn.PSNR()(T(X3), T(X3))"),
    ("MSSSIM.power", "nn.MSSSIM(power_factors=0.5)"),
    ("LGamma.int", "nn.LGamma()(T(np.array([1, 2], np.int32)))"),
]
