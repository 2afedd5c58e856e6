"""Transformer pieces as LLM repos write them: rotary embeddings with a cache, ALiBi slopes,
causal plus padding masks, sliding-window attention with a loop over blocks, layer-drop with a
Python probability, pre/post-norm chosen by config, a recompute helper, KV caches with a
Python position, and a config dataclass plumbed through `**kwargs`."""
import dataclasses
import math

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, i64, rand


def _rotate_half(x):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return paddle.concat([-x2, x1], axis=-1)


def _np_rope(x, offset, base):
    seq, dim = x.shape[-2], x.shape[-1]
    inv = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    t = np.arange(offset, offset + seq)
    freqs = np.outer(t, inv)
    emb = np.concatenate([freqs, freqs], -1)
    half = dim // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return (x * np.cos(emb) + rot * np.sin(emb)).astype(np.float32)


class RotaryEmbedding(nn.Layer):
    def __init__(self, dim=4, max_positions=16, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (paddle.arange(0, dim, 2).astype("float32") / dim))
        t = paddle.arange(max_positions).astype("float32")
        freqs = paddle.outer(t, inv_freq) if hasattr(paddle, "outer") else (
            t.unsqueeze(1) * inv_freq.unsqueeze(0))
        emb = paddle.concat([freqs, freqs], axis=-1)
        self.register_buffer("cos_cached", emb.cos(), persistable=False)
        self.register_buffer("sin_cached", emb.sin(), persistable=False)
        self.max_positions = max_positions

    def forward(self, q, k, offset=0):
        seq_len = q.shape[-2]
        if offset + seq_len > self.max_positions:
            raise ValueError(f"sequence of {offset + seq_len} exceeds {self.max_positions}")
        cos = self.cos_cached[offset:offset + seq_len]
        sin = self.sin_cached[offset:offset + seq_len]
        return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


case(args=[(rand(2, 3, 4), rand(2, 3, 4), 0), (rand(2, 3, 4), rand(2, 3, 4), 5),
           (rand(2, 3, 4), rand(2, 3, 4), 15)],
     ref=lambda q, k, o: (_np_rope(q, o, 10000.0), _np_rope(k, o, 10000.0)),
     raises=(ValueError,), rtol=1e-4, atol=1e-5)(RotaryEmbedding)


