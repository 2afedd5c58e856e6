"""Decoding loops as sequence-model repos write them: greedy decoding with stopping criteria,
beam search, CTC greedy decoding, CRF Viterbi, KV-cache incremental decoding, top-k / top-p
filtering and a repetition penalty over the ids generated so far."""
import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand

VOCAB = 6
EOS_ID = 1
BOS_ID = 0

# A fixed "language model": next-token logits from the previous token by a table, so decoding
# paths are controlled by the table argument.
_CHAIN = f32(np.full((VOCAB, VOCAB), -5.0))
for _a, _b in [(0, 2), (2, 3), (3, 4), (4, 1), (5, 5), (1, 1)]:
    _CHAIN[_a, _b] = 5.0
_LOOP = _CHAIN.copy()
_LOOP[4] = -5.0
_LOOP[4, 5] = 5.0
_EOS_NEXT = f32(np.full((VOCAB, VOCAB), -5.0))
_EOS_NEXT[:, EOS_ID] = 5.0


def _np_greedy(table, max_len):
    out, tok = [], BOS_ID
    for _ in range(max_len):
        tok = int(table[tok].argmax())
        out.append(tok)
        if tok == EOS_ID:
            break
    return np.asarray(out, dtype=np.int64)


@case(args=[(_CHAIN, 8), (_LOOP, 5), (_LOOP, 0)],
      ref=lambda t, n: _np_greedy(t, n) if n else np.zeros([0], np.int64))
def greedy_decode(transition, max_len):
    token = paddle.to_tensor(BOS_ID)
    generated = []
    for _ in range(max_len):
        logits = transition[token]
        token = paddle.argmax(logits, axis=-1)
        generated.append(token)
        if token == EOS_ID:
            break
    if len(generated) == 0:
        return paddle.zeros([0], dtype="int64")
    return paddle.stack(generated)


@case(args=[(_CHAIN, 10, 0.0), (_LOOP, 10, 0.0), (_LOOP, 10, 4.0)])
def greedy_decode_while(transition, max_len, min_score):
    """A tensor `while` that stops on EOS, on a length limit or on a low score."""
    cur = paddle.full([1], BOS_ID, dtype="int64")
    seq = paddle.zeros([max_len], dtype="int64")
    step = paddle.zeros([], dtype="int64")
    finished = paddle.to_tensor(False)
    score = paddle.zeros([])
    while not finished and step < max_len:
        logp = F.log_softmax(transition[cur[0]], axis=-1)
        nxt = logp.argmax()
        score = score + logp[nxt]
        seq[step] = nxt
        step += 1
        cur = nxt.unsqueeze(0)
        finished = (nxt == EOS_ID) | (score < -min_score - 1e-3)
    return seq[:step], score


def _np_beam(table, beam, steps):
    beams = [([BOS_ID], 0.0)]
    for _ in range(steps):
        cand = []
        for seq, s in beams:
            if seq[-1] == EOS_ID:
                cand.append((seq, s))
                continue
            lp = table[seq[-1]] - np.log(np.exp(table[seq[-1]]).sum())
            for t in range(VOCAB):
                cand.append((seq + [t], s + lp[t]))
        cand.sort(key=lambda c: -c[1])
        beams = cand[:beam]
    return beams


class BeamSearchDecoder(nn.Layer):
    def __init__(self, beam_size=3, max_steps=4, length_penalty=0.0):
        super().__init__()
        self.beam_size = beam_size
        self.max_steps = max_steps
        self.length_penalty = length_penalty

    def forward(self, transition):
        k = self.beam_size
        seqs = paddle.full([1, 1], BOS_ID, dtype="int64")
        scores = paddle.zeros([1])
        finished = paddle.zeros([1], dtype="bool")
        for step in range(self.max_steps):
            last = seqs[:, -1]
            log_probs = F.log_softmax(paddle.gather(transition, last), axis=-1)
            # a finished beam only extends with EOS at no cost
            eos_only = paddle.full([VOCAB], -1e9).scatter(paddle.to_tensor([EOS_ID]),
                                                           paddle.zeros([1]))
            log_probs = paddle.where(finished.unsqueeze(1), eos_only.unsqueeze(0), log_probs)
            cand = (scores.unsqueeze(1) + log_probs).reshape([-1])
            top_scores, top_idx = paddle.topk(cand, k=min(k, cand.shape[0]))
            beam_idx = top_idx // VOCAB
            token = top_idx % VOCAB
            seqs = paddle.concat([paddle.gather(seqs, beam_idx), token.unsqueeze(1)], axis=1)
            scores = top_scores
            finished = paddle.gather(finished, beam_idx) | (token == EOS_ID)
            if finished.all():
                break
        if self.length_penalty:
            lengths = (seqs != EOS_ID).astype("float32").sum(axis=1)
            scores = scores / lengths ** self.length_penalty
        return seqs, scores


