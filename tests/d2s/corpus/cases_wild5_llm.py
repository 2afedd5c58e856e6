"""LLM inference utilities as 2026 repos write them (HF-style generation loops, vLLM-like
samplers, PEFT LoRA, Mixtral/DeepSeek MoE ports): KV caches appended and trimmed in loops,
rotary embeddings with a position offset read from the cache, logits processors as callable
objects in a Python list, temperature/top-k/top-p sampling with the noise passed in,
repetition penalties over a Python list of generated ids, stop tokens with `break`, beam
bookkeeping in lists and dicts, per-step attention masks, a LoRA layer with a `self.merged`
flag, MoE routing with per-expert Python loops and `if mask.any():`, and Python numbers
(`.item()`, `float()`, `int()`) returned to the caller."""
import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

import runtime as paddle
from runtime import nn

from .registry import case, f32, i64, rand

F = paddle.nn.functional


# ---- KV cache -----------------------------------------------------------------------------
@case(args=[(rand(1, 2, 3, 4), rand(1, 2, 3, 4), 10), (rand(1, 2, 3, 4), rand(1, 2, 3, 4), 4)],
      ref=lambda k, v, w: (np.concatenate([k] * 3, axis=2)[:, :, -w:],
                           np.concatenate([v] * 3, axis=2)[:, :, -w:]))
def kv_cache_append_and_trim(k_new, v_new, window):
    """A sliding-window cache: three decode steps append their keys/values to a list-held
    cache, trimmed to the window once it overflows."""
    past = None
    for _ in range(3):
        if past is None:
            past = (k_new, v_new)
        else:
            k = paddle.concat([past[0], k_new], axis=2)
            v = paddle.concat([past[1], v_new], axis=2)
            if k.shape[2] > window:
                k, v = k[:, :, -window:], v[:, :, -window:]
            past = (k, v)
    return past


def _np_rope(x, offset):
    d = x.shape[-1]
    inv = 1.0 / 10000.0 ** (np.arange(0, d, 2, dtype=np.float32) / d)
    pos = np.arange(offset, offset + x.shape[2], dtype=np.float32)
    emb = np.concatenate([np.outer(pos, inv)] * 2, axis=-1)
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * np.cos(emb) + rot * np.sin(emb)


@case(args=[(rand(1, 2, 3, 4), None), (rand(1, 2, 1, 4), rand(1, 2, 5, 4))],
      ref=lambda q, past: _np_rope(q, 0 if past is None else past.shape[2]), atol=1e-5)
