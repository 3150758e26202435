"""Attention and transformer layers of MindSpore 2.10: ``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer``, ``nn.TransformerDecoderLayer``, ``nn.TransformerEncoder``,
``nn.TransformerDecoder`` and ``nn.Transformer``.

As in MindSpore: inputs are sequence-first (L, N, E) unless ``batch_first``; boolean masks
mark the positions to leave out (True) and float masks are added to the scores;
``TransformerEncoder``/``Decoder`` build ``num_layers`` copies of a fresh layer with the given
layer's settings (all copies start from the same values); ``Transformer`` re-initialises
every matrix with Xavier-uniform. The attention itself is
:func:`mscore.ops.nn.attention.multi_head_attention_forward` (the backend's fused attention
where no weights are returned).
"""
from __future__ import annotations

import math

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.initializer import HeUniform, Uniform, XavierNormal, XavierUniform, initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_positive_int
from mscore.nn.layer.activation import GELU, ReLU
from mscore.nn.layer.basic import Dense, Dropout
from mscore.nn.layer.container import CellList
from mscore.nn.layer.normalization import LayerNorm
from mscore.ops import functional as F
from mscore.ops.nn.attention import multi_head_attention_forward


class MultiheadAttention(Cell):
    """Multi-head attention ``softmax(q k^T / sqrt(d) + mask) v`` over ``num_heads`` heads.

    ``MultiheadAttention(embed_dim, num_heads, dropout=0.0, has_bias=True,
    add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None, batch_first=False,
    dtype=float32)``; ``construct(query, key, value, key_padding_mask=None,
    need_weights=True, attn_mask=None, average_attn_weights=True)`` returns
    ``(attn_output, attn_weights)``, or ``(attn_output,)`` without ``need_weights``.
    Parameters: ``in_proj_weight`` (3E, E) Xavier-uniform (``q/k/v_proj_weight`` when kdim /
    vdim differ from E), ``in_proj_bias`` zeros, ``out_proj`` a Dense, ``bias_k`` /
    ``bias_v`` (1, 1, E) Xavier-normal.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False,
                 dtype=mdt.float32):
        super().__init__()
        cls = "MultiheadAttention"
        check_positive_int(embed_dim, "embed_dim", cls)
        check_positive_int(num_heads, "num_heads", cls)
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError("The init argument 'embed_dim' must be divisible by 'num_heads'.")
        dtype = mdt.float32 if dtype is None else dtype
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(initializer(XavierUniform(), (3 * embed_dim,
                                                                          embed_dim), dtype),
                                            name="in_proj_weight")
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, embed_dim),
                                                       dtype), name="q_proj_weight")
            self.k_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.kdim),
                                                       dtype), name="k_proj_weight")
            self.v_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.vdim),
                                                       dtype), name="v_proj_weight")
            self.in_proj_weight = None
        self.in_proj_bias = Parameter(initializer("zeros", (3 * embed_dim,), dtype),
                                      name="in_proj_bias") if has_bias else None
        self.out_proj = Dense(embed_dim, embed_dim, has_bias=has_bias,
                              weight_init=HeUniform(math.sqrt(5)),
                              bias_init=Uniform(1 / math.sqrt(embed_dim)), dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(initializer(XavierNormal(), (1, 1, embed_dim), dtype),
                                    name="bias_k")
            self.bias_v = Parameter(initializer(XavierNormal(), (1, 1, embed_dim), dtype),
                                    name="bias_v")
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self.dtype = dtype

    def _param(self, p):
        return None if p is None else self.cast_param(p)

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True,
                  attn_mask=None, average_attn_weights=True):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not hasattr(t, "ndim"):
                raise TypeError(f"For 'MultiheadAttention', '{name}' must be a Tensor, got "
                                f"{type(t).__name__}")
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (F.swapaxes(t, 0, 1) for t in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self._param(self.in_proj_weight),
            self._param(self.in_proj_bias), self._param(self.bias_k), self._param(self.bias_v),
            self.add_zero_attn, self.dropout, self.cast_param(self.out_proj.weight),
            self._param(self.out_proj.bias), training=self.training,
            key_padding_mask=key_padding_mask, need_weights=bool(need_weights),
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self._param(self.q_proj_weight),
            k_proj_weight=self._param(self.k_proj_weight),
            v_proj_weight=self._param(self.v_proj_weight),
            average_attn_weights=average_attn_weights)
        if self.batch_first and batched:
            out = F.swapaxes(out, 0, 1)
        if need_weights:
            return out, weights
        return (out,)


def _activation(activation):
    """MindSpore accepts the names 'relu' / 'gelu' (ops.relu / ops.gelu, the exact GELU)
    or those two functions themselves."""
    if not isinstance(activation, (str, Cell)) and not callable(activation):
        raise ValueError(f"The argument 'activation' must be str, callable or Cell instance, "
                         f"but get {activation}.")
    if isinstance(activation, Cell) and not isinstance(activation, (ReLU, GELU)):
        raise ValueError(f"The argument 'activation' must be nn.ReLU or nn.GELU instance, but "
                         f"get {activation}.")
    if callable(activation) and activation is not ops.relu and activation is not ops.gelu:
        raise ValueError(f"The argument 'activation' must be ops.relu or ops.gelu instance, but "
                         f"get {activation}.")
    if isinstance(activation, str):
        if activation == "relu":
            return ops.relu
        if activation == "gelu":
            return ops.gelu
        raise ValueError(f"The activation must be relu/gelu, but get {activation}")
    return activation


def _check_kpm(mask):
    if mask is not None and not (mask.dtype.is_bool or mask.dtype.is_floating):
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class _LayerBase(Cell):
    """The parts shared by the encoder and decoder layers."""

    def _init_common(self, d_model, nhead, dim_feedforward, dropout, activation,
                     layer_norm_eps, batch_first, norm_first, dtype):
        self.dense1 = Dense(d_model, dim_feedforward, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(d_model)), dtype=dtype)
        self.dropout = Dropout(p=dropout)
        self.dense2 = Dense(dim_feedforward, d_model, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(dim_feedforward)), dtype=dtype)
        self.activation1 = activation
        self.activation = _activation(activation)
        self.d_model = d_model
        self.nhead = nhead
        self.dim_feedforward = dim_feedforward
        self.dropout_num = dropout
        self.layernorm_eps = layer_norm_eps
        self.batch_first = batch_first
        self.norm_first = norm_first
        self.dtype = dtype

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x, dropout_out):
        x = self.dense2(self.dropout(self.activation(self.dense1(x))))
        return dropout_out(x)


class TransformerEncoderLayer(_LayerBase):
    """Self-attention then a feed-forward block, each with a residual connection and a
    LayerNorm (after, or before with ``norm_first``).

    ``TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation='relu', layer_norm_eps=1e-5, batch_first=False, norm_first=False,
    dtype=float32)``; ``construct(src, src_mask=None, src_key_padding_mask=None)``.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 dtype=mdt.float32):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self._init_common(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                          batch_first, norm_first, dtype)
        self.norm1 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p=dropout)
        self.dropout2 = Dropout(p=dropout)

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm(src_key_padding_mask)
        x = src
        if self.norm_first:
            x = F.add(x, self._sa_block(self.norm1(x), src_mask, src_key_padding_mask))
            return F.add(x, self._ff_block(self.norm2(x), self.dropout2))
        x = self.norm1(F.add(x, self._sa_block(x, src_mask, src_key_padding_mask)))
        return self.norm2(F.add(x, self._ff_block(x, self.dropout2)))


