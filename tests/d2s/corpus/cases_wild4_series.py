"""Time series, contrastive learning, distillation and optimiser-like code in forward, as
Informer / TSMixer / SimCLR / MoCo / DINO / KD repos write it: sliding windows with a Python
stride, RevIN-style normalisation by running stats on `self`, teacher forcing with a Python
ratio and a seeded `random`, InfoNCE with a temperature schedule, hard negatives by `topk`,
KD with a temperature and a mask, an EMA teacher updated in forward, Lookahead's slow weights
synced every k steps."""
import math
import random

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


def _np_windows(x, w, s):
    return np.stack([x[i:i + w] for i in range(0, len(x) - w + 1, s)])


@case(args=[(rand(8), 4, 2), (rand(8), 3, 3), (rand(3), 4, 1)],
      ref=lambda x, w, s: _np_windows(x, w, s) if len(x) >= w else x[None])
def sliding_windows(series, window, stride):
    """Windows of `window` steps every `stride` (Python ints) stacked into a batch; a series
    shorter than one window is returned as one row."""
    n = series.shape[0]
    if n < window:
        return series.unsqueeze(0)
    rows = []
    for start in range(0, n - window + 1, stride):
        rows.append(series[start:start + window])
    return paddle.stack(rows)


class RevIN(nn.Layer):
    """Reversible instance normalisation with running stats kept on `self` as tensors (updated
    with momentum on every call, so only the call's own values are returned); a constant
    series skips the division."""

    def __init__(self):
        super().__init__()
        self.momentum = 0.1
        self.running_mean = paddle.zeros([1])
        self.running_std = paddle.ones([1])

    def forward(self, x):
        mean = x.mean(axis=-1, keepdim=True)
        std = x.std(axis=-1, keepdim=True)
        self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean.mean()
        self.running_std = (1 - self.momentum) * self.running_std + self.momentum * std.mean()
        if std.min() < 1e-6:
            y = x - mean
        else:
            y = (x - mean) / std
        return y * 2.0, mean.mean() * self.momentum


case(args=[(rand(2, 5),), (np.ones((2, 5), np.float32),)], rtol=1e-5, atol=1e-6)(RevIN)


class Seq2SeqTeacherForcing(nn.Layer):
    """A GRU-cell decoder with teacher forcing: at each step a seeded Python coin picks the
    ground truth or the model's own previous output; the horizon is a Python int."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(1, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, history, target, ratio, seed):
        rng = random.Random(seed)
        h = paddle.zeros([history.shape[0], 4])
        for t in range(history.shape[1]):
            _, h = self.cell(history[:, t:t + 1], h)
        inp = history[:, -1:]
        preds = []
        for t in range(target.shape[1]):
            _, h = self.cell(inp, h)
            y = self.out(h)
            preds.append(y)
            inp = target[:, t:t + 1] if rng.random() < ratio else y
        return paddle.concat(preds, axis=1)


case(args=[(rand(2, 3), rand(2, 4), 0.5, 1), (rand(2, 3), rand(2, 4), 0.0, 1),
           (rand(2, 3), rand(2, 4), 1.0, 2)], rtol=1e-4, atol=1e-5)(Seq2SeqTeacherForcing)


def _np_info_nce(q, k, tau):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    k = k / np.linalg.norm(k, axis=1, keepdims=True)
    logits = q @ k.T / tau
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return np.float32(-np.mean(np.diag(logp)))


def _tau_at(step, total):
    return 0.05 + 0.5 * (0.2 - 0.05) * (1 + math.cos(math.pi * step / total))


@case(args=[(rand(3, 4), rand(3, 4), 0, 10), (rand(3, 4), rand(3, 4), 10, 10),
            (rand(3, 4), rand(3, 4), 20, 10)],
      ref=lambda q, k, s, t: _np_info_nce(q, k, _tau_at(min(s, t), t)), rtol=1e-4, atol=1e-5)
def info_nce_temperature_schedule(q, k, step, total_steps):
    """InfoNCE whose temperature follows a cosine schedule of a Python step, capped at the
    end of the schedule."""
    if step > total_steps:  # noqa: PLR1730  (a Python if, as written)
        step = total_steps
    tau = 0.05 + 0.5 * (0.2 - 0.05) * (1 + math.cos(math.pi * step / total_steps))
    q = F.normalize(q, axis=1)
    k = F.normalize(k, axis=1)
    logits = q @ k.t() / tau
    labels = paddle.arange(q.shape[0])
    return F.cross_entropy(logits, labels)


@case(args=[(rand(4, 3), rand(4, 3), 2, 0.2), (rand(4, 3), rand(4, 3), 0, 0.2)])
def hard_negative_triplet(anchor, positive, num_hard, margin):
    """Triplet loss with hard negatives: the `num_hard` most similar non-matching rows by
    `topk` of a masked similarity; with `num_hard == 0` all negatives are averaged."""
    a = F.normalize(anchor, axis=1)
    p = F.normalize(positive, axis=1)
    sim = a @ p.t()
    pos = paddle.diag(sim)
    eye = paddle.eye(sim.shape[0])
    neg = sim - 2.0 * eye
    if num_hard > 0:
        hard, _ = paddle.topk(neg, k=num_hard, axis=1)
        neg_score = hard.mean(axis=1)
    else:
        neg_score = (neg * (1 - eye)).sum(axis=1) / (sim.shape[0] - 1)
    loss = F.relu(neg_score - pos + margin)
    n_active = (loss > 0).astype("int64").sum()
    if n_active > 0:
        return loss.sum() / n_active.astype("float32"), n_active
    return loss.mean(), n_active


@case(args=[(rand(3, 5) * 3, rand(3, 5) * 3, i64([1, 0, 1]), 4.0, 0.7),
            (rand(3, 5) * 3, rand(3, 5) * 3, i64([0, 0, 0]), 2.0, 0.7)])
def masked_distillation_loss(student, teacher, mask, temperature, alpha):
    """Hinton KD on the masked rows only: KL of softened distributions times T^2, mixed with
    the hard loss on the teacher's argmax; nothing masked in gives the hard loss alone."""
    hard = F.cross_entropy(student, teacher.argmax(axis=-1))
    keep = mask.astype("bool")
    if not keep.any():
        return hard
    s = F.log_softmax(student / temperature, axis=-1)
    t = F.softmax(teacher / temperature, axis=-1)
    kl = (t * (t.log() - s)).sum(axis=-1)
    kl = (kl * keep.astype("float32")).sum() / keep.astype("float32").sum()
    return alpha * kl * temperature ** 2 + (1 - alpha) * hard


