"""Sequence-model code as NLP repos write it: seq2seq attention with padding masks, sinusoidal
and learned positional encodings, causal and dynamic padding masks, tokenizer-like padding and
truncation over Python lists, length-sorted batches and a pooler that picks by mask."""
import collections
import math

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, i64, rand

PAD_ID = 0
Seq2SeqOutput = collections.namedtuple("Seq2SeqOutput", ["logits", "attention", "mask"])


def make_pad_mask(lengths, max_len=None):
    """True at padded positions (ESPnet's helper)."""
    if max_len is None:
        max_len = int(lengths.max())
    seq_range = paddle.arange(0, max_len, dtype="int64")
    return seq_range.unsqueeze(0) >= lengths.unsqueeze(1)


@case(args=[(i64([3, 1, 2]), None), (i64([3, 1, 2]), 5), (i64([2, 2, 2]), None)])
def pad_mask_from_lengths(lengths, max_len):
    mask = make_pad_mask(lengths, max_len)
    if not mask.any():  # (eager code here returned `mask, None`: see docs/d2s.md)
        return mask, paddle.zeros([0], dtype="int64")
    return mask, mask.astype("int64").sum(axis=1)


def _np_sinusoid(n_pos, dim):
    pos = np.arange(n_pos)[:, None]
    div = np.exp(np.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    pe = np.zeros((n_pos, dim), np.float32)
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)
    return pe


class PositionalEncoding(nn.Layer):
    def __init__(self, d_model=6, max_len=16, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        position = paddle.arange(max_len, dtype="float32").unsqueeze(1)
        div_term = paddle.exp(paddle.arange(0, d_model, 2, dtype="float32")
                              * (-math.log(10000.0) / d_model))
        pe = paddle.zeros([max_len, d_model])
        pe[:, 0::2] = paddle.sin(position * div_term)
        pe[:, 1::2] = paddle.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))
        self.max_len = max_len

    def forward(self, x, offset=0):
        seq_len = x.shape[1]
        if offset + seq_len > self.max_len:
            raise ValueError(f"sequence of {offset + seq_len} positions, at most {self.max_len}")
        x = x + self.pe[:, offset:offset + seq_len]
        return self.dropout(x)


@case(args=[(np.zeros((2, 5, 6), np.float32), 0), (np.zeros((1, 3, 6), np.float32), 4),
            (np.zeros((1, 3, 6), np.float32), 15)],
      ref=lambda x, off: x + _np_sinusoid(16, 6)[None, off:off + x.shape[1]],
      raises=(ValueError,), rtol=1e-5, atol=1e-6)
class SinusoidalPositions(PositionalEncoding):
    pass


@case(args=[(rand(2, 4, 6),), (rand(2, 9, 6),)])
class LearnedPositions(nn.Layer):
    def __init__(self):
        super().__init__()
        self.pos_emb = nn.Embedding(8, 6)

    def forward(self, x):
        n = x.shape[1]
        if n > 8:  # longer than trained: reuse the last position (as some BERT ports do)
            ids = paddle.clip(paddle.arange(n), max=7)
        else:
            ids = paddle.arange(n)
        return x + self.pos_emb(ids).unsqueeze(0)


def causal_mask(size):
    return paddle.triu(paddle.full([size, size], float("-inf")), diagonal=1)


class Seq2SeqAttention(nn.Layer):
    """Luong attention over encoder outputs with a source padding mask."""

    def __init__(self, hidden=4, vocab=5, attn_type="general"):
        super().__init__()
        self.attn_type = attn_type
        self.W = nn.Linear(hidden, hidden, bias_attr=False)
        self.out = nn.Linear(2 * hidden, vocab)

    def score(self, dec, enc):
        if self.attn_type == "dot":
            return paddle.matmul(dec, enc, transpose_y=True)
        return paddle.matmul(self.W(dec), enc, transpose_y=True)

    def forward(self, dec, enc, src_lengths):
        scores = self.score(dec, enc)  # [B, T_dec, T_enc]
        pad = make_pad_mask(src_lengths, enc.shape[1]).unsqueeze(1)
        if pad.any():
            scores = paddle.where(pad, paddle.full_like(scores, -1e9), scores)
        attn = F.softmax(scores, axis=-1)
        context = paddle.bmm(attn, enc)
        logits = self.out(paddle.concat([context, dec], axis=-1))
        return Seq2SeqOutput(logits=logits, attention=attn, mask=pad)


@case(args=[(rand(2, 3, 4), rand(2, 5, 4), i64([5, 2])), (rand(2, 3, 4), rand(2, 5, 4), i64([5, 5]))],
      batch=lambda b: (rand(b, 3, 4), rand(b, 5, 4), i64(np.arange(b) % 5 + 1)))
class LuongAttention(Seq2SeqAttention):
    pass


@case(args=[(rand(2, 4, 4), rand(2, 4, 4), i64([4, 2]), True),
            (rand(2, 4, 4), rand(2, 4, 4), i64([4, 2]), False)])