def _alibi_slopes(n_heads):
    def power_of_two_slopes(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return power_of_two_slopes(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return (power_of_two_slopes(closest)
            + _alibi_slopes(2 * closest)[0::2][:n_heads - closest])


def _np_alibi(n_heads, seq):
    slopes = np.asarray(_alibi_slopes(n_heads), np.float32)
    rel = np.arange(seq)[None, :] - np.arange(seq)[:, None]
    return (slopes[:, None, None] * rel[None]).astype(np.float32)


@case(args=[(4, 3), (6, 2)], ref=_np_alibi, rtol=1e-6)
def alibi_bias(n_heads, seq_len):
    slopes = paddle.to_tensor(_alibi_slopes(n_heads), dtype="float32")
    positions = paddle.arange(seq_len)
    relative = (positions.unsqueeze(0) - positions.unsqueeze(1)).astype("float32")
    return slopes.reshape([-1, 1, 1]) * relative.unsqueeze(0)


def _np_mask(ids, pad_id, causal):
    s = ids.shape[1]
    keep = (ids != pad_id)[:, None, None, :].repeat(s, 2)
    if causal:
        keep = keep & np.tril(np.ones((s, s), bool))[None, None]
    return np.where(keep, 0.0, -1e9).astype(np.float32)


@case(args=[(i64([[5, 6, 0], [7, 0, 0]]), 0, True), (i64([[5, 6, 0], [7, 0, 0]]), 0, False),
            (i64([[5, 6, 2], [7, 8, 9]]), None, True)],
      ref=lambda ids, pad, c: _np_mask(ids, -1 if pad is None else pad, c))
def build_attention_mask(input_ids, pad_token_id=None, causal=True):
    """HF-style extended attention mask: [B, 1, S, S] with 0 to keep and -1e9 to drop."""
    bsz, seq_len = input_ids.shape
    if pad_token_id is None:
        keep = paddle.ones([bsz, 1, seq_len, seq_len], dtype="bool")
    else:
        keep = (input_ids != pad_token_id).unsqueeze(1).unsqueeze(1)
        keep = keep.expand([bsz, 1, seq_len, seq_len])
    if causal:
        tri = paddle.tril(paddle.ones([seq_len, seq_len])).astype("bool")
        keep = paddle.logical_and(keep, tri)
    return paddle.where(keep, paddle.zeros([1]), paddle.full([1], -1e9))


def _np_sliding(q, k, v, window):
    s = q.shape[0]
    scores = q @ k.T / np.sqrt(q.shape[1])
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    scores = np.where((j <= i) & (i - j < window), scores, -1e9)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return (w @ v).astype(np.float32)


@case(args=[(rand(6, 4), rand(6, 4), rand(6, 4), 2), (rand(6, 4), rand(6, 4), rand(6, 4), 6),
            (rand(3, 4), rand(3, 4), rand(3, 4), 1)], ref=_np_sliding, rtol=1e-4, atol=1e-5)
def sliding_window_attention(q, k, v, window):
    """Longformer-ish local causal attention computed query by query with a Python loop."""
    seq_len, dim = q.shape
    outputs = []
    for i in range(seq_len):
        start = max(0, i - window + 1)
        keys, values = k[start:i + 1], v[start:i + 1]
        scores = paddle.matmul(keys, q[i]) / math.sqrt(dim)
        weights = F.softmax(scores, axis=-1)
        outputs.append(paddle.matmul(weights, values))
    return paddle.stack(outputs)


@dataclasses.dataclass
class BlockConfig:
    hidden: int = 8
    heads: int = 2
    pre_norm: bool = True
    layer_drop: float = 0.0
    activation: str = "gelu"


class _Block(nn.Layer):
    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.cfg = cfg
        self.attn = nn.MultiHeadAttention(cfg.hidden, cfg.heads)
        self.ff1 = nn.Linear(cfg.hidden, cfg.hidden * 2)
        self.ff2 = nn.Linear(cfg.hidden * 2, cfg.hidden)
        self.norm1 = nn.LayerNorm(cfg.hidden)
        self.norm2 = nn.LayerNorm(cfg.hidden)
        self.act = getattr(F, cfg.activation, F.relu)

    def _ff(self, x):
        return self.ff2(self.act(self.ff1(x)))

    def forward(self, x, attn_mask=None):
        if self.cfg.pre_norm:
            h = self.norm1(x)
            x = x + self.attn(h, h, h, attn_mask=attn_mask)
            x = x + self._ff(self.norm2(x))
        else:
            x = self.norm1(x + self.attn(x, x, x, attn_mask=attn_mask))
            x = self.norm2(x + self._ff(x))
        return x


class TransformerWithLayerDrop(nn.Layer):
    """Layer-drop decided by Python draws passed in (a fixed list in tests), pre- or post-norm
    chosen per model, and the hidden states of every kept layer collected into a dict."""

    def __init__(self, n_layers=3, **kwargs):
        super().__init__()
        self.cfg = BlockConfig(**kwargs)
        self.layers = nn.LayerList([_Block(self.cfg) for _ in range(n_layers)])

    def forward(self, x, draws=None, output_hidden_states=False, causal=False):
        mask = None
        if causal:
            s = x.shape[1]
            mask = paddle.tril(paddle.ones([s, s])).astype("bool")
        hidden = [] if output_hidden_states else None
        for i, layer in enumerate(self.layers):
            if self.training and draws is not None and draws[i] < self.cfg.layer_drop:
                continue
            x = layer(x, attn_mask=mask)
            if hidden is not None:
                hidden.append(x)
        out = {"last_hidden_state": x}
        if hidden is not None:
            out["hidden_states"] = tuple(hidden)
        return out


case(args=[(rand(2, 3, 8), None, True, False), (rand(2, 3, 8), [0.1, 0.9, 0.5], False, True)],
     batch=lambda b: (rand(b, 3, 8),), rtol=1e-4, atol=1e-5)(TransformerWithLayerDrop)


class PostNormTransformer(TransformerWithLayerDrop):
    def __init__(self):
        super().__init__(n_layers=2, pre_norm=False, activation="relu")

    def forward(self, x, causal=False):
        return super().forward(x, causal=causal)["last_hidden_state"]


case(args=[(rand(2, 3, 8), False), (rand(2, 4, 8), True)], rtol=1e-4, atol=1e-5)(
    PostNormTransformer)


class TrainingLayerDrop(nn.Layer):
    """Layer-drop in training mode: the drop draws come from a Python list; eval is off."""

    def __init__(self):
        super().__init__()
        self.body = TransformerWithLayerDrop(n_layers=3, layer_drop=0.5)
        self.body.train()
        for layer in self.body.layers:
            layer.attn.dropout = 0.0

    def forward(self, x, draws):
        self.body.train()
        return self.body(x, draws=draws)["last_hidden_state"]


case(args=[(rand(2, 3, 8), [0.1, 0.9, 0.9]), (rand(2, 3, 8), [0.9, 0.9, 0.9])],
     rtol=1e-4, atol=1e-5)(TrainingLayerDrop)


def _checkpoint(function, *args, use_reentrant=True, **kwargs):
    """A gradient-checkpoint helper without the recompute: eager and static call it the same."""
    del use_reentrant
    return function(*args, **kwargs)


@case(args=[(rand(2, 4), True), (rand(2, 4), False)], rtol=1e-5, atol=1e-6)
class CheckpointedMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Sequential(nn.Linear(4, 4), nn.GELU()) for _ in range(3)])
        self.gradient_checkpointing = False

    def forward(self, x, checkpoint):
        self.gradient_checkpointing = checkpoint
        for block in self.blocks:
            if self.gradient_checkpointing:
                x = _checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return x


