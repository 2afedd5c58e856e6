"""The control-flow idioms around the math of speech, detection and streaming repos: a
`for ... else` with a Python flag and a tensor `break` (early-exit decoding), a streaming
encoder whose cache buffer is reassigned in forward, a plain metric object updated under a
tensor `if`, Python counters on `self`, a BOS id list that tensors are appended to in a
tensor `while`, a namedtuple state rebound in both branches inside a loop, and a helper that
returns early from inside a loop over a run-time size."""
from collections import namedtuple

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


@case(args=[(f32([[0.1, 0.2], [0.5, 0.9], [0.3, 0.1]]), 0.8),
            (f32([[0.1, 0.2], [0.5, 0.4], [0.3, 0.1]]), 0.8)])
def early_exit_for_else(step_scores, threshold):
    """Early-exit decoding: stop at the first step whose best score passes the threshold; the
    `else` of the `for` marks a run that never stopped (a Python flag)."""
    found = False
    stop_at = -1
    for i, scores in enumerate(step_scores):
        if scores.max() > threshold:
            found = True
            stop_at = i
            break
    else:
        found = False
    return found, stop_at


class StreamingConvEncoder(nn.Layer):
    """A causal conv encoder for streaming ASR: the last 2 frames of the previous chunk are
    kept in a registered buffer reassigned in forward; a chunk of silence resets it. One call
    runs a stream of chunks from a fresh cache."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)
        self.register_buffer("cache", paddle.zeros([2, 2]))

    def forward(self, chunks):
        self.cache = paddle.zeros([2, 2])
        outs = []
        for chunk in chunks:
            x = paddle.concat([self.cache, chunk], axis=0)
            outs.append(self.proj(x[:-2] + x[1:-1] + x[2:]))
            if chunk.abs().max() < 1e-3:
                self.cache = paddle.zeros([2, 2])
            else:
                self.cache = x[-2:]
        return paddle.concat(outs, axis=0), self.cache


case(args=[([rand(3, 2), rand(3, 2)],), ([np.zeros((3, 2), np.float32), rand(3, 2)],)],
     rtol=1e-5, atol=1e-6)(StreamingConvEncoder)


class _DetectionMeter:
    """A plain (non-Layer) metric object: counts true positives under a tensor condition."""

    def __init__(self):
        self.tp = 0
        self.seen = 0
        self.best = 0.0

    def update(self, iou):
        self.seen += 1
        if iou > 0.5:
            self.tp += 1
            self.best = iou


@case(args=[(f32([0.7, 0.2, 0.9]),), (f32([0.1, 0.2]),)])
def detection_meter_updates(ious):
    """Recall over a tensor of IoUs, accumulated by a metric object's method."""
    meter = _DetectionMeter()
    for iou in ious:
        meter.update(iou)
    return meter.tp, meter.seen, meter.best


class CountingNorm(nn.Layer):
    """BatchNorm-like running mean with `num_batches_tracked` a Python int on self, and a
    cumulative average (momentum None) that depends on it."""

    def __init__(self):
        super().__init__()
        self.num_batches_tracked = 0
        self.register_buffer("running_mean", paddle.zeros([2]))

    def forward(self, x):
        self.num_batches_tracked += 1
        momentum = 1.0 / self.num_batches_tracked
        self.running_mean = (1 - momentum) * self.running_mean + momentum * x.mean(axis=0)
        if x.mean() > 0:
            return x - x.mean(axis=0)
        return x


case(args=[(rand(3, 2) + 2.0,), (rand(3, 2) - 2.0,)], rtol=1e-5, atol=1e-6)(CountingNorm)


@case(args=[(f32([[0.1, 0.9, 0.0], [0.0, 0.1, 0.9], [0.8, 0.1, 0.1]]), 5),
            (f32([[0.1, 0.1, 0.8], [0.0, 0.1, 0.9], [0.8, 0.1, 0.1]]), 5)])
def greedy_decode_bos_list(trans, max_len):
    """Greedy decoding over a transition table: the output starts as `[BOS]` (a Python int)
    and token tensors are appended in a `while` on a tensor (stop at EOS = 2)."""
    bos, eos = 0, 2
    tokens = [bos]
    cur = paddle.to_tensor(bos)
    while cur != eos and len(tokens) < max_len:
        cur = trans[cur].argmax()
        tokens.append(cur)
    return len(tokens), tokens[-1]


TrackState = namedtuple("TrackState", ["pos", "hits", "misses"])


