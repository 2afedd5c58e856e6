"""Model code that keeps state or returns structures, as streaming, speech and vision repos write
it: a streaming conv with a cached left context (a buffer reassigned in forward), dataclass and
namedtuple outputs built on both paths of a tensor `if`, `with paddle.no_grad()` around a
target network, `for ... else` search loops, `try`/`except` around optional shapes, `.tolist()`
of inputs and `getattr` dispatch over a config string."""
import collections
import dataclasses

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand

Detection = collections.namedtuple("Detection", ["score", "label"])


@dataclasses.dataclass
class StepOutput:
    logits: object
    loss: object = None
    extra: dict = dataclasses.field(default_factory=dict)


@case(args=[(pos(1, 2, 6), 3), (neg(1, 2, 6), 2), (pos(1, 2, 6), 6)])
class StreamingConv(nn.Layer):
    """A causal Conv1D for streaming ASR: the last `kernel - 1` frames of each chunk are kept in
    a buffer (reassigned in forward) and prepended to the next chunk."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1D(2, 2, kernel_size=3)
        self.register_buffer("cache", paddle.zeros([1, 2, 2]))

    def forward_chunk(self, chunk):
        x = paddle.concat([self.cache, chunk], axis=2)
        self.cache = x[:, :, -2:]
        y = self.conv(x)
        if y.mean() < 0:
            y = F.relu(y)
        return y

    def forward(self, x, chunk_size):
        self.cache = paddle.zeros_like(self.cache)  # a new utterance
        outs = []
        for start in range(0, x.shape[2], chunk_size):
            outs.append(self.forward_chunk(x[:, :, start:start + chunk_size]))
        return paddle.concat(outs, axis=2), self.cache


@case(args=[(f32([0.9, 0.05, 0.05]),), (f32([0.2, 0.3, 0.5]),)])
def classify_to_namedtuple(probs):
    if probs.max() > 0.8:
        det = Detection(score=probs.max(), label=probs.argmax())
    else:
        det = Detection(score=paddle.zeros([]), label=paddle.full([], -1, dtype="int64"))
    return det


@case(args=[(rand(2, 3), i64([0, 2])), (rand(2, 3), i64([-1, -1]))])
def step_to_dataclass(logits, labels):
    # (eager code left `loss` None and `extra` without "acc" on unlabeled batches: one program
    # cannot, docs/d2s.md "Known limitations"; both paths set them here)
    out = StepOutput(logits=logits)
    if (labels >= 0).all():
        out.loss = F.cross_entropy(logits, labels)
        out.extra["acc"] = (logits.argmax(axis=1) == labels).astype("float32").mean()
    else:
        out.loss = paddle.zeros([])
        out.extra["acc"] = paddle.zeros([])
    return out.logits, out.loss, out.extra


class _QNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


@case(args=[(rand(4, 3), i64([0, 1, 1, 0]), f32([1.0, 0.0, -1.0, 0.5]), f32([0, 0, 1, 0]), 0.9),
            (rand(4, 3), i64([1, 1, 1, 1]), f32([0.0, 0.0, 0.0, 0.0]), f32([1, 1, 1, 1]), 0.9)])
class DQNLoss(nn.Layer):
    """One DQN update's loss with a target network under no_grad."""

    def __init__(self):
        super().__init__()
        self.q = _QNet()
        self.target = _QNet()

    def forward(self, obs, actions, rewards, dones, gamma):
        q = self.q(obs)
        q_taken = paddle.take_along_axis(q, actions.unsqueeze(1), axis=1).squeeze(1)
        with paddle.no_grad():
            next_q = self.target(obs).max(axis=1)
            target = rewards + gamma * (1.0 - dones) * next_q
        if dones.all():
            target = rewards  # every episode ended: no bootstrap
        return F.smooth_l1_loss(q_taken, target), q_taken