@case(args=[(_CHAIN,), (_EOS_NEXT,)])
class BeamSearch(BeamSearchDecoder):
    pass


@case(args=[(_CHAIN,), (_EOS_NEXT,)])
class BeamSearchLengthPenalty(BeamSearchDecoder):
    def __init__(self):
        super().__init__(beam_size=2, max_steps=6, length_penalty=0.6)


def _np_ctc(log_probs, blank):
    best = log_probs.argmax(-1)
    out, prev = [], -1
    for t in best:
        if t != prev and t != blank:
            out.append(int(t))
        prev = t
    return out


_CTC_A = f32(np.log(np.eye(4)[[0, 1, 1, 0, 2, 2, 3, 0]] * 0.9 + 0.025))
_CTC_B = f32(np.log(np.eye(4)[[0, 0, 0, 0, 0, 0, 0, 0]] * 0.9 + 0.025))


@case(args=[(_CTC_A, 0), (_CTC_B, 0), (_CTC_A, 2)], ref=lambda lp, blank: _np_ctc(lp, blank))
def ctc_greedy_decode(log_probs, blank):
    best_path = paddle.argmax(log_probs, axis=-1)
    tokens = []
    prev = -1
    for t in range(best_path.shape[0]):
        idx = int(best_path[t])
        if idx != prev and idx != blank:
            tokens.append(idx)
        prev = idx
    return tokens


def _np_viterbi(emissions, trans, length):
    score = emissions[0]
    history = []
    for t in range(1, length):
        s = score[:, None] + trans + emissions[t][None, :]
        history.append(s.argmax(0))
        score = s.max(0)
    best = [int(score.argmax())]
    for idx in reversed(history):
        best.append(int(idx[best[-1]]))
    best.reverse()
    return np.asarray(best, np.int64), np.float32(score.max())


_EMIT = rand(6, 4) * 3
_TRANS = rand(4, 4)


@case(args=[(_EMIT, _TRANS, i64(6)), (_EMIT, _TRANS * 5, i64(3)), (_EMIT, _TRANS, i64(1))],
      ref=lambda e, tr, n: _np_viterbi(e, tr, int(n)), rtol=1e-5)
def viterbi_decode(emissions, transitions, length):
    """CRF Viterbi over a run-time length: a tensor-bound loop, then a reversed backtrace."""
    score = emissions[0]
    history = []
    for t in range(1, length):
        next_score = score.unsqueeze(1) + transitions + emissions[t].unsqueeze(0)
        history.append(next_score.argmax(axis=0))
        score = next_score.max(axis=0)
    best_last = score.argmax()
    best_path = [best_last]
    for indices in reversed(history):
        best_last = indices[best_last]
        best_path.append(best_last)
    best_path.reverse()
    return paddle.stack(best_path), score.max()


class CachedSelfAttention(nn.Layer):
    """One head of decoder self-attention with a key/value cache, fed one token at a time."""

    def __init__(self, dim=4):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x, cache=None):
        q, k, v = self.q(x), self.k(x), self.v(x)
        if cache is not None:
            k = paddle.concat([cache["k"], k], axis=1)
            v = paddle.concat([cache["v"], v], axis=1)
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        return paddle.matmul(attn, v), {"k": k, "v": v}


@case(args=[(rand(1, 5, 4), 5), (rand(1, 5, 4), 2), (rand(1, 5, 4) * 8, 5)])
class IncrementalDecoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = CachedSelfAttention()
        self.out = nn.Linear(4, 4)

    def forward(self, x, steps):
        cache = None
        outputs = []
        for t in range(steps):
            h, cache = self.attn(x[:, t:t + 1], cache)
            h = self.out(h)
            outputs.append(h)
            if h.abs().max() > 10:
                print("decoder: activation blew up at step", t)
                break
        return paddle.concat(outputs, axis=1), cache["k"].shape[1]


def _np_top_k_top_p(logits, k, p):
    out = logits.copy()
    if k > 0:
        kth = np.sort(out, axis=-1)[:, -k][:, None]
        out[out < kth] = -np.inf
    if p < 1.0:
        order = np.argsort(-out, axis=-1, kind="stable")
        sorted_logits = np.take_along_axis(out, order, -1)
        e = np.exp(sorted_logits - sorted_logits.max(-1, keepdims=True))
        cum = np.cumsum(e / e.sum(-1, keepdims=True), -1)
        remove = cum > p
        remove[:, 1:] = remove[:, :-1].copy()
        remove[:, 0] = False
        for r in range(out.shape[0]):
            out[r, order[r][remove[r]]] = -np.inf
    return out


