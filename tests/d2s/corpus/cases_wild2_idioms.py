"""Paddle's dygraph-to-static test idioms and the Python that real training scripts lean on:
`paddle.static.InputSpec`-style loops over `paddle.shape`, for/else search flags with a
tensor break, dict keys set inside tensor loops, a string status chosen by a tensor if,
named-tuple outputs built in both branches, comprehensions over a tensor count, tensor clip
bounds and plain helper objects holding state."""
import collections
import dataclasses

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand


@case(args=[(rand(6), i64(3)), (rand(6), i64(6))])
def stats_dict_in_tensor_loop(x, n):
    """Running statistics in a dict updated inside a tensor-count loop (every key set before
    it: a key first set in the loop is refused, see docs/d2s.md)."""
    stats = {"sum": paddle.zeros([])}
    stats.setdefault("last", paddle.zeros([]))
    i = 0
    while i < n:
        stats["sum"] = stats["sum"] + x[i]
        stats["last"] = x[i]
        i += 1
    return stats["sum"], stats.get("last", paddle.zeros([]))


@case(args=[(pos(3),), (neg(3),)])
def status_index(x):
    """A status chosen by a tensor condition as an index into a tuple of texts (a text chosen
    by a tensor condition is refused, see docs/d2s.md), the text read by the caller."""
    if x.mean() > 0:
        status = 0
    else:
        status = 1
    return x * 2, status


Prediction = collections.namedtuple("Prediction", ["label", "score"])


@case(args=[(pos(4),), (neg(4),)])
def namedtuple_in_branches(logits):
    if logits.sum() > 0:
        out = Prediction(logits.argmax(), logits.max())
    else:
        out = Prediction(logits.argmin(), logits.min())
    return out.label, out.score


@case(args=[(rand(5), i64(3)), (rand(5), i64(1))])
def comprehension_over_tensor_range(x, n):
    """`[... for i in range(n)]` with `n` a tensor."""
    parts = [x[i] * 2 for i in range(n)]
    return paddle.stack(parts).sum()


@case(args=[(rand(5), f32(-0.2), f32(0.3)), (rand(5), f32(-1.0), f32(1.0))])
def clip_tensor_bounds(x, lo, hi):
    y = paddle.clip(x, lo, hi)
    if (y == x).all():
        return y, True
    return y, False


class _Counter:
    def __init__(self):
        self.best = None
        self.bad_epochs = 0

    def update(self, metric):
        if self.best is None or metric < self.best:
            self.best = metric
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs


@case(args=[(f32([0.5, 0.4, 0.45, 0.46]), 2), (f32([0.5, 0.6, 0.7, 0.8]), 1)])
def plateau_detector(losses, patience):
    """A plain helper object whose fields change under tensor conditions."""
    tracker = _Counter()
    stopped_at = -1
    for epoch in range(losses.shape[0]):
        bad = tracker.update(losses[epoch])
        if bad >= patience:
            stopped_at = epoch
            break
    return tracker.best, stopped_at


@case(args=[(f32([3.0, 1.0, 2.0]), 2.0), (f32([3.0, 1.0, 2.0]), None)])
def list_index_of_max(values, extra):
    items = [values[0], values[1], values[2]]
    if extra is not None:
        items.append(paddle.to_tensor(extra))
    best = max(items)
    return best, len(items)


