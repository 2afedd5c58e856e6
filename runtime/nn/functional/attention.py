"""`F.scaled_dot_product_attention` in Paddle's layout: [batch, seq_len, num_heads, head_dim].

softmax(q k^T / sqrt(head_dim) + mask) v, per batch and head. The heads axis is moved next to
the batch axis for the two matmuls and moved back afterwards, so the result has the query's
layout. A boolean `attn_mask` marks the pairs that take part (True = attend), a float mask is
added to the scores; both broadcast to [batch, num_heads, seq_q, seq_k].
"""
from __future__ import annotations

import math

from ...ops import creation as _creation
from ...ops import linalg as _linalg
from ...ops import logic as _logic
from ...ops import nn as _nn
from ...ops import shape as _shape
from ...ops.registry import OpError
from .common import dropout

_HEADS_FIRST = [0, 2, 1, 3]  # [B, S, H, D] <-> [B, H, S, D]; the permutation is its own inverse


def _check(query, key, value):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise OpError(f"scaled_dot_product_attention: query, key and value must be 4-D "
                      f"[batch, seq_len, num_heads, head_dim], got shapes {query.shape}, "
                      f"{key.shape}, {value.shape}")


def _causal_mask(seq_q: int, seq_k: int, dtype):
    """0 where query i may see key j (j <= i + seq_k - seq_q), -inf elsewhere."""
    keep = _creation.tril(_creation.ones([seq_q, seq_k], "bool"), seq_k - seq_q)
    return _logic.where(keep, _creation.zeros([seq_q, seq_k], dtype),
                        _creation.full([seq_q, seq_k], float("-inf"), dtype))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, training: bool = True, name=None):
    """Attention of `query` [B, Sq, H, D] over `key` [B, Sk, H, D] and `value` [B, Sk, H, Dv];
    returns [B, Sq, H, Dv].

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> q = rt.ones([2, 5, 3, 8])
    >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    [2, 5, 3, 8]
    """
    _check(query, key, value)
    q = _shape.transpose(query, _HEADS_FIRST)
    k = _shape.transpose(key, _HEADS_FIRST)
    v = _shape.transpose(value, _HEADS_FIRST)
    scores = _linalg.matmul(q, k, transpose_y=True) * (1.0 / math.sqrt(query.shape[-1]))
    if is_causal:
        if query.shape[1] < 0 or key.shape[1] < 0:
            raise OpError(f"scaled_dot_product_attention: is_causal needs the sequence "
                          f"lengths when the program is built; query has shape "
                          f"{list(query.shape)} and key {list(key.shape)} (pass attn_mask, "
                          "or give the InputSpec a fixed seq_len)")
        scores = scores + _causal_mask(query.shape[1], key.shape[1], scores.dtype)
    if attn_mask is not None:
        if attn_mask.dtype == "bool":
            scores = _logic.where(attn_mask, scores, _creation.full_like(scores, float("-inf")))
        else:
            scores = scores + attn_mask
    weights = _nn.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=training)
    return _shape.transpose(_linalg.matmul(weights, v), _HEADS_FIRST)