class EMATeacher(nn.Layer):
    """A mean-teacher: the teacher's weights follow the student's by EMA computed in forward
    (under no_grad, functional: the EMA weights are applied with F.linear), with the decay
    warmed up from a Python step."""

    def __init__(self):
        super().__init__()
        self.student = nn.Linear(3, 2)
        self.teacher = nn.Linear(3, 2)
        self.teacher.weight.stop_gradient = True
        self.teacher.bias.stop_gradient = True

    def forward(self, x, step):
        decay = min(0.99, (1 + step) / (10 + step))
        ema = []
        with paddle.no_grad():
            for ps, pt in zip(self.student.parameters(), self.teacher.parameters()):
                ema.append(pt * decay + ps * (1 - decay))
        s, t = self.student(x), F.linear(x, ema[0], ema[1])
        consistency = ((F.softmax(s, axis=-1) - F.softmax(t, axis=-1)) ** 2).mean()
        if consistency > 0.05:
            consistency = consistency * 0.5
        return s, consistency


case(args=[(rand(2, 3), 0), (rand(2, 3) * 50, 1000)], rtol=1e-4, atol=1e-5)(EMATeacher)


@case(args=[(f32([1.0, 2.0]), f32([0.5, -0.5]), 4, 2), (f32([1.0, 2.0]), f32([0.5, -0.5]), 3, 5)])
def lookahead_sync(fast, grad, steps, k):
    """Lookahead in a loop: SGD on the fast weights, every `k` steps the slow weights move
    half way and the fast weights reset to them; a step whose update is tiny is skipped."""
    slow = fast.clone()
    syncs = 0
    for step in range(1, steps + 1):
        update = 0.1 * grad * step
        if update.abs().max() < 1e-3:
            continue
        fast = fast - update
        if step % k == 0:
            slow = slow + 0.5 * (fast - slow)
            fast = slow.clone()
            syncs += 1
    return fast, slow, syncs


@case(args=[(rand(6, 2), 3), (rand(6, 2) + 5.0, 3)])
def forecast_with_outlier_clip(series, horizon):
    """A naive seasonal forecast: the last `horizon` steps repeated, clipped to mean +- 3 std
    of the history when the last value is an outlier; scale kept as a Python float."""
    scale = 1.0
    hist = series[:-horizon]
    mu, sd = hist.mean(axis=0), hist.std(axis=0)
    last = series[-horizon:]
    if ((last - mu).abs() > 3 * sd).any():
        last = paddle.minimum(paddle.maximum(last, mu - 3 * sd), mu + 3 * sd)
        scale = 0.5
    return last * scale, mu