class StreamingNormalizer(nn.Layer):
    """A mean kept in a buffer, reassigned in forward when calibrating (recomputed from the
    batch, so each call gives the same answer)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("running_mean", paddle.zeros([3]))
        self.momentum = 0.1

    def forward(self, x, calibrate=True):
        if calibrate:
            self.running_mean = x.mean(axis=0) * self.momentum
        return x - self.running_mean


case(args=[(rand(4, 3), True), (rand(2, 3), False), (rand(4, 3), False)])(StreamingNormalizer)


@case(args=[(f32([0.2, 0.7, 0.1]), ["cat", "dog", "bird"]),
            (f32([0.6, 0.3, 0.1]), ["cat", "dog", "bird"]), (f32([0.6, 0.3]), ["cat", "dog", "bird"])],
      raises=(ValueError,))
def label_lookup(probs, labels):
    """An argmax read as an int indexing a tensor (a Python list of texts indexed by it is
    refused, see docs/d2s.md); the label names only check the width."""
    if probs.shape[0] != len(labels):
        raise ValueError(f"{probs.shape[0]} scores for {len(labels)} labels")
    idx = int(probs.argmax())
    return idx, probs[idx]


@case(args=[(pos(3), 2), (neg(3), None)])
def round_score(x, digits):
    score = float(x.mean())
    if digits is None:
        return score
    return round(score, digits)


@dataclasses.dataclass
class StepResult:
    loss: object
    accepted: bool = False


@case(args=[(pos(3), 0.5), (pos(3) * 0.1, 0.5)])
def dataclass_in_branches(x, limit):
    if x.mean() > limit:
        result = StepResult(loss=x.sum(), accepted=True)
    else:
        result = StepResult(loss=x.sum() * 0)
    return result.loss, result.accepted


@case(args=[(rand(4, 3), i64([1, 0, 2, 1]), 3), (rand(4, 3), i64([0, 0, 0, 0]), 3)])
def per_class_loss_dict(logits, labels, num_classes):
    """Per-class mean losses in a dict with Python keys; absent classes are skipped by a
    tensor if."""
    losses = F.cross_entropy(logits, labels, reduction="none").reshape([-1])
    out = {}
    for c in range(num_classes):
        mask = (labels == c).astype("float32")
        if mask.sum() > 0:
            out[f"class_{c}"] = (losses * mask).sum() / mask.sum()
        else:
            out[f"class_{c}"] = paddle.zeros([])
    return out


@case(args=[(rand(3, 4), None), (rand(3, 4), {"scale": 2.0, "shift": 1.0}),
            (rand(3, 4), {"scale": 0.5})])
def kwargs_config(x, config=None, **kwargs):
    config = dict(config or {})
    scale = config.pop("scale", 1.0)
    shift = config.pop("shift", 0.0)
    if config:
        raise TypeError(f"unexpected keys {sorted(config)}")
    y = x * scale + shift
    return y.mean(axis=-1)


@case(args=[(rand(4, 2), rand(4, 2)), (rand(4, 2), None)])
def optional_mask_with_walrus(x, mask):
    if (m := mask) is not None:
        x = x * (m > 0).astype(x.dtype)
    return x.sum(axis=0)


@case(args=[(rand(6),), (pos(6),)])
def chained_comparison_tensor(x):
    """`0 < x.min() < 1`: a chained comparison whose operands are tensors."""
    if 0 < x.min() < 1:
        return x * 10
    return x


@case(args=[(rand(4), 2), (rand(4), 0)])
def recompute_with_closure(x, repeats):
    """A closure over a Python counter (nonlocal) used as a step hook."""
    calls = 0

    def step(v):
        nonlocal calls
        calls += 1
        return paddle.tanh(v) + v

    for _ in range(repeats):
        x = step(x)
    return x, calls


@case(args=[(rand(5, 3), i64([0, 2, 4])), (rand(5, 3), i64([1]))])
def tolist_indices(x, idx):
    """`tensor.tolist()` of an argument used as Python indices."""
    rows = [x[i] for i in idx.tolist()]
    return paddle.stack(rows).sum(axis=0), len(rows)


@case(args=[(rand(4), 3), (rand(4), 0)])
def sum_of_generator(x, n):
    """`sum(...)` of a generator of tensors with a Python start value."""
    return sum((x * k for k in range(n)), paddle.zeros_like(x))


@case(args=[(pos(4),), (rand(4),)])
def any_of_generator(x):
    if any(v < 0 for v in x):
        return x.abs()
    return x


@case(args=[(pos(4), 3), (neg(4), 3)], raises=(AssertionError,))
def checked_log_probs(probs, num_classes):
    """Input validation as library code writes it: an f-string message with the values."""
    assert probs.shape[-1] == num_classes + 1, f"expected {num_classes + 1} classes"
    assert probs.min() > 0, f"probabilities must be positive, min is {probs.min().item()}"
    return paddle.log(probs / probs.sum())


@case(args=[(f32([1.0, 2.0]), 8), (f32([0.01, 0.02]), 8), (f32([100.0, 50.0]), 2)],
      stdout=("converged at", "step"))
def iterate_with_progress(x, max_steps):
    """A solver that prints its progress and where it converged (a tensor break)."""
    for step in range(max_steps):
        x = x * 0.5
        if step % 2 == 0:
            print("step", step, "residual", x.abs().max())
        if x.abs().max() < 0.1:
            print(f"converged at {step}")
            break
    return x
