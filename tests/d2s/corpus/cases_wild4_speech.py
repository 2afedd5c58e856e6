"""Speech and OCR code as ESPnet / PaddleSpeech / PaddleOCR write it: CTC greedy and prefix-free
beam decoding with Python lists of tokens, SpecAugment masks drawn with a seeded Python
`random`, frame stacking with a remainder, CRNN heads that collapse repeats per sample with
`for i in range(x.shape[0])`, a label converter with a character dict, and length-based
masks built from Python lists."""
import random

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


def _np_log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return (x - np.log(np.exp(x).sum(axis=-1, keepdims=True))).astype(np.float32)


@case(args=[(f32([[0.1, 0.8, 0.1], [0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8]]),),
            (f32([[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8]]),)])
def ctc_collapse_with_python_list(log_probs):
    """Greedy CTC: argmax per frame, then drop repeats and blanks by walking the frames in a
    Python loop over a tensor, appending tensor tokens to a list, and counting them."""
    best = log_probs.argmax(axis=-1)
    tokens = []
    prev = -1
    for t in range(best.shape[0]):
        tok = best[t]
        if tok != 0 and tok != prev:
            tokens.append(tok)
        prev = tok
    n = len(tokens)
    if n == 0:
        return paddle.zeros([1], dtype="int64"), 0
    return paddle.stack(tokens), n


@case(args=[(_np_log_softmax(rand(4, 3) * 3), 2),
            (_np_log_softmax(rand(3, 3) * 3), 1)])
def ctc_beam_search_simple(log_probs, beam_size):
    """A toy beam search over frames (no prefix merging): hypotheses are (tuple of token ids,
    score tensor) pairs kept in a Python list, extended by the top-k tokens of each frame,
    sorted by `float(score)` and cut to the beam."""
    beams = [((), paddle.zeros([]))]
    for t in range(log_probs.shape[0]):
        vals, idx = paddle.topk(log_probs[t], k=beam_size)
        candidates = []
        for prefix, score in beams:
            for k in range(beam_size):
                candidates.append((prefix + (int(idx[k]),), score + vals[k]))
        candidates.sort(key=lambda c: float(c[1]), reverse=True)
        beams = candidates[:beam_size]
    best_prefix, best_score = beams[0]
    return best_score, list(best_prefix)


@case(args=[(rand(1, 8, 6), 7, True), (rand(1, 8, 6), 3, False)])
def spec_augment_seeded(spec, seed, time_mask):
    """SpecAugment with Python's `random` seeded per call: a frequency mask always, a time
    mask (filled with the input's mean) when asked; widths and starts are Python ints."""
    rng = random.Random(seed)
    fill = spec.mean()
    x = spec.clone()
    _, n_time, n_freq = x.shape
    f = rng.randint(1, 3)
    f0 = rng.randint(0, n_freq - f)
    x[:, :, f0:f0 + f] = 0.0
    if time_mask:
        t = rng.randint(1, 3)
        t0 = rng.randint(0, n_time - t)
        x[:, t0:t0 + t, :] = fill
    return x


def _np_stack_frames(x, k):
    t = x.shape[0]
    pad = (-t) % k
    if pad:
        x = np.concatenate([x, np.repeat(x[-1:], pad, axis=0)], axis=0)
    return x.reshape(-1, k * x.shape[1])


@case(args=[(rand(6, 2), 3), (rand(7, 2), 3), (rand(5, 2), 1)],
      ref=lambda x, k: _np_stack_frames(x, k))
def stack_frames_with_remainder(feats, stack):
    """Low-frame-rate stacking: pad the last frame up to a multiple of `stack`, then fold
    frames into features."""
    if stack == 1:
        return feats
    t, d = feats.shape
    remainder = t % stack
    if remainder:
        pad = paddle.expand(feats[-1:], [stack - remainder, d])
        feats = paddle.concat([feats, pad], axis=0)
    return feats.reshape([-1, stack * d])