_LOGITS = f32([[1.0, 2.0, 3.0, 4.0, 0.5], [0.1, 0.0, -1.0, 5.0, 4.9]])


@case(args=[(_LOGITS, 0, 1.0), (_LOGITS, 2, 1.0), (_LOGITS, 0, 0.8), (_LOGITS, 3, 0.5)],
      ref=lambda x, k, p: _np_top_k_top_p(x, k, p))
def top_k_top_p_filtering(logits, top_k=0, top_p=1.0, filter_value=-float("inf")):
    """The Hugging Face sampling filter, Paddle spelling."""
    if top_k > 0:
        top_k = min(max(top_k, 1), logits.shape[-1])
        kth = paddle.topk(logits, top_k)[0][..., -1, None]
        logits = paddle.where(logits < kth, paddle.full_like(logits, filter_value), logits)
    if top_p < 1.0:
        sorted_logits = paddle.sort(logits, descending=True)
        sorted_indices = paddle.argsort(logits, descending=True)
        cumulative_probs = paddle.cumsum(F.softmax(sorted_logits, axis=-1), axis=-1)
        sorted_to_remove = cumulative_probs > top_p
        sorted_to_remove = paddle.concat(
            [paddle.zeros_like(sorted_to_remove[:, :1]), sorted_to_remove[:, :-1]], axis=-1)
        to_remove = paddle.put_along_axis(paddle.zeros_like(sorted_to_remove), sorted_indices,
                                          sorted_to_remove, axis=-1)
        logits = paddle.where(to_remove, paddle.full_like(logits, filter_value), logits)
    return logits


@case(args=[(f32([2.0, -1.0, 0.5, 3.0, 1.0]), [0, 3, 3], 1.5),
            (f32([2.0, -1.0, 0.5, 3.0, 1.0]), [1, 2], 1.0),
            (f32([2.0, -1.0, 0.5, 3.0, 1.0]), [], 2.0)])
def repetition_penalty(logits, prev_ids, penalty):
    """CTRL's penalty: logits of tokens already generated shrink toward (or below) zero."""
    if penalty == 1.0 or not prev_ids:
        return logits
    for token_id in set(prev_ids):
        if logits[token_id] < 0:
            logits[token_id] = logits[token_id] * penalty
        else:
            logits[token_id] = logits[token_id] / penalty
    return logits


@case(args=[(f32([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]]), 5, 0.5),
            (f32([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]]), 1, 0.5),
            (f32([[0.4, 0.3, 0.3], [0.6, 0.3, 0.1]]), 5, 0.5)])
def stop_on_confidence(probs, max_new_tokens, threshold):
    """A stopping criterion over a batch: stop when every row is confident or out of budget."""
    stopped_at = -1
    for step in range(max_new_tokens):
        conf = probs.max(axis=-1)
        if bool((conf > threshold).all()):
            stopped_at = step
            break
        probs = F.softmax(probs * 2.0, axis=-1)
    return probs, stopped_at


def _np_python_beam(table, beam, steps):
    beams = [([BOS_ID], 0.0)]
    for _ in range(steps):
        cand = []
        for seq, s in beams:
            lp = table[seq[-1]] - np.log(np.exp(table[seq[-1]]).sum())
            for t in range(VOCAB):
                cand.append((seq + [t], s + lp[t]))
        beams = sorted(cand, key=lambda c: c[1], reverse=True)[:beam]
    return np.asarray([b[1] for b in beams], np.float32)


@case(args=[(_CHAIN, 2, 3), (_LOOP, 3, 2), (_EOS_NEXT, 1, 1)],
      ref=lambda t, k, n: _np_python_beam(t, k, n), rtol=1e-5)
def python_beam_search(transition, beam_size, steps):
    """A textbook beam search over Python lists of (tokens, score) hypotheses: candidates are
    ranked with `sorted(..., key=...)` by their tensor scores."""
    beams = [([BOS_ID], paddle.zeros([]))]
    for _ in range(steps):
        candidates = []
        for tokens, score in beams:
            log_probs = F.log_softmax(transition[tokens[-1]], axis=-1)
            for tok in range(VOCAB):
                candidates.append((tokens + [tok], score + log_probs[tok]))
        beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:beam_size]
    return paddle.stack([score for _, score in beams])