@case(args=[(f32([0.1, 0.2, 0.9, 0.3]), 0.5), (f32([0.1, 0.2, 0.3, 0.3]), 0.5)])
def first_over_threshold(scores, thr):
    """`for ... else` with a Python flag and a tensor `break`."""
    found = False
    index = -1
    for i in range(scores.shape[0]):
        if scores[i] > thr:
            found = True
            index = i
            break
    else:
        found = False
    return found, index


@case(args=[(rand(2, 3, 4),), (rand(2, 3),)], batch=lambda b: (rand(b, 3, 4) * b,))
def flatten_optional_time(x):
    """`try`/`except` around an unpacking that fails for some shapes (a Python decision)."""
    try:
        b, t, d = x.shape
    except ValueError:
        b, d = x.shape
        t = 1
        x = x.unsqueeze(1)
    out = x.reshape([b * t, d])
    if out.abs().max() > 0.99:
        out = out / out.abs().max()
    return out


@case(args=[(i64([3, 1, 2]), rand(3, 4)), (i64([0, 0, 0]), rand(3, 4))])
def lengths_as_python_list(lengths, feats):
    """`.tolist()` of an input: per-item Python lengths slice the features."""
    lens = lengths.tolist()
    pieces = []
    for i, n in enumerate(lens):
        if n == 0:
            continue
        pieces.append(feats[i, :n].sum())
    if not pieces:
        return paddle.zeros([])
    return paddle.stack(pieces).sum()


@case(args=[(rand(2, 4), "relu"), (rand(2, 4), "gelu"), (rand(2, 4), "quick_gelu")])
class ConfigurableActivation(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, act):
        fn = getattr(F, act, None)
        if fn is None:  # names some checkpoints use that F does not have
            fn = (lambda v: v * F.sigmoid(1.702 * v)) if act == "quick_gelu" else F.relu
        h = fn(self.fc(x))
        return h if h.sum() > 0 else -h


class RunningNorm:
    """Observation normalisation of RL code: a plain object with running statistics."""

    def __init__(self):
        self.mean = paddle.zeros([3])
        self.var = paddle.ones([3])
        self.count = 1e-4

    def update(self, batch):
        batch_mean = batch.mean(axis=0)
        batch_var = batch.var(axis=0, unbiased=False)
        n = batch.shape[0]
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        m2 = self.var * self.count + batch_var * n + delta * delta * self.count * n / total
        self.var = m2 / total
        self.count = total

    def __call__(self, x, clip=5.0):
        return paddle.clip((x - self.mean) / paddle.sqrt(self.var + 1e-8), -clip, clip)


@case(args=[(rand(4, 3), True), (rand(4, 3) * 100, False)])
def normalize_observations(obs, update):
    rms = RunningNorm()
    if update:
        rms.update(obs)
    out = rms(obs)
    return out, rms.count


@case(args=[(rand(3, 4), i64([1, 0, 3]), 2), (rand(3, 4), i64([1, 0, 3]), 0)])
def gather_by_python_indices(x, idx, repeat):
    """Indices as a Python list before the tensor work. (Eager code wrote `np.argsort(
    idx.numpy())`: NumPy cannot compute on a value the program has only when it runs, a
    TypeError at the line, docs/d2s.md "Known limitations".)"""
    order = paddle.argsort(idx).tolist()
    rows = [x[int(i)] for i in order]
    y = paddle.stack(rows)
    for _ in range(repeat):
        y = y + y.mean(axis=0, keepdim=True)
    return y


@case(args=[(rand(1, 6, 2), 2), (rand(1, 6, 2) * 5, 3)])
class SlidingWindowSmoother(nn.Layer):
    """A streaming smoother with a preallocated window buffer, cleared per utterance and
    written in place frame by frame."""

    def __init__(self):
        super().__init__()
        self.register_buffer("window", paddle.zeros([3, 2]))

    def forward(self, x, width):
        self.window[...] = 0.0
        outs = []
        for t in range(x.shape[1]):
            self.window[t % width] = x[0, t]
            avg = self.window[:width].mean(axis=0)
            if avg.abs().max() > 2:
                avg = avg / avg.abs().max()
            outs.append(avg)
        return paddle.stack(outs), self.window * 1.0