def rope_with_cache_offset(q, past_key):
    """The position offset of the new tokens is the cached length (`past_key.shape[2]`)."""
    past_len = past_key.shape[2] if past_key is not None else 0
    dim = q.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(past_len, past_len + q.shape[2], dtype="float32")
    freqs = paddle.outer(t, inv_freq)
    emb = paddle.concat([freqs, freqs], axis=-1)
    x1, x2 = q[..., : dim // 2], q[..., dim // 2:]
    return q * emb.cos() + paddle.concat([-x2, x1], axis=-1) * emb.sin()


# ---- sampling -----------------------------------------------------------------------------
def _np_sample(logits, gumbel, temperature, top_k):
    if temperature == 0.0:
        return int(logits.argmax())
    x = logits / temperature
    if top_k > 0:
        kth = np.sort(x)[-top_k]
        x = np.where(x < kth, -np.inf, x)
    return int((x + gumbel).argmax())


@case(args=[(f32([0.1, 2.0, 0.3, 1.9]), f32([0.0, 0.0, 0.0, 5.0]), 0.0, 0),
            (f32([0.1, 2.0, 0.3, 1.9]), f32([0.0, 0.0, 0.0, 5.0]), 0.7, 2),
            (f32([0.1, 2.0, 0.3, 1.9]), f32([4.0, 0.0, 0.0, 0.0]), 1.0, 0)],
      ref=_np_sample)
def sample_next_token(logits, gumbel, temperature, top_k):
    """Greedy when the temperature is 0, else Gumbel-max over the top-k logits; the token
    comes back as a Python int, as generation loops use it."""
    if temperature == 0.0:
        return int(paddle.argmax(logits))
    logits = logits / temperature
    if top_k > 0:
        top_vals, _ = paddle.topk(logits, top_k)
        logits = paddle.where(logits < top_vals[-1], paddle.full_like(logits, -float("inf")),
                              logits)
    return int((logits + gumbel).argmax())


def _np_top_p(logits, top_p):
    order = np.argsort(-logits, kind="stable")
    probs = np.exp(logits[order] - logits.max())
    probs /= probs.sum()
    remove = np.cumsum(probs) - probs > top_p
    out = logits.copy()
    out[order[remove]] = -np.inf
    return out


@case(args=[(f32([3.0, 1.0, 0.5, 2.5]), 0.5), (f32([3.0, 1.0, 0.5, 2.5]), 1.0),
            (f32([0.2, 0.1, 0.3, 0.0]), 0.9)],
      ref=_np_top_p)
def top_p_warper(logits, top_p):
    """HF's TopPLogitsWarper on one row: keep the smallest prefix of sorted tokens whose
    mass passes top_p (a `top_p >= 1.0` short-cut returns the scores untouched)."""
    if top_p >= 1.0:
        return logits
    sorted_logits = paddle.sort(logits, descending=True)
    sorted_idx = paddle.argsort(logits, descending=True)
    probs = F.softmax(sorted_logits, axis=-1)
    cum = paddle.cumsum(probs, axis=-1)
    remove_sorted = (cum - probs) > top_p
    remove = paddle.scatter(paddle.zeros_like(remove_sorted.astype("int32")), sorted_idx,
                            remove_sorted.astype("int32"))
    return paddle.where(remove > 0, paddle.full_like(logits, -float("inf")), logits)


def _np_rep_penalty(scores, generated, penalty):
    out = scores.copy()
    for tok in set(generated):
        s = out[tok]
        out[tok] = s / penalty if s > 0 else s * penalty
    return out


@case(args=[(f32([1.0, -2.0, 0.5, 3.0]), [0, 1, 1], 2.0), (f32([1.0, -2.0, 0.5, 3.0]), [3], 1.5),
            (f32([1.0, -2.0, 0.5, 3.0]), [], 2.0)],
      ref=_np_rep_penalty)
def repetition_penalty_over_generated_list(scores, generated, penalty):
    """CTRL's repetition penalty applied token by token over a Python list of generated
    ids: the sign of each score decides divide or multiply."""
    scores = scores.clone()
    for tok in set(generated):
        s = scores[tok]
        scores[tok] = s / penalty if s > 0 else s * penalty
    return scores


class _TemperatureWarper:
    def __init__(self, temperature):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class _NoRepeatLast:
    """Forbid repeating the last generated token (a tiny no_repeat_ngram_size=1)."""

    def __call__(self, input_ids, scores):
        if len(input_ids) == 0:
            return scores
        last = input_ids[-1]
        return paddle.where(paddle.arange(scores.shape[-1]) == last,
                            paddle.full_like(scores, -1e9), scores)


@case(args=[(f32([0.5, 2.0, 1.0]), [1], 2.0), (f32([0.5, 2.0, 1.0]), [], 1.0),
            (f32([0.5, 2.0, 1.0]), [0, 2], 0.5)])
def logits_processor_list(scores, input_ids, temperature):
    """A LogitsProcessorList: callable objects in a Python list applied in order; the token
    chosen and its log-probability come back as Python numbers."""
    processors = [_NoRepeatLast()]
    if temperature != 1.0:
        processors.append(_TemperatureWarper(temperature))
    for proc in processors:
        scores = proc(input_ids, scores)
    logp = F.log_softmax(scores, axis=-1)
    tok = int(logp.argmax())
    return tok, float(logp[tok])


# ---- generation loops ---------------------------------------------------------------------
_TRANS = f32([[0.1, 0.9, 0.0, 0.0], [0.0, 0.1, 0.9, 0.0], [0.0, 0.0, 0.1, 0.9],
              [0.8, 0.1, 0.0, 0.1]])


@case(args=[(_TRANS, 0, [3], 6), (_TRANS, 0, [7], 6), (_TRANS, 2, [0, 3], 6)])
def generate_with_stop_tokens(trans, start, stop_ids, max_new_tokens):
    """Greedy generation over a transition table: ids are Python ints in a list, the loop
    breaks on any stop token; returns the text-like list and whether it stopped."""
    generated = [start]
    stopped = False
    for _ in range(max_new_tokens):
        nxt = int(trans[generated[-1]].argmax())
        generated.append(nxt)
        if nxt in stop_ids:
            stopped = True
            break
    return generated, stopped


@case(args=[(_TRANS, i64([[0], [2]]), 3, 5), (_TRANS, i64([[1], [1]]), 0, 5),
            (_TRANS, i64([[3], [3]]), 9, 2)])
def batched_generate_unfinished(trans, input_ids, eos_token_id, max_length):
    """HF's `unfinished_sequences` bookkeeping: finished rows get the pad token, the loop
    stops when every row has finished (a tensor `break`) or at max_length."""
    pad_token_id = 0
    unfinished = paddle.ones([input_ids.shape[0]], dtype="int64")
    cur_len = input_ids.shape[1]
    while cur_len < max_length:
        next_tokens = paddle.argmax(trans[input_ids[:, -1]], axis=-1)
        next_tokens = next_tokens * unfinished + pad_token_id * (1 - unfinished)
        input_ids = paddle.concat([input_ids, next_tokens.unsqueeze(-1)], axis=-1)
        cur_len += 1
        unfinished = unfinished * (next_tokens != eos_token_id).astype("int64")
        if unfinished.max() == 0:
            break
    return input_ids, cur_len


class _TinyLM(nn.Layer):
    def __init__(self, vocab=5, dim=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def step(self, ids, past=None):
        h = self.embed(ids)
        q, k, v = self.q(h), self.k(h), self.v(h)
        if past is not None:
            k = paddle.concat([past["k"], k], axis=1)
            v = paddle.concat([past["v"], v], axis=1)
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) / math.sqrt(q.shape[-1]), axis=-1)
        return self.head(paddle.matmul(att, v))[:, -1], {"k": k, "v": v}