class TransformerDecoderLayer(_LayerBase):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward block,
    each with a residual connection and a LayerNorm.

    Same arguments as :class:`TransformerEncoderLayer`; ``construct(tgt, memory,
    tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)``.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 dtype=mdt.float32):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, dtype=dtype)
        self._init_common(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                          batch_first, norm_first, dtype)
        self.norm1 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm3 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p=dropout)
        self.dropout2 = Dropout(p=dropout)
        self.dropout3 = Dropout(p=dropout)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = F.add(x, self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask))
            x = F.add(x, self._mha_block(self.norm2(x), memory, memory_mask,
                                         memory_key_padding_mask))
            return F.add(x, self._ff_block(self.norm3(x), self.dropout3))
        x = self.norm1(F.add(x, self._sa_block(x, tgt_mask, tgt_key_padding_mask)))
        x = self.norm2(F.add(x, self._mha_block(x, memory, memory_mask,
                                                memory_key_padding_mask)))
        return self.norm3(F.add(x, self._ff_block(x, self.dropout3)))


def _copies(layer_class, layer, num_layers):
    """``num_layers`` fresh layers with ``layer``'s settings, all holding the first one's
    initial values (MindSpore deep-copies one new layer)."""
    check_positive_int(num_layers, "num_layers", layer_class.__name__)
    args = (layer.d_model, layer.nhead, layer.dim_feedforward, layer.dropout_num,
            layer.activation1, layer.layernorm_eps, layer.batch_first, layer.norm_first)
    layers = [layer_class(*args, dtype=layer.dtype) for _ in range(num_layers)]
    first = [p for _, p in layers[0].parameters_and_names()]
    for other in layers[1:]:
        for src, (_, dst) in zip(first, other.parameters_and_names()):
            dst.set_data(Tensor(src.asnumpy()))
    return CellList(layers)


class TransformerEncoder(Cell):
    """``num_layers`` encoder layers (copies of ``encoder_layer``'s configuration) and an
    optional final ``norm``; ``construct(src, src_mask=None, src_key_padding_mask=None)``."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _copies(TransformerEncoderLayer, encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm(src_key_padding_mask)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(Cell):
    """``num_layers`` decoder layers and an optional final ``norm``;
    ``construct(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)``."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _copies(TransformerDecoderLayer, decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask)
        return output if self.norm is None else self.norm(output)


class Transformer(Cell):
    """Encoder-decoder transformer (Vaswani et al. 2017) with MindSpore's defaults
    (d_model 512, 8 heads, 6 + 6 layers, feed-forward 2048, dropout 0.1); every parameter
    of more than one axis is re-initialised Xavier-uniform. ``construct(src, tgt,
    src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None)``."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, dtype=mdt.float32):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps,
                                                        dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps,
                                                        dtype=dtype))
        for _, p in self.parameters_and_names():
            if p.ndim > 1:
                p.set_data(initializer("xavier_uniform", p.shape, p.dtype))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                  src_key_padding_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        batched = src.ndim == 3
        src_batch = src.shape[0] if self.batch_first else src.shape[1]
        tgt_batch = tgt.shape[0] if self.batch_first else tgt.shape[1]
        if batched and src_batch != tgt_batch:
            raise ValueError("The number of batch size for 'src' and 'tgt' must be equal.")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError("The number of features for 'src' and 'tgt' must be equal to "
                             "`d_model`.")
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