def _np_kv(k_cache, v_cache, k_new, v_new, position, q):
    k_cache, v_cache = k_cache.copy(), v_cache.copy()
    n = k_new.shape[0]
    k_cache[position:position + n] = k_new
    v_cache[position:position + n] = v_new
    keys, values = k_cache[:position + n], v_cache[:position + n]
    s = q @ keys.T / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    return ((w / w.sum(-1, keepdims=True)) @ values).astype(np.float32)


@case(args=[(np.zeros((6, 4), np.float32), np.zeros((6, 4), np.float32), rand(2, 4), rand(2, 4),
             0, rand(2, 4)),
            (rand(6, 4), rand(6, 4), rand(1, 4), rand(1, 4), 3, rand(1, 4)),
            (rand(6, 4), rand(6, 4), rand(2, 4), rand(2, 4), 5, rand(2, 4))],
      ref=_np_kv, raises=(IndexError,), rtol=1e-4, atol=1e-5)
def kv_cache_attention(k_cache, v_cache, k_new, v_new, position, q):
    """A static KV cache written at a Python position, attention over the filled prefix."""
    n = k_new.shape[0]
    if position + n > k_cache.shape[0]:
        raise IndexError(f"cache of {k_cache.shape[0]} cannot hold {position + n} positions")
    k_cache[position:position + n] = k_new
    v_cache[position:position + n] = v_new
    keys, values = k_cache[:position + n], v_cache[:position + n]
    scores = paddle.matmul(q, keys, transpose_y=True) / math.sqrt(q.shape[-1])
    return paddle.matmul(F.softmax(scores, axis=-1), values)


@case(args=[(rand(2, 3, 4), i64([3, 1]), "mean"), (rand(2, 3, 4), i64([2, 2]), "cls"),
            (rand(2, 3, 4), i64([1, 3]), "last")])
def pool_hidden(hidden, lengths, pooling="mean"):
    """Sentence embeddings by pooling type, masking padding by lengths."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = (paddle.arange(hidden.shape[1]).unsqueeze(0) < lengths.unsqueeze(1))
    mask = mask.astype(hidden.dtype).unsqueeze(-1)
    if pooling == "mean":
        return (hidden * mask).sum(axis=1) / mask.sum(axis=1)
    idx = (lengths - 1).unsqueeze(-1).unsqueeze(-1).expand([-1, 1, hidden.shape[2]])
    return paddle.take_along_axis(hidden, idx, axis=1).squeeze(1)


@case(args=[(rand(2, 5, 4), 2, 0.0), (rand(2, 5, 4), 1, 0.1), (rand(2, 4, 4), 2, 0.0)],
      batch=lambda b: (rand(b, 5, 4),), rtol=1e-4, atol=1e-5)
class GroupedQueryAttention(nn.Layer):
    """GQA: key/value heads repeated to the query heads; a soft cap on the logits if set."""

    def __init__(self, hidden=4, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.q_proj = nn.Linear(hidden, hidden)
        self.kv_proj = nn.Linear(hidden, 2 * self.head_dim)

    def forward(self, x, num_kv_heads=1, softcap=0.0):
        b, s, _ = x.shape
        q = self.q_proj(x).reshape([b, s, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])
        kv = self.kv_proj(x).reshape([b, s, 2, 1, self.head_dim])
        k, v = kv[:, :, 0].transpose([0, 2, 1, 3]), kv[:, :, 1].transpose([0, 2, 1, 3])
        n_rep = self.num_heads // num_kv_heads
        if n_rep > 1:
            k = k.tile([1, n_rep, 1, 1])
            v = v.tile([1, n_rep, 1, 1])
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        if softcap:
            scores = softcap * paddle.tanh(scores / softcap)
        causal = paddle.triu(paddle.full([s, s], float("-inf")), diagonal=1)
        out = paddle.matmul(F.softmax(scores + causal, axis=-1), v)
        return out.transpose([0, 2, 1, 3]).reshape([b, s, -1])