class KVCacheGreedyDecoder(nn.Layer):
    """Incremental decoding with a dict-held KV cache: the prompt is encoded once, then one
    token per step; stops at EOS (a tensor condition) and reports the steps as an int."""

    def __init__(self):
        super().__init__()
        self.lm = _TinyLM()

    def forward(self, prompt, max_new_tokens=4, eos_token_id=1):
        logits, past = self.lm.step(prompt)
        out = []
        steps = 0
        for _ in range(max_new_tokens):
            tok = logits.argmax(axis=-1, keepdim=True)
            out.append(tok)
            steps += 1
            if (tok == eos_token_id).all():
                break
            logits, past = self.lm.step(tok, past)
        return paddle.concat(out, axis=1), steps, past["k"].shape[1]


case(args=[(i64([[2, 3]]), 4, 1), (i64([[2, 3]]), 3, -1), (i64([[0]]), 1, -1)])(
    KVCacheGreedyDecoder)
_OTHER = np.array([[0.5, 0.3, 0.15, 0.05], [0.25, 0.1, 0.6, 0.05], [0.05, 0.2, 0.15, 0.6],
                  [0.4, 0.35, 0.2, 0.05]], np.float32)


@dataclass
class _Beam:
    score: float
    tokens: list = field(default_factory=list)