class CRNNHead(nn.Layer):
    """A CRNN head: BiGRU-less linear projection over time, then a per-sample greedy decode
    with the CTC rules into a padded id tensor, plus the mean confidence of kept frames."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 5)

    def forward(self, feats):
        logits = self.proj(feats)
        probs = F.softmax(logits, axis=-1)
        conf, ids = probs.max(axis=-1), probs.argmax(axis=-1)
        batch, steps = ids.shape
        out = paddle.zeros([batch, steps], dtype="int64")
        scores = []
        for b in range(batch):
            n = 0
            total = paddle.zeros([])
            for t in range(steps):
                keep = ids[b, t] != 0
                if t > 0:
                    keep = keep & (ids[b, t] != ids[b, t - 1])
                if keep:
                    out[b, n] = ids[b, t]
                    total = total + conf[b, t]
                    n = n + 1
            scores.append(total / max(n, 1))
        return out, paddle.stack(scores)


case(args=[(rand(2, 5, 4) * 3,), (rand(1, 3, 4) * 0.01,)], rtol=1e-4, atol=1e-5)(CRNNHead)


_CHARS = "-abcd"


@case(args=[(i64([[1, 1, 0, 2, 3], [4, 0, 0, 4, 4]]),), (i64([[0, 0, 0]]),)])
def label_decode_to_strings(ids):
    """PaddleOCR's CTCLabelDecode: tensor ids to strings through a character table; the
    strings are Python values computed from `.numpy()` of an input."""
    texts = []
    for row in ids.numpy():
        chars = []
        prev = -1
        for i in row:
            if i != 0 and i != prev:
                chars.append(_CHARS[i])
            prev = i
        texts.append("".join(chars))
    lengths = paddle.to_tensor([len(s) for s in texts], dtype="int64")
    return texts, lengths


@case(args=[(rand(3, 4, 2), [4, 2, 3]), (rand(2, 4, 2), [4, 4])])
def masked_utterance_mean(feats, lengths):
    """Mean over valid frames per utterance with lengths as a Python list; a full batch takes a
    fast path without a mask."""
    max_len = feats.shape[1]
    if all(n == max_len for n in lengths):
        return feats.mean(axis=1)
    mask = paddle.zeros([len(lengths), max_len])
    for i, n in enumerate(lengths):
        mask[i, :n] = 1.0
    summed = (feats * mask.unsqueeze(-1)).sum(axis=1)
    return summed / paddle.to_tensor(lengths, dtype="float32").unsqueeze(-1)


@case(args=[(rand(6, 3), 0.5), (rand(6, 3) - 2.0, 0.5)])
def energy_vad_trim(frames, threshold):
    """Voice activity trimming: frame energies, then a `while` from each end that moves past
    silent frames (tensor conditions), slicing by the found bounds."""
    energy = (frames ** 2).mean(axis=-1)
    start = 0
    end = frames.shape[0]
    while start < end and energy[start] < threshold:
        start += 1
    while end > start and energy[end - 1] < threshold:
        end -= 1
    return energy[start:end].sum(), end - start


@case(args=[(rand(2, 6, 3), i64([6, 4])), (rand(2, 6, 3), i64([6, 5]))])
def subsample_lengths_conv(feats, lengths):
    """Conv2dSubsampling's length update: each stride-2 conv halves the lengths; a mask built
    with arange against the new lengths zeroes padded frames."""
    x = feats[:, ::2, :]
    new_len = (lengths - 1) // 2 + 1
    steps = paddle.arange(x.shape[1]).unsqueeze(0)
    mask = (steps < new_len.unsqueeze(1)).astype(x.dtype)
    x = x * mask.unsqueeze(-1)
    if (new_len < x.shape[1]).any():
        x = x + 0.0 * mask.unsqueeze(-1)
        padded = True
    else:
        padded = False
    return x, new_len, padded


@case(args=[(rand(4, 3),), (np.zeros((4, 3), dtype=np.float32),)])
def cmvn_with_zero_variance_guard(feats):
    """Utterance-level CMVN: divide by the std unless it is all zero (a silent utterance)."""
    mean = feats.mean(axis=0, keepdim=True)
    std = feats.std(axis=0, keepdim=True)
    if (std == 0).all():
        return feats - mean
    return (feats - mean) / (std + 1e-5)
