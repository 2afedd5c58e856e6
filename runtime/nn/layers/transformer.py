"""Attention and the Transformer, following Paddle 2.x (`paddle.nn.layer.transformer`).

Shapes are `[batch, seq_len, embed_dim]`. An `attn_mask` broadcasts to
`[batch, num_heads, query_len, key_len]`; a bool (or int) mask says where attention is
*allowed* (True / 1) and becomes an additive mask of 0 and -1e9; a float mask is added to the
scores as it is. Reshapes use 0 ("keep this dim") so unknown batch and sequence sizes work
while a static program is built.
"""
from __future__ import annotations

import collections

from ...ops import combine, creation, reduce
from ...ops import shape as shp
from ...ops.linalg import matmul
from .. import functional as F
from ..container import LayerList
from ..layer import Layer
from .common import Dropout, Linear
from .norm import LayerNorm


def _convert_attention_mask(attn_mask, dtype):
    """A bool/int 'may attend' mask -> additive 0 / -1e9; a float mask is cast to `dtype`."""
    if attn_mask is None:
        return None
    if not attn_mask.dtype.is_floating:
        return (attn_mask.astype(dtype) - 1.0) * 1e9
    return attn_mask if attn_mask.dtype == dtype else attn_mask.astype(dtype)


def _attr_list(attr, n: int) -> list:
    """Paddle lets `weight_attr` / `bias_attr` be one attr for all sublayers or a list."""
    if isinstance(attr, (list, tuple)):
        if len(attr) != n:
            raise ValueError(f"expected 1 or {n} parameter attributes, got {len(attr)}")
        return list(attr)
    return [attr] * n


class MultiHeadAttention(Layer):
    """Scaled dot-product attention over `num_heads` heads with input and output projections.

    Returns `out`, or a tuple `(out, weights)` with `need_weights=True` (and the updated cache
    last when `cache` is given).

    >>> import runtime as rt
    >>> mha = rt.nn.MultiHeadAttention(16, 4)
    >>> q = rt.randn([2, 5, 16])
    >>> mha(q, q, q).shape
    [2, 5, 16]
    """

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 kdim: int | None = None, vdim: int | None = None, need_weights: bool = False,
                 weight_attr=None, bias_attr=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim ({embed_dim}) must be a positive "
                             f"multiple of num_heads ({num_heads})")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.head_dim = embed_dim // num_heads
        self.dropout, self.need_weights = dropout, need_weights
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x):
        """[B, L, E] -> [B, heads, L, head_dim]."""
        x = shp.reshape(x, [0, 0, self.num_heads, self.head_dim])
        return shp.transpose(x, [0, 2, 1, 3])

    def compute_kv(self, key, value):
        """Projected keys and values, split into heads."""
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key, value=None, type=Cache):
        """A cache for incremental decoding: `Cache` starts empty (or from the given
        key/value tensors) and grows each call; `StaticCache` holds projected encoder keys."""
        if type is MultiHeadAttention.StaticCache:
            return MultiHeadAttention.StaticCache(*self.compute_kv(key, value))
        if value is None:
            batch = reduce.sum(creation.zeros_like(key), axis=[1, 2])
            empty = shp.reshape(batch, [-1, 1, 1, 1]) + creation.zeros(
                [self.num_heads, 0, self.head_dim], dtype=key.dtype)
            return MultiHeadAttention.Cache(empty, empty)
        return MultiHeadAttention.Cache(key, value)

    def _prepare_qkv(self, query, key, value, cache):
        q = self._heads(self.q_proj(query))
        if isinstance(cache, MultiHeadAttention.StaticCache):
            return q, cache.k, cache.v, cache
        k, v = self.compute_kv(key, value)
        if isinstance(cache, MultiHeadAttention.Cache):
            k = combine.concat([cache.k, k], axis=2)
            v = combine.concat([cache.v, v], axis=2)
            cache = MultiHeadAttention.Cache(k, v)
        return q, k, v, cache

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        key = query if key is None else key
        value = query if value is None else value
        q, k, v, cache = self._prepare_qkv(query, key, value, cache)
        scores = matmul(q * (self.head_dim ** -0.5), k, transpose_y=True)
        if attn_mask is not None:
            scores = scores + _convert_attention_mask(attn_mask, scores.dtype)
        weights = F.softmax(scores, axis=-1)
        if self.dropout:
            weights = F.dropout(weights, self.dropout, training=self.training,
                                mode="upscale_in_train")
        out = shp.transpose(matmul(weights, v), [0, 2, 1, 3])
        out = self.out_proj(shp.reshape(out, [0, 0, self.embed_dim]))
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(cache)
        return out if len(outs) == 1 else tuple(outs)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