@case(args=[(_TRANS, 2, 3), (_TRANS, 1, 2), (_OTHER, 3, 2)])
def beam_search_bookkeeping(trans, num_beams, steps):
    """Beam search with Python bookkeeping: beams are dataclasses holding a Python float
    score (from `.item()`) and a token list, candidates are sorted by score in Python."""
    beams = [_Beam(0.0, [0])]
    for _ in range(steps):
        candidates = []
        for beam in beams:
            logp = paddle.log(trans[beam.tokens[-1]] + 1e-6)
            vals, idx = paddle.topk(logp, num_beams)
            for v, i in zip(vals, idx):
                candidates.append(_Beam(beam.score + v.item(), beam.tokens + [int(i)]))
        candidates.sort(key=lambda b: b.score, reverse=True)
        beams = candidates[:num_beams]
    best = beams[0]
    return best.tokens, round(best.score, 4), [b.tokens[-1] for b in beams]


def _np_step_mask(q_len, kv_len, pad):
    m = np.tril(np.ones((q_len, kv_len), bool), k=kv_len - q_len)
    if pad is not None:
        m = m & (pad[:, None, :] > 0)
        return np.where(m, 0.0, -1e9).astype(np.float32)
    return np.where(m, 0.0, -1e9).astype(np.float32)[None]


@case(args=[(rand(1, 3, 4), 0, None), (rand(1, 1, 4), 2, f32([[1, 1, 0]])),
            (rand(2, 2, 4), 1, f32([[1, 1, 1], [0, 1, 1]]))],
      ref=lambda x, p, pad: _np_step_mask(x.shape[1], x.shape[1] + p, pad))
def attention_mask_per_step(hidden, past_len, padding_mask):
    """A per-step additive mask: causal over (past + new) positions; a query of one token
    needs no causal part; a padding mask is combined when given."""
    q_len = hidden.shape[1]
    kv_len = past_len + q_len
    if q_len > 1:
        causal = paddle.tril(paddle.ones([q_len, kv_len]), diagonal=kv_len - q_len) > 0
    else:
        causal = paddle.ones([1, kv_len]) > 0
    causal = causal.unsqueeze(0)
    if padding_mask is not None:
        causal = paddle.logical_and(causal, padding_mask.unsqueeze(1) > 0)
    return paddle.where(causal, paddle.zeros(causal.shape), paddle.full(causal.shape, -1e9))


# ---- LoRA and MoE -------------------------------------------------------------------------
class LoraLinear(nn.Layer):
    """PEFT-style LoRA: `merge()` folds B@A into the base weight and sets `self.merged`; the
    forward of an unmerged layer adds the low-rank path unless the adapter is disabled."""

    def __init__(self, in_features=4, out_features=3, r=2, lora_alpha=4):
        super().__init__()
        self.base = nn.Linear(in_features, out_features)
        self.lora_A = nn.Linear(in_features, r, bias_attr=False)
        self.lora_B = nn.Linear(r, out_features, bias_attr=False)
        self.scaling = lora_alpha / r
        self.merged = False
        self.disable_adapters = False

    def merge(self):
        if not self.merged:
            delta = paddle.matmul(self.lora_A.weight, self.lora_B.weight) * self.scaling
            self.base.weight.set_value(self.base.weight + delta)
            self.merged = True

    def unmerge(self):
        if self.merged:
            delta = paddle.matmul(self.lora_A.weight, self.lora_B.weight) * self.scaling
            self.base.weight.set_value(self.base.weight - delta)
            self.merged = False

    def forward(self, x, adapters=True):
        self.disable_adapters = not adapters
        if self.disable_adapters:
            if self.merged:
                self.unmerge()
            return self.base(x)
        if self.merged:
            return self.base(x)
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


case(args=[(rand(2, 4), True), (rand(2, 4), False)], rtol=1e-5, atol=1e-5)(LoraLinear)


