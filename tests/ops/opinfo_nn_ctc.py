"""OpInfo for `F.ctc_loss` against a brute-force reference: the probability of a label
sequence is summed over every frame-level path (C**T of them on these tiny cases) that
collapses to it, so the reference shares nothing with the kernel's alpha/beta recursion."""
from __future__ import annotations

import itertools

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime.nn.functional as F


def _collapse(path, blank):
    """Merge repeated symbols, then drop blanks: (0, 1, 1, 0, 1) -> (1, 1) with blank 0."""
    merged = [s for i, s in enumerate(path) if i == 0 or s != path[i - 1]]
    return tuple(s for s in merged if s != blank)


def ctc_brute_force(logits, labels, input_lengths, label_lengths, blank=0):
    """-log P(label | x) per sequence, by enumerating every alignment."""
    _, n, c = logits.shape
    losses = np.zeros(n)
    for b in range(n):
        frames = logits[:input_lengths[b], b]
        probs = np.exp(frames - frames.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        target = tuple(int(v) for v in labels[b, :label_lengths[b]])
        total = sum(np.prod(probs[np.arange(len(path)), path])
                    for path in itertools.product(range(c), repeat=len(frames))
                    if _collapse(path, blank) == target)
        losses[b] = -np.log(total) if total > 0 else np.inf
    return losses


def _ctc_ref(logits, labels, input_lengths, label_lengths, blank=0, reduction="mean"):
    loss = ctc_brute_force(logits, labels, input_lengths, label_lengths, blank)
    if reduction == "mean":
        return (loss / label_lengths).mean()
    return {"sum": loss.sum(), "none": loss}[reduction]


def _ints(*values, dtype=np.int64):
    return np.array(values, dtype=dtype)


def _ctc_samples(rng):
    return [
        # different input and label lengths in one batch; a repeated label (1, 1)
        Sample((randn(rng, 5, 3, 3), np.array([[1, 1], [2, 1], [2, 0]], np.int32),
                _ints(5, 4, 3), _ints(2, 2, 1))),
        Sample((randn(rng, 4, 2, 4), np.array([[3, 1, 2], [2, 2, 0]], np.int32),
                _ints(4, 4), _ints(3, 2)), {"reduction": "sum"}),
        # blank at the last class; an empty label (only blanks)
        Sample((randn(rng, 4, 2, 3), np.array([[0, 1], [0, 0]], np.int64),
                _ints(4, 3), _ints(2, 0)), {"blank": 2, "reduction": "none"}),
        # (1, 1) needs 3 frames; 2 are too few: an infinite loss, as for every impossible label
        Sample((randn(rng, 2, 1, 3), np.array([[1, 1]], np.int32), _ints(2), _ints(2)),
               {"reduction": "none"}, grad=False),
    ]


_LOGITS = np.zeros((3, 2, 4))
_LABELS = np.array([[1, 2], [3, 0]], np.int32)

OPINFOS = [
    OpInfo("ctc_loss", F.ctc_loss, _ctc_ref, _ctc_samples, covers=("ctc_loss_grad",),
           error_samples=[
               ErrorSample((np.zeros((3, 4)), _LABELS, _ints(3, 3), _ints(2, 1)), {},
                           ValueError, r"ctc_loss: log_probs has shape \[3, 4\]; it must be "
                                       r"3-D \[max_logit_length, batch_size, num_classes \+ 1\]"),
               ErrorSample((_LOGITS, _LABELS, _ints(3, 3, 3), _ints(2, 1)), {}, ValueError,
                           r"ctc_loss: input_lengths has shape \[3\]; it must be \[2\]"),
               ErrorSample((_LOGITS, _LABELS.astype(np.float64), _ints(3, 3), _ints(2, 1)), {},
                           TypeError, r"ctc_loss: labels has dtype float64"),
               ErrorSample((_LOGITS, _LABELS, _ints(3, 3), _ints(2, 1)), {"blank": 4},
                           ValueError, r"ctc_loss: blank=4 is out of range for 4 classes"),
               ErrorSample((_LOGITS, _LABELS, _ints(3, 5), _ints(2, 1)), {}, ValueError,
                           r"ctc_loss: input_lengths \[3, 5\] must lie in \[1, 3\]"),
               ErrorSample((_LOGITS, np.array([[1, 0], [3, 0]], np.int32), _ints(3, 3),
                            _ints(2, 1)), {}, ValueError,
                           r"ctc_loss: labels must lie in \[0, 4\) and differ from blank=0")]),
]