@case(args=[(f32([1.0, 1.2, 5.0, 1.3]),), (f32([9.0, 9.0, 1.0, 1.0]),)])
def kalman_like_track(measurements):
    """A 1-D tracker: a namedtuple state rebound in both branches of a tensor `if` in a loop
    (a gated update or a coast)."""
    state = TrackState(pos=measurements[0], hits=1, misses=0)
    for z in measurements[1:]:
        if (z - state.pos).abs() < 1.0:
            state = TrackState(pos=0.7 * state.pos + 0.3 * z, hits=state.hits + 1,
                               misses=state.misses)
        else:
            state = TrackState(pos=state.pos, hits=state.hits, misses=state.misses + 1)
    return state.pos, state.hits, state.misses


def _first_padded_column(mask):
    for j in range(mask.shape[1]):
        if mask[:, j].sum() == 0:
            return j
    return mask.shape[1]


@case(args=[(rand(2, 4), i64([[1, 1, 0, 0], [1, 0, 0, 0]])),
            (rand(2, 4), i64([[1, 1, 1, 1], [1, 1, 1, 0]]))])
def trim_padding_helper(x, mask):
    """A helper returns early from inside a loop over the mask's columns: the first all-padding
    column; the caller uses it as a Python size after `int()`."""
    end = _first_padded_column(mask)
    return (x * mask.astype("float32"))[:, :end].sum(axis=1), end


@case(args=[(rand(4, 3), rand(4, 3), 0.5), (rand(4, 3), rand(4, 3), 10.0)])
def distill_loss_dict_with_del(student, teacher, threshold):
    """A loss dict logged and summed; a temporary deleted in the branch that consumed it."""
    losses = {"mse": F.mse_loss(student, teacher)}
    diff = (student - teacher).abs()
    if diff.mean() > threshold:
        big = diff.max()
        losses["max"] = big * 0.1
        del big
    else:
        losses["max"] = paddle.zeros([])
    return sum(losses.values()), losses


@case(args=[(f32([[0, 0], [0.1, 0], [5, 5]]), f32([0.9, 0.8, 0.7])),
            (f32([[0, 0], [3, 0], [5, 5]]), f32([0.9, 0.8, 0.7]))])
def nms_shrinking_index_tensor(centers, scores):
    """Center-distance NMS as quick scripts write it: the candidate index tensor shrinks by a
    boolean mask each trip (a shape known only at run time), kept ids are `int()`s."""
    idx = paddle.argsort(scores, descending=True)
    keep = []
    while idx.shape[0] > 0:
        i = idx[0]
        keep.append(int(i))
        if idx.shape[0] == 1:
            break
        rest = idx[1:]
        dist = (centers[rest] - centers[i]).abs().sum(axis=1)
        idx = rest[dist > 1.0]
    return keep


@case(args=[(f32([[0.5, 0.2], [0.9, -0.3]]), 3), (f32([[0.5, 0.2], [0.9, -0.3]]), 1)])
def mine_hard_negatives_while(sim, k):
    """Hard negatives one at a time: the top similarity is taken and masked out, while fewer
    than `k` are found and any candidate is left (a tensor condition)."""
    negs = []
    n = 0
    while n < k and sim.max() > -1:
        v, _ = paddle.topk(sim.flatten(), 1)
        negs.append(v[0])
        sim = paddle.where(sim >= v[0], paddle.full_like(sim, -2.0), sim)
        n += 1
    return paddle.stack(negs).sum() if negs else paddle.zeros([]), n


@case(args=[(f32([1.0, 2.0, 3.0, 4.0]), f32([0.0, 2.5, 3.0, 9.0]), 0.4),
            (f32([1.0, 2.0, 3.0, 4.0]), f32([0.0, 2.5, 3.0, 9.0]), 100.0)])
def teacher_forcing_by_error(targets, preds, tolerance):
    """Scheduled teacher forcing decided per step by the model's error (a tensor condition in
    a conditional expression): the next input is the truth where the prediction is off."""
    outs = []
    inp = targets[0]
    for t in range(1, targets.shape[0]):
        out = inp * 0.5 + preds[t]
        outs.append(out)
        inp = targets[t] if (preds[t] - targets[t]).abs() > tolerance else out
    return paddle.stack(outs)


@case(args=[([f32([1.0, 1.0]), f32([-1.0, -1.0])],), ([f32([2.0, 2.0]), f32([1.0, 1.0])],)])
def ema_stats_dict(batches):
    """Running stats in a dict of Python numbers, updated with tensors under a tensor `if`
    (the mean becomes a tensor, the count stays a Python int eagerly)."""
    stats = {"mean": 0.0, "count": 0}
    for x in batches:
        if x.mean() > 0:
            stats["mean"] = 0.9 * stats["mean"] + 0.1 * x.mean()
            stats["count"] += 1
    return stats["mean"], stats["count"]