class DeepSeekStyleMoE(nn.Layer):
    """Top-2 routing with per-expert Python loops: experts with no token are skipped with
    `if mask.any():`, the tokens each expert saw are counted in a Python list of ints, and
    a shared expert is always added."""

    def __init__(self, dim=3, num_experts=3):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias_attr=False)
        self.experts = nn.LayerList([nn.Linear(dim, dim) for _ in range(num_experts)])
        self.shared = nn.Linear(dim, dim)
        self.num_experts = num_experts

    def forward(self, x):
        probs = F.softmax(self.gate(x), axis=-1)
        weights, selected = paddle.topk(probs, 2, axis=-1)
        weights = weights / weights.sum(axis=-1, keepdim=True)
        out = paddle.zeros_like(x)
        tokens_per_expert = []
        for e, expert in enumerate(self.experts):
            mask = (selected == e).astype(x.dtype)
            if mask.any():
                w = (weights * mask).sum(axis=-1, keepdim=True)
                out = out + w * expert(x)
            tokens_per_expert.append(int(mask.sum()))
        return out + self.shared(x), tokens_per_expert


case(args=[(rand(4, 3),), (f32([[5, 5, 5], [5, 5, 5]]),)], rtol=1e-5, atol=1e-5)(DeepSeekStyleMoE)


# ---- configs, kwargs, Python numbers ------------------------------------------------------
@dataclass
class GenerationConfig:
    temperature: float = 1.0
    top_k: int = 0
    do_sample: bool = False
    length_penalty: float = 1.0


def _score(logits, config):
    if not config.do_sample:
        return F.log_softmax(logits, axis=-1)
    return F.log_softmax(logits / config.temperature, axis=-1)


@case(args=[(f32([1.0, 2.0, 0.5]), {}), (f32([1.0, 2.0, 0.5]), {"do_sample": True,
                                                                 "temperature": 0.5}),
            (f32([1.0, 2.0, 0.5]), {"length_penalty": 2.0})])
def generation_config_kwargs(logits, overrides):
    """`generate(**kwargs)`: the defaults are a dataclass, kwargs replace fields; the
    length-normalised score comes back as a Python float rounded for logging."""
    config = dataclasses.replace(GenerationConfig(), **overrides)
    logp = _score(logits, config)
    best = logp.max()
    normalised = best / (3 ** config.length_penalty)
    assert config.temperature > 0, f"temperature must be positive, got {config.temperature}"
    return round(float(normalised), 5), dataclasses.asdict(config)


@case(args=[(rand(2, 3, 5), i64([[1, 2, 0], [3, 4, 4]]), -100),
            (rand(2, 3, 5), i64([[1, 2, -100], [-100, -100, -100]]), -100),
            (rand(2, 3, 5), i64([[1, -100, -100], [-100, -100, -100]]), -100)])
def perplexity_from_loss(logits, labels, ignore_index):
    """Shifted LM loss with ignored labels, reported as Python floats: the loss, the
    perplexity `math.exp(loss.item())` and the number of counted tokens."""
    shift_logits = logits[:, :-1].reshape([-1, logits.shape[-1]])
    shift_labels = labels[:, 1:].reshape([-1])
    valid = shift_labels != ignore_index
    n_tokens = int(valid.sum())
    if n_tokens == 0:
        return 0.0, float("inf"), 0
    logp = F.log_softmax(shift_logits, axis=-1)
    safe = paddle.where(valid, shift_labels, paddle.zeros_like(shift_labels))
    nll = -paddle.take_along_axis(logp, safe.unsqueeze(-1), axis=-1).squeeze(-1)
    loss = (nll * valid.astype("float32")).sum() / n_tokens
    return loss.item(), math.exp(loss.item()), n_tokens


@case(args=[(f32([0.5, 0.1, 0.9]), {5: 1.0, 0: -10.0}), (f32([0.5, 0.1, 0.9]), {}),
            (f32([0.5, 0.1, 0.9]), {1: 2.0})])
def logit_bias_dict(logits, logit_bias):
    """OpenAI-style `logit_bias`: a dict of token id to bias; ids outside the vocabulary
    are skipped; the argmax is returned as an int beside the biased logits."""
    logits = logits.clone()
    vocab = logits.shape[0]
    for tok, bias in logit_bias.items():
        if tok >= vocab:
            continue
        logits[tok] = logits[tok] + bias
    return logits, int(logits.argmax())