class DecoderLayerWithMasks(nn.Layer):
    def __init__(self):
        super().__init__()
        self.self_attn = nn.MultiHeadAttention(4, 2)
        self.cross = Seq2SeqAttention(attn_type="dot")
        self.norm = nn.LayerNorm(4)

    def forward(self, tgt, memory, memory_lengths, use_causal):
        attn_mask = causal_mask(tgt.shape[1]) if use_causal else None
        h = self.norm(tgt + self.self_attn(tgt, tgt, tgt, attn_mask=attn_mask))
        out = self.cross(h, memory, memory_lengths)
        return out.logits, out.attention.sum(axis=-1)


def _np_pad_truncate(batch, max_length, pad_to_multiple):
    longest = min(max(len(s) for s in batch), max_length)
    if pad_to_multiple and longest % pad_to_multiple:
        longest += pad_to_multiple - longest % pad_to_multiple
    ids = np.full((len(batch), longest), PAD_ID, np.int64)
    mask = np.zeros((len(batch), longest), np.int64)
    for i, s in enumerate(batch):
        s = s[:max_length]
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    return ids, mask


_SEQS = [[5, 6, 7, 8, 9], [3, 4], [11, 12, 13]]


@case(args=[(_SEQS, 8, None), (_SEQS, 3, None), (_SEQS, 8, 4), ([[1]], 8, 4)],
      ref=lambda b, m, p: _np_pad_truncate(b, m, p))
def pad_and_truncate(batch_ids, max_length, pad_to_multiple_of):
    """A tokenizer's `__call__(padding=True, truncation=True)` over Python lists of ids."""
    truncated = [ids[:max_length] for ids in batch_ids]
    longest = max(len(ids) for ids in truncated)
    if pad_to_multiple_of is not None and longest % pad_to_multiple_of != 0:
        longest = (longest // pad_to_multiple_of + 1) * pad_to_multiple_of
    input_ids, attention_mask = [], []
    for ids in truncated:
        n_pad = longest - len(ids)
        input_ids.append(ids + [PAD_ID] * n_pad)
        attention_mask.append([1] * len(ids) + [0] * n_pad)
    return paddle.to_tensor(input_ids), paddle.to_tensor(attention_mask)


@case(args=[(i64([[5, 6, 0, 0], [3, 4, 7, 0]]), rand(2, 4, 3)),
            (i64([[5, 6, 1, 1], [3, 4, 7, 2]]), rand(2, 4, 3))],
      batch=lambda b: (i64(np.arange(4 * b).reshape(b, 4) % (b + 2)), rand(b, 4, 3)))
def dynamic_padding_mask_pool(input_ids, hidden):
    """Mean pooling over the non-pad tokens, with the mask computed from the ids."""
    mask = (input_ids != PAD_ID).astype(hidden.dtype).unsqueeze(-1)
    if mask.min() == 1:  # nothing padded: a plain mean
        return hidden.mean(axis=1)
    summed = (hidden * mask).sum(axis=1)
    counts = paddle.clip(mask.sum(axis=1), min=1e-9)
    return summed / counts


@case(args=[(i64([[2, 5, 6, 3, 0], [2, 7, 3, 0, 0]]), rand(2, 5, 3), 3),
            (i64([[2, 5, 6, 8, 9], [2, 7, 1, 4, 8]]), rand(2, 5, 3), 3)])
def last_token_pooling(input_ids, hidden, eos_id):
    """Pick each row's hidden state at its EOS (GPT-style classification heads); rows without
    an EOS use their last position."""
    is_eos = (input_ids == eos_id).astype("int64")
    has_eos = is_eos.sum(axis=1) > 0
    if not has_eos.any():
        return hidden[:, -1]
    eos_pos = paddle.argmax(is_eos, axis=1)
    last = paddle.full_like(eos_pos, input_ids.shape[1] - 1)
    pos = paddle.where(has_eos, eos_pos, last)
    batch = paddle.arange(input_ids.shape[0])
    return hidden[batch, pos]


@case(args=[(rand(3, 5, 2), i64([5, 2, 4])), (rand(3, 5, 2), i64([1, 1, 1]))],
      batch=lambda b: (rand(b, 5, 2), i64(np.arange(b) % 5 + 1)))
def sort_by_length_and_unsort(x, lengths):
    """pack_padded_sequence's bookkeeping: sort by length, run, restore the order."""
    sorted_lengths, order = paddle.sort(lengths, descending=True), paddle.argsort(
        lengths, descending=True)
    x_sorted = paddle.index_select(x, order, axis=0)
    max_len = sorted_lengths[0]
    steps = []
    for t in range(max_len):
        valid = (t < sorted_lengths).astype(x.dtype).unsqueeze(1)
        steps.append(x_sorted[:, t] * valid)
    out = paddle.stack(steps, axis=1).sum(axis=1)
    inverse = paddle.argsort(order)
    return paddle.index_select(out, inverse, axis=0)


@case(args=[(rand(2, 6, 4), 2), (rand(2, 6, 4), 3), (rand(2, 5, 4), 2)], raises=(AssertionError,))
def split_heads(x, num_heads):
    b, n, d = x.shape
    assert d % num_heads == 0, f"hidden size {d} is not a multiple of {num_heads} heads"
    head_dim = d // num_heads
    if n % 2:
        x = F.pad(x, [0, 0, 0, 1, 0, 0])
        n += 1
    return x.reshape([b, n, num_heads, head_dim]).transpose([0, 2, 1, 3])
