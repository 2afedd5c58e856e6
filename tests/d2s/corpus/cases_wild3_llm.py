"""Decoder-only LLM code as 2025-era repos write it (Llama/Mistral/Mixtral/Gemma ports):
rotary caches grown when a longer sequence arrives, KV caches as returned tuples and as
buffers written at a position, Mixtral-style expert loops that skip empty experts, top-p and
min-p sampling with the noise passed in, repetition penalties, speculative-decoding
acceptance, sliding-window masks and logit soft-capping."""
import math
from dataclasses import dataclass

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


def _np_rope_cache(seq_len, dim, base=10000.0):
    inv = 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float32) / dim)
    freqs = np.outer(np.arange(seq_len, dtype=np.float32), inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


class GrowingRotaryEmbedding(nn.Layer):
    """Llama's rotary embedding: cos/sin caches are buffers, rebuilt (reassigned) when a
    longer sequence than any seen arrives."""

    def __init__(self, dim=4, max_position_embeddings=3, base=10000.0):
        super().__init__()
        self.dim, self.base = dim, base
        inv_freq = 1.0 / (base ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
        self.register_buffer("inv_freq", inv_freq, persistable=False)
        self._set_cos_sin_cache(max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = paddle.arange(seq_len, dtype="float32")
        freqs = paddle.outer(t, self.inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)
        self.register_buffer("cos_cached", emb.cos(), persistable=False)
        self.register_buffer("sin_cached", emb.sin(), persistable=False)

    def forward(self, x, seq_len):
        if seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len)
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


case(args=[(rand(1, 2, 4), 2), (rand(1, 5, 4), 5)], rtol=1e-5,
     atol=1e-6)(GrowingRotaryEmbedding)


def _rotate_half_np(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def _np_apply_rope(q, k, position_ids):
    cos, sin = _np_rope_cache(int(position_ids.max()) + 1, q.shape[-1])
    cos, sin = cos[position_ids][:, None], sin[position_ids][:, None]
    return q * cos + _rotate_half_np(q) * sin, k * cos + _rotate_half_np(k) * sin


def _rotate_half(x):
    x1, x2 = x.chunk(2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


@case(args=[(rand(1, 2, 3, 4), rand(1, 2, 3, 4), i64([[0, 1, 2]])),
            (rand(2, 1, 2, 4), rand(2, 1, 2, 4), i64([[3, 4], [0, 1]])),
            (rand(1, 1, 2, 4), rand(1, 1, 2, 4), i64([5, 2]))],
      ref=lambda q, k, p: _np_apply_rope(q, k, p.reshape(1, -1) if p.ndim == 1 else p),
      rtol=1e-5, atol=1e-5)
def apply_rotary_pos_emb(q, k, position_ids):
    """Positions are a tensor: the cache length comes from their maximum (an int() of a
    tensor sizing a creation op)."""
    if position_ids.ndim == 1:
        position_ids = position_ids.unsqueeze(0)
    dim = q.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    max_pos = int(position_ids.max()) + 1
    freqs = paddle.outer(paddle.arange(max_pos, dtype="float32"), inv_freq)
    emb = paddle.concat([freqs, freqs], axis=-1)
    cos = emb.cos()[position_ids].unsqueeze(1)
    sin = emb.sin()[position_ids].unsqueeze(1)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


class AttentionWithPastKV(nn.Layer):
    """HF-style attention: past_key_value is a tuple passed in and returned, None on the
    first step; use_cache decides whether the new cache is returned."""

    def __init__(self, dim=4):
        super().__init__()
        self.q_proj, self.k_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.v_proj, self.o_proj = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, hidden, past_key_value=None, use_cache=True):
        q, k, v = self.q_proj(hidden), self.k_proj(hidden), self.v_proj(hidden)
        if past_key_value is not None:
            k = paddle.concat([past_key_value[0], k], axis=1)
            v = paddle.concat([past_key_value[1], v], axis=1)
        past = (k, v) if use_cache else None
        scores = q @ k.transpose([0, 2, 1]) / math.sqrt(q.shape[-1])
        q_len, kv_len = q.shape[1], k.shape[1]
        if q_len > 1:
            causal = paddle.triu(paddle.full([q_len, kv_len], float("-inf")),
                                 diagonal=kv_len - q_len + 1)
            scores = scores + causal
        out = self.o_proj(F.softmax(scores, axis=-1) @ v)
        return out, past


case(args=[(rand(1, 3, 4), None, True), (rand(1, 1, 4), (rand(1, 3, 4), rand(1, 3, 4)), True),
           (rand(1, 2, 4), (rand(1, 2, 4), rand(1, 2, 4)), False)], rtol=1e-4,
     atol=1e-5)(AttentionWithPastKV)


class StaticKVCache(nn.Layer):
    """A preallocated cache buffer written at the positions of the new tokens (gpt-fast's
    KVCache.update), then read up to the current length."""

    def __init__(self, max_len=6, dim=2):
        super().__init__()
        self.register_buffer("k_cache", paddle.zeros([1, max_len, dim]))

    def forward(self, k_new, start_pos):
        seq = k_new.shape[1]
        self.k_cache[:, start_pos:start_pos + seq] = k_new
        keys = self.k_cache[:, :start_pos + seq]
        if start_pos == 0:
            return keys.sum(axis=1)
        return keys.mean(axis=1)


case(args=[(rand(1, 2, 2), 0), (rand(1, 1, 2), 3)])(StaticKVCache)


class MixtralSparseMoe(nn.Layer):
    """Mixtral's block: top-2 routing, then a Python loop over experts that gathers the
    tokens routed to each and skips an expert no token chose (`top_x.shape[0] == 0`)."""

    def __init__(self, dim=3, num_experts=3, top_k=2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(dim, num_experts, bias_attr=False)
        self.experts = nn.LayerList([nn.Linear(dim, dim) for _ in range(num_experts)])

    def forward(self, hidden):
        logits = self.gate(hidden)
        weights = F.softmax(logits, axis=-1)
        weights, selected = paddle.topk(weights, self.top_k, axis=-1)
        weights = weights / weights.sum(axis=-1, keepdim=True)
        out = paddle.zeros_like(hidden)
        for e in range(self.num_experts):
            token_idx, slot = paddle.nonzero(selected == e, as_tuple=True)
            if token_idx.shape[0] == 0:
                continue
            expert_in = paddle.gather(hidden, token_idx)
            w = weights[token_idx, slot].unsqueeze(-1)
            out = paddle.scatter(out, token_idx, self.experts[e](expert_in) * w,
                                 overwrite=False)
        return out, logits


case(args=[(rand(4, 3),), (f32([[1, 0, 0], [2, 0, 0]]),)], rtol=1e-4,
     atol=1e-5)(MixtralSparseMoe)


def _np_switch_aux(logits, k):
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    top = np.argsort(-p, axis=-1, kind="stable")[:, :k]
    mask = np.zeros_like(p)
    np.put_along_axis(mask, top, 1.0, axis=-1)
    return np.float32(p.shape[-1] * np.sum(mask.mean(0) * p.mean(0)))


@case(args=[(rand(6, 4), 1), (rand(6, 4), 2)], ref=_np_switch_aux, rtol=1e-5)
def load_balancing_loss(router_logits, top_k):
    probs = F.softmax(router_logits, axis=-1)
    _, selected = paddle.topk(probs, top_k, axis=-1)
    expert_mask = F.one_hot(selected, router_logits.shape[-1])
    if top_k > 1:
        expert_mask = expert_mask.sum(axis=1)
    else:
        expert_mask = expert_mask.squeeze(1)
    tokens_per_expert = expert_mask.astype("float32").mean(axis=0)
    router_prob_per_expert = probs.mean(axis=0)
    return router_logits.shape[-1] * paddle.sum(tokens_per_expert * router_prob_per_expert)


def _np_top_p(logits, u, temperature, top_p):
    if temperature == 0:
        return logits.argmax(-1)
    probs = np.exp(logits / temperature)
    probs = probs / probs.sum(-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")
    sp = np.take_along_axis(probs, order, -1)
    cum = np.cumsum(sp, -1)
    sp = np.where(cum - sp > top_p, 0.0, sp)
    sp = sp / sp.sum(-1, keepdims=True)
    choice = (np.cumsum(sp, -1) < u[:, None]).sum(-1)
    choice = np.minimum(choice, logits.shape[-1] - 1)
    return np.take_along_axis(order, choice[:, None], -1)[:, 0]


@case(args=[(f32([[2.0, 1.0, 0.1, -1.0]]), f32([0.7]), 0.0, 0.9),
            (f32([[2.0, 1.0, 0.1, -1.0], [0.0, 0.0, 3.0, 0.0]]), f32([0.95, 0.2]), 1.0, 0.8)],
      ref=_np_top_p)
def sample_top_p(logits, uniform, temperature, top_p):
    """Nucleus sampling with the uniform draws passed in (reproducible); temperature 0 is
    greedy."""
    if temperature == 0:
        return paddle.argmax(logits, axis=-1)
    probs = F.softmax(logits / temperature, axis=-1)
    probs_sort, probs_idx = paddle.sort(probs, axis=-1, descending=True), paddle.argsort(
        probs, axis=-1, descending=True)
    probs_sum = paddle.cumsum(probs_sort, axis=-1)
    mask = probs_sum - probs_sort > top_p
    probs_sort = paddle.where(mask, paddle.zeros_like(probs_sort), probs_sort)
    probs_sort = probs_sort / probs_sort.sum(axis=-1, keepdim=True)
    choice = (paddle.cumsum(probs_sort, axis=-1) < uniform.unsqueeze(-1)).astype("int64")
    choice = paddle.minimum(choice.sum(axis=-1), paddle.to_tensor(logits.shape[-1] - 1))
    return paddle.take_along_axis(probs_idx, choice.unsqueeze(-1), axis=-1).squeeze(-1)


@case(args=[(f32([[2.0, -1.0, 0.5]]), i64([[0, 1]]), 1.5),
            (f32([[2.0, -1.0, 0.5]]), i64([[0, 1]]), 1.0)])
def repetition_penalty(scores, input_ids, penalty):
    """HF's RepetitionPenaltyLogitsProcessor: gather the scores of seen tokens, shrink them,
    scatter them back."""
    if penalty == 1.0:
        return scores
    score = paddle.take_along_axis(scores, input_ids, axis=1)
    score = paddle.where(score < 0, score * penalty, score / penalty)
    return paddle.put_along_axis(scores, input_ids, score, axis=1)


@case(args=[(f32([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]]), 0.4),
            (f32([[0.6, 0.3, 0.1]]), 0.0)])
def min_p_filter(probs, min_p):
    if min_p <= 0.0:
        return probs
    p_max = probs.max(axis=-1, keepdim=True)
    filtered = paddle.where(probs < min_p * p_max, paddle.zeros_like(probs), probs)
    return filtered / filtered.sum(axis=-1, keepdim=True)


@case(args=[(i64([3, 5, 7, 1]), i64([3, 5, 2, 1])), (i64([3, 5]), i64([3, 5])),
            (i64([4, 5]), i64([3, 5]))])
def speculative_accept_count(draft_tokens, target_tokens):
    """Speculative decoding: accept draft tokens until the first disagreement; a full
    acceptance earns the bonus token (a for/else over a tensor break)."""
    n_accepted = 0
    for i in range(draft_tokens.shape[0]):
        if draft_tokens[i] != target_tokens[i]:
            break
        n_accepted += 1
    else:
        n_accepted += 1
    return n_accepted


@case(args=[(f32([[0, 1, 0, 0]]), i64(2), 3, 1), (f32([[0, 1, 0, 0], [0, 0, 0, 1]]), i64(9), 3, 9),
            (f32([[0, 1, 0, 0], [1, 0, 0, 0]]), i64(3), 4, 0)])
def greedy_generate_until_eos(h0, eos_token_id, max_new_tokens, pad_token_id):
    """HF's greedy loop with unfinished_sequences: finished rows emit padding, the loop stops
    when every row is finished (a tensor break), the tokens are a Python list of tensors."""
    W = paddle.to_tensor(np.eye(4, dtype=np.float32)[[1, 2, 3, 0]])
    h = h0
    unfinished = paddle.ones([h.shape[0]], dtype="int64")
    tokens = []
    for _ in range(max_new_tokens):
        next_tok = paddle.argmax(h, axis=-1)
        next_tok = next_tok * unfinished + pad_token_id * (1 - unfinished)
        tokens.append(next_tok)
        unfinished = unfinished * (next_tok != eos_token_id).astype("int64")
        if unfinished.max() == 0:
            break
        h = F.one_hot(next_tok, 4).astype("float32") @ W
    return paddle.stack(tokens, axis=1)


def _np_sliding_mask(q_len, window):
    i = np.arange(q_len)[:, None]
    j = np.arange(q_len)[None]
    allowed = (j <= i) & (i - j < window)
    return np.where(allowed, 0.0, -np.inf).astype(np.float32)


@case(args=[(rand(1, 4, 2), 2), (rand(1, 3, 2), 8)],
      ref=lambda x, w: _np_sliding_mask(x.shape[1], w))
def sliding_window_causal_mask(x, sliding_window):
    """Mistral: causal, and tokens further back than the window are masked too when the
    sequence is longer than the window."""
    q_len = x.shape[1]
    mask = paddle.triu(paddle.full([q_len, q_len], float("-inf")), diagonal=1)
    if q_len > sliding_window:
        far = paddle.tril(paddle.ones([q_len, q_len]), diagonal=-sliding_window) > 0
        mask = paddle.where(far, paddle.full_like(mask, float("-inf")), mask)
    return mask


@dataclass
class SoftcapConfig:
    hidden: int = 4
    final_logit_softcapping: float | None = 3.0
    tie_embeddings: bool = True


class SoftcappedLMHead(nn.Layer):
    """Gemma-2's head: tied embeddings decided by a config dataclass, logits soft-capped when
    the config asks, and a loss only when labels are given."""

    def __init__(self, config=None):
        super().__init__()
        self.config = config or SoftcapConfig()
        self.embed = nn.Embedding(5, self.config.hidden)
        if not self.config.tie_embeddings:
            self.lm_head = nn.Linear(self.config.hidden, 5, bias_attr=False)

    def forward(self, hidden, labels=None):
        if self.config.tie_embeddings:
            logits = hidden @ self.embed.weight.T
        else:
            logits = self.lm_head(hidden)
        cap = self.config.final_logit_softcapping
        if cap is not None:
            logits = paddle.tanh(logits / cap) * cap
        if labels is None:
            return {"logits": logits}
        loss = F.cross_entropy(logits.reshape([-1, 5]), labels.reshape([-1]))
        return {"logits": logits, "loss": loss}


case(args=[(rand(1, 2, 4), None), (rand(1, 2, 4), i64([[1, 4]]))], rtol=1e-5,
     atol=1e-5)(SoftcappedLMHead)


@case(args=[(rand(1, 2, 3, 2), 1), (rand(1, 2, 3, 2), 2)],
      ref=lambda x, n: np.repeat(x, n, axis=1))
def repeat_kv(hidden_states, n_rep):
    batch, num_kv_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states.unsqueeze(2).expand(
        [batch, num_kv_heads, n_rep, slen, head_dim])
    return hidden_states.reshape([batch, num_kv_heads * n_rep, slen, head_dim])


@case(args=[(rand(2, 4, 3), [4, 2]), (np.zeros([2, 4, 3], np.float32), [1, 3])])
def masked_mean_from_lengths(x, lengths):
    """Sentence embeddings: a padding mask built row by row from a Python list of lengths,
    mean pooling, and a row whose pooled norm is tiny is left unnormalised."""
    mask = paddle.zeros(x.shape[:2])
    for i, n in enumerate(lengths):
        mask[i, :n] = 1.0
    pooled = (x * mask.unsqueeze(-1)).sum(axis=1) / mask.sum(axis=1, keepdim=True)
    norm = paddle.linalg.norm(pooled, axis=-1, keepdim=True)
    if norm.min() > 1e-3:
        pooled = pooled / norm
    return pooled


class StreamingKVCacheWithEviction(nn.Layer):
    """StreamingLLM-style: keep the first `sink` tokens and the most recent ones; the cache is
    a buffer reassigned in forward when it grows past its budget."""

    def __init__(self, dim=2, sink=1, budget=4):
        super().__init__()
        self.sink, self.budget = sink, budget
        self.register_buffer("cache", paddle.zeros([0, dim]))

    def forward(self, new_kv, prefill=True):
        cache = new_kv if prefill else paddle.concat([self.cache, new_kv], axis=0)
        if cache.shape[0] > self.budget:
            recent = self.budget - self.sink
            cache = paddle.concat([cache[:self.sink], cache[-recent:]], axis=0)
        self.cache = cache
        return cache.sum(axis=0)


case(args=[(rand(3, 2), True), (rand(6, 2), True)])(StreamingKVCacheWithEviction)