@case(args=[(f32([0.9, 0.8, 0.1]), f32([0.5, 0.9, 0.9]), f32([0.3, 0.3, 0.3])),
            (f32([0.2, 0.8, 0.1]), f32([0.5, 0.9, 0.9]), f32([0.9, 0.3, 0.3])),
            (f32([0.9, 0.9, 0.9]), f32([0.9, 0.9, 0.9]), f32([0.1, 0.1, 0.1]))])
def speculative_accept_loop(p_target, p_draft, uniform):
    """Speculative sampling acceptance: walk the draft tokens, accept while
    `u < p_target / p_draft`, stop at the first rejection; returns the accepted count and
    the acceptance rate as Python numbers."""
    accepted = 0
    for i in range(p_draft.shape[0]):
        ratio = paddle.minimum(paddle.to_tensor(1.0), p_target[i] / p_draft[i])
        if uniform[i] < ratio:
            accepted += 1
        else:
            break
    return accepted, accepted / p_draft.shape[0]


@case(args=[(rand(2, 4), 1e-6, "float32"), (rand(2, 4) * 100, 1e-2, "float64")],
      ref=lambda x, eps, d: (x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True)
                                        + eps)).astype(np.float32), rtol=1e-4, atol=1e-5)
def rms_norm_upcast(hidden_states, eps, compute_dtype):
    """Llama RMSNorm: compute the variance in a wider dtype, cast back to the input's."""
    input_dtype = hidden_states.dtype
    h = hidden_states
    if compute_dtype != h.dtype:
        h = h.astype(compute_dtype)
    variance = h.pow(2).mean(-1, keepdim=True)
    h = h * paddle.rsqrt(variance + eps)
    return h.astype(input_dtype)


@case(args=[(i64([5, 6, 7, 8, 9]), 3, True), (i64([5, 6]), 3, True), (i64([5, 6, 7, 8]), 3, False)])
def truncate_prompt_ids(ids, max_len, keep_bos):
    """Prompt truncation on a Python list of ids (`tolist()` of the input): drop from the
    left but keep the BOS token."""
    ids = ids.tolist()
    bos = ids[0]
    while len(ids) > max_len:
        ids.pop(1 if keep_bos else 0)
    if keep_bos and ids[0] != bos:
        ids.insert(0, bos)
    return ids, len(ids)


@case(args=[(i64([5, 6, 7, 2]), [[7, 2], [9]]), (i64([5, 6, 9]), [[7, 2], [9]]),
            (i64([5, 6, 8]), [[7, 2], [9]])])
def stop_sequence_criteria(input_ids, stop_sequences):
    """HF's StopStringCriteria-like check on token ids: any stop sequence at the end of the
    generated ids (`tolist()` of the input) ends generation; a Python bool comes back."""
    ids = input_ids.tolist()
    for seq in stop_sequences:
        if ids[-len(seq):] == seq:
            return True
    return False


@case(args=[(f32([0.1, 0.9, 0.3]), ["code", "math", "chat"]),
            (f32([0.8, 0.1, 0.3]), ["code", "math", "chat"]),
            (f32([0.2, 0.9, 0.9]), ["code", "math", "chat"])])
def route_to_named_adapter(router_scores, adapter_names):
    """A multi-LoRA router: adapters by name in a dict of scores, the best picked with
    `max(scores, key=scores.get)`, the ranking by `(score, name)` pairs (ties by name), a
    prompt prefix chosen by the winner; the winning score's `.item()` is a Python float."""
    scores = {name: router_scores[i] for i, name in enumerate(adapter_names)}
    best = max(scores, key=scores.get)
    ranking = [name for _, name in sorted(zip(router_scores.tolist(), adapter_names),
                                          reverse=True)]
    prefix = "Solve step by step: " if best == "math" else ""
    return best, ranking, prefix, router_scores.max().item()