class _TransformerLayer(Layer):
    """What encoder and decoder layers share: their config, one MultiHeadAttention per name in
    `ATTENTIONS`, the feed-forward block, and one LayerNorm and Dropout per residual block."""

    ATTENTIONS: tuple = ()

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: float | None = None,
                 act_dropout: float | None = None, normalize_before: bool = False,
                 weight_attr=None, bias_attr=None, layer_norm_eps: float = 1e-5):
        super().__init__()
        # The stacks build their other layers from this config, as Paddle does
        self._config = {
            "d_model": d_model, "nhead": nhead, "dim_feedforward": dim_feedforward,
            "dropout": dropout, "activation": activation, "attn_dropout": attn_dropout,
            "act_dropout": act_dropout, "normalize_before": normalize_before,
            "weight_attr": weight_attr, "bias_attr": bias_attr, "layer_norm_eps": layer_norm_eps}
        if not hasattr(F, activation):
            raise ValueError(f"{type(self).__name__}: unknown activation {activation!r}")
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        n_blocks = len(self.ATTENTIONS) + 1
        weight_attrs = _attr_list(weight_attr, n_blocks)
        bias_attrs = _attr_list(bias_attr, n_blocks)
        for name, w_attr, b_attr in zip(self.ATTENTIONS, weight_attrs, bias_attrs):
            setattr(self, name, MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                                   weight_attr=w_attr, bias_attr=b_attr))
        self.linear1 = Linear(d_model, dim_feedforward, weight_attrs[-1], bias_attr=bias_attrs[-1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weight_attrs[-1], bias_attr=bias_attrs[-1])
        for i in range(1, n_blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, layer_norm_eps))
        for i in range(1, n_blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
        self.activation = getattr(F, activation)

    def _block(self, norm, dropout, x, fn):
        """x + dropout(fn(x)) with the LayerNorm before fn or after the sum."""
        out = fn(norm(x) if self.normalize_before else x)
        out = x + dropout(out)
        return out if self.normalize_before else norm(out)

    @staticmethod
    def _attend(attn, kv, mask, cache, new_caches: list):
        """fn(x) for `_block`: attention of x over `kv` (x itself when None); with a cache,
        the updated one is appended to `new_caches`."""
        def fn(x):
            keys = x if kv is None else kv
            if cache is None:
                return attn(x, keys, keys, mask)
            out, new_cache = attn(x, keys, keys, mask, cache)
            new_caches.append(new_cache)
            return out
        return fn

    def _feed_forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with a residual connection and
    LayerNorm (after the block by default, before it with `normalize_before=True`).

    >>> import runtime as rt
    >>> layer = rt.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0)
    >>> layer(rt.randn([2, 5, 16])).shape
    [2, 5, 16]
    """

    ATTENTIONS = ("self_attn",)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        new_caches = []
        src = self._block(self.norm1, self.dropout1, src,
                          self._attend(self.self_attn, None, src_mask, cache, new_caches))
        src = self._block(self.norm2, self.dropout2, src, self._feed_forward)
        return src if cache is None else (src, new_caches[0])

    def gen_cache(self, src):
        return self.self_attn.gen_cache(src, type=MultiHeadAttention.Cache)


class _TransformerStack(Layer):
    """What the encoder and decoder stacks share: building the layers and running them."""

    def __init__(self, layer: _TransformerLayer, num_layers: int, norm=None):
        super().__init__()
        self.layers = LayerList([layer if i == 0 else type(layer)(**layer._config)
                                 for i in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def _run(self, output, cache, *args, **kwargs):
        """Feed `output` through the layers (each given its own cache when `cache` is set)."""
        new_caches = []
        for i, layer in enumerate(self.layers):
            if cache is None:
                output = layer(output, *args, **kwargs)
            else:
                output, layer_cache = layer(output, *args, cache=cache[i], **kwargs)
                new_caches.append(layer_cache)
        if self.norm is not None:
            output = self.norm(output)
        return output if cache is None else (output, new_caches)


class TransformerEncoder(_TransformerStack):
    """`num_layers` encoder layers (the given one first, then fresh copies of its
    configuration with their own parameters), then an optional final `norm`.

    >>> import runtime as rt
    >>> enc = rt.nn.TransformerEncoder(rt.nn.TransformerEncoderLayer(16, 4, 32), 2)
    >>> enc(rt.randn([2, 5, 16])).shape
    [2, 5, 16]
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None):
        super().__init__(encoder_layer, num_layers, norm)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_attention_mask(src_mask, src.dtype)
        return self._run(src, cache, src_mask=src_mask)

    def gen_cache(self, src):
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, cross-attention over `memory`, then a feed-forward block, each with a
    residual connection and LayerNorm (post-norm by default).

    >>> import runtime as rt
    >>> layer = rt.nn.TransformerDecoderLayer(16, 4, 32)
    >>> layer(rt.randn([2, 3, 16]), rt.randn([2, 5, 16])).shape
    [2, 3, 16]
    """

    ATTENTIONS = ("self_attn", "cross_attn")

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, tgt.dtype)
        new_caches = []
        self_cache, cross_cache = (None, None) if cache is None else cache
        tgt = self._block(self.norm1, self.dropout1, tgt,
                          self._attend(self.self_attn, None, tgt_mask, self_cache, new_caches))
        tgt = self._block(self.norm2, self.dropout2, tgt,
                          self._attend(self.cross_attn, memory, memory_mask, cross_cache,
                                       new_caches))
        tgt = self._block(self.norm3, self.dropout3, tgt, self._feed_forward)
        return tgt if cache is None else (tgt, tuple(new_caches))

    def gen_cache(self, memory):
        """(an empty self-attention Cache, a StaticCache of the projected memory)."""
        return (self.self_attn.gen_cache(memory, type=MultiHeadAttention.Cache),
                self.cross_attn.gen_cache(memory, memory, type=MultiHeadAttention.StaticCache))


class TransformerDecoder(_TransformerStack):
    """`num_layers` decoder layers (the given one, then fresh copies of its configuration),
    then an optional final `norm`."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm=None):
        super().__init__(decoder_layer, num_layers, norm)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt_mask = _convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = _convert_attention_mask(memory_mask, tgt.dtype)
        return self._run(tgt, cache, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def gen_cache(self, memory):
        return [layer.gen_cache(memory) for layer in self.layers]


class Transformer(Layer):
    """Encoder-decoder Transformer (Vaswani et al.), both stacks followed by a LayerNorm.

    >>> import runtime as rt
    >>> model = rt.nn.Transformer(16, 4, 2, 2, 32)
    >>> tgt_mask = model.generate_square_subsequent_mask(3)
    >>> model(rt.randn([2, 5, 16]), rt.randn([2, 3, 16]), tgt_mask=tgt_mask).shape
    [2, 3, 16]
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu",
                 attn_dropout: float | None = None, act_dropout: float | None = None,
                 normalize_before: bool = False, weight_attr=None, bias_attr=None,
                 custom_encoder=None, custom_decoder=None):
        super().__init__()
        config = {"dropout": dropout, "activation": activation, "attn_dropout": attn_dropout,
                  "act_dropout": act_dropout, "normalize_before": normalize_before}
        weight_attrs, bias_attrs = _attr_list(weight_attr, 2), _attr_list(bias_attr, 2)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, dim_feedforward, weight_attr=weight_attrs[0],
                                    bias_attr=bias_attrs[0], **config),
            num_encoder_layers, LayerNorm(d_model))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, dim_feedforward, weight_attr=weight_attrs[1],
                                    bias_attr=bias_attrs[1], **config),
            num_decoder_layers, LayerNorm(d_model))
        self.d_model, self.nhead = d_model, nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        memory = self.encoder(src, src_mask=src_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    @staticmethod
    def generate_square_subsequent_mask(length: int):
        """A [length, length] float mask: 0 on and below the diagonal, -inf above it."""
        return creation.triu(creation.full([length, length], float("-inf")), 1)
