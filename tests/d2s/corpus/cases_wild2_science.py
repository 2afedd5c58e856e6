"""Point clouds, NeRF, tabular and time-series code as their repos write it: farthest point
sampling with a tensor while, ball query, NeRF stratified samples and volume rendering,
bucketized and missing-value features, teacher forcing with Python draws, autoregressive
rollouts that stop on a tensor condition, and hand-written optimizer steps."""
import math

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, pos, rand


def _np_fps(points, n):
    chosen = [0]
    dist = np.full(len(points), np.inf, np.float32)
    for _ in range(n - 1):
        d = ((points - points[chosen[-1]]) ** 2).sum(-1)
        dist = np.minimum(dist, d)
        chosen.append(int(dist.argmax()))
    return np.asarray(chosen, np.int64)


_PTS = rand(8, 3)


@case(args=[(_PTS, 4), (_PTS, 1), (_PTS[:5], 3)], ref=_np_fps)
def farthest_point_sample(points, npoint):
    """PointNet++'s FPS: Python trip count, the running distance as a tensor."""
    n = points.shape[0]
    centroids = paddle.zeros([npoint], dtype="int64")
    distance = paddle.full([n], 1e10)
    farthest = paddle.to_tensor(0, dtype="int64")
    for i in range(npoint):
        centroids[i] = farthest
        centroid = points[farthest]
        dist = ((points - centroid) ** 2).sum(-1)
        distance = paddle.minimum(distance, dist)
        farthest = paddle.argmax(distance)
    return centroids


@case(args=[(_PTS, i64(4)), (_PTS, i64(1)), (_PTS[:5], i64(5))],
      ref=lambda p, n: _np_fps(p, int(n)))
def farthest_point_sample_while(points, npoint):
    """FPS with the count as a tensor: a tensor while, the chosen indices concatenated."""
    distance = paddle.full([points.shape[0]], 1e10)
    farthest = paddle.zeros([1], dtype="int64")
    chosen = farthest
    count = paddle.ones([], dtype="int64")
    while count < npoint:
        dist = ((points - paddle.gather(points, farthest)) ** 2).sum(-1)
        distance = paddle.minimum(distance, dist)
        farthest = paddle.argmax(distance).reshape([1])
        chosen = paddle.concat([chosen, farthest])
        count += 1
    return chosen


def _np_ball(points, centers, radius, k):
    d = ((centers[:, None] - points[None]) ** 2).sum(-1)
    out = []
    for row in d:
        idx = [j for j in range(len(row)) if row[j] < radius ** 2][:k]
        if not idx:
            idx = [int(row.argmin())]
        out.append(idx + [idx[0]] * (k - len(idx)))
    return np.asarray(out, np.int64)


@case(args=[(_PTS, _PTS[:2], 0.8, 3), (_PTS, _PTS[:3] + 5.0, 0.5, 2), (_PTS, _PTS[:2], 0.8, 1)],
      ref=_np_ball)
def ball_query(points, centers, radius, nsample):
    """Neighbours within a radius, first `nsample` in index order, padded with the first;
    a center with none takes its nearest point."""
    sq = ((centers.unsqueeze(1) - points.unsqueeze(0)) ** 2).sum(-1)
    if nsample == 1:  # the first point within the radius, else the nearest
        hit = (sq < radius ** 2).astype("int64")
        return paddle.where(hit.max(axis=-1, keepdim=True) > 0, hit.argmax(axis=-1, keepdim=True),
                            sq.argmin(axis=-1, keepdim=True))
    n = points.shape[0]
    idx = paddle.arange(n).unsqueeze(0).expand([centers.shape[0], n])
    idx = paddle.where(sq < radius ** 2, idx, paddle.full_like(idx, n))
    idx = paddle.sort(idx, axis=-1)[:, :nsample]
    first = idx[:, :1]
    nearest = sq.argmin(axis=-1, keepdim=True)
    first = paddle.where(first == n, nearest, first)
    return paddle.where(idx == n, first.expand_as(idx), idx)


def _np_render(sigma, rgb, z, white_bkgd):
    delta = np.concatenate([z[..., 1:] - z[..., :-1], np.full_like(z[..., :1], 1e10)], -1)
    alpha = 1 - np.exp(-np.maximum(sigma, 0) * delta)
    trans = np.cumprod(np.concatenate([np.ones_like(alpha[..., :1]), 1 - alpha + 1e-10], -1),
                       -1)[..., :-1]
    w = alpha * trans
    color = (w[..., None] * rgb).sum(-2)
    acc = w.sum(-1)
    if white_bkgd:
        color = color + (1 - acc[..., None])
    return color.astype(np.float32), acc.astype(np.float32)


_Z = np.tile(np.linspace(2, 6, 5, dtype=np.float32), (3, 1))


@case(args=[(rand(3, 5), pos(3, 5, 3) / 2, _Z, False), (rand(3, 5) * 5, pos(3, 5, 3) / 2, _Z, True)],
      ref=_np_render, rtol=1e-4, atol=1e-5,
      batch=lambda b: (rand(b, 5), pos(b, 5, 3) / 2, np.tile(_Z[:1], (b, 1))))
def volume_render(raw_sigma, rgb, z_vals, white_bkgd=False):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = paddle.concat([dists, paddle.full_like(dists[..., :1], 1e10)], axis=-1)
    alpha = 1.0 - paddle.exp(-F.relu(raw_sigma) * dists)
    ones = paddle.ones_like(alpha[..., :1])
    transmittance = paddle.cumprod(paddle.concat([ones, 1.0 - alpha + 1e-10], axis=-1),
                                   dim=-1)[..., :-1]
    weights = alpha * transmittance
    rgb_map = (weights.unsqueeze(-1) * rgb).sum(axis=-2)
    acc_map = weights.sum(-1)
    if white_bkgd:
        rgb_map = rgb_map + (1.0 - acc_map.unsqueeze(-1))
    return rgb_map, acc_map


@case(args=[(rand(2, 3), rand(2, 3), 2.0, 6.0, 4, None), (rand(2, 3), rand(2, 3), 1.0, 2.0, 3,
                                                          pos(2, 3) - 0.5)],
      rtol=1e-5, atol=1e-6)
def sample_along_rays(rays_o, rays_d, near, far, n_samples, perturb=None):
    """Stratified sampling; `perturb` carries the jitter draws (None in eval)."""
    t = paddle.linspace(0.0, 1.0, n_samples)
    z = near * (1.0 - t) + far * t
    z = z.unsqueeze(0).expand([rays_o.shape[0], n_samples])
    if perturb is not None:
        mids = 0.5 * (z[:, 1:] + z[:, :-1])
        upper = paddle.concat([mids, z[:, -1:]], axis=-1)
        lower = paddle.concat([z[:, :1], mids], axis=-1)
        z = lower + (upper - lower) * perturb
    pts = rays_o.unsqueeze(1) + rays_d.unsqueeze(1) * z.unsqueeze(-1)
    return pts, z


@case(args=[(rand(3, 2), 4), (rand(3, 2), 0)])
def positional_encoding(x, num_freqs, include_input=True):
    """NeRF's frequency encoding built in a Python loop; zero frequencies keep the input."""
    outs = [x] if include_input else []
    for i in range(num_freqs):
        for fn in (paddle.sin, paddle.cos):
            outs.append(fn((2.0 ** i) * math.pi * x))
    return paddle.concat(outs, axis=-1)


_EDGES = f32([0.0, 1.0, 2.5])


def _np_tab(x, edges, fill):
    miss = np.isnan(x)
    filled = np.where(miss, fill, x)
    return np.searchsorted(edges, filled, side="left").astype(np.int64), miss.astype(np.float32)


@case(args=[(f32([0.5, np.nan, 3.0, 1.0]), _EDGES, 0.0),
            (f32([0.5, 2.0, 3.0, 1.0]), _EDGES, -1.0)], ref=_np_tab)
def bucketize_with_missing(values, boundaries, fill_value):
    """Tabular preprocessing: NaNs filled with a constant, a missing-indicator column, and a
    bucket id."""
    missing = paddle.isnan(values)
    if missing.any():
        values = paddle.where(missing, paddle.full_like(values, fill_value), values)
    buckets = paddle.bucketize(values, boundaries)
    return buckets, missing.astype("float32")


@case(args=[(f32([[1.0, np.nan], [3.0, 4.0], [np.nan, 8.0]]), "mean"),
            (f32([[1.0, 2.0], [3.0, 4.0], [5.0, 8.0]]), "zero")])
def impute_columns(table, strategy):
    """Column-wise imputation with the column mean of present values."""
    present = ~paddle.isnan(table)
    zeros = paddle.zeros_like(table)
    clean = paddle.where(present, table, zeros)
    if strategy == "zero":
        return clean
    col_mean = clean.sum(axis=0) / present.astype("float32").sum(axis=0).clip(min=1.0)
    return paddle.where(present, table, col_mean.unsqueeze(0).expand_as(table))


class Seq2SeqForecaster(nn.Layer):
    """A GRU-cell forecaster: teacher forcing decided per step by Python draws against a
    Python ratio (scheduled sampling), outputs collected and stacked."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(1, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, history, targets, teacher_forcing_ratio=0.5, draws=None):
        h = None
        for t in range(history.shape[1]):
            _, h = self.cell(history[:, t:t + 1], h)
        inp = history[:, -1:]
        outputs = []
        for t in range(targets.shape[1]):
            _, h = self.cell(inp, h)
            pred = self.head(h)
            outputs.append(pred)
            use_teacher = draws is not None and draws[t] < teacher_forcing_ratio
            inp = targets[:, t:t + 1] if use_teacher else pred
        return paddle.concat(outputs, axis=1)


case(args=[(rand(2, 3), rand(2, 4), 0.5, [0.1, 0.9, 0.3, 0.7]),
           (rand(2, 3), rand(2, 4), 0.0, None)], rtol=1e-5, atol=1e-6)(Seq2SeqForecaster)


class AutoregressiveRollout(nn.Layer):
    """Roll a one-step model out until a tensor condition (the value leaves a band) or the
    horizon; steps taken come back as a tensor."""

    def __init__(self):
        super().__init__()
        self.step = nn.Linear(2, 2)

    def forward(self, x0, horizon, bound):
        x = x0
        traj = [x]
        for _ in range(horizon):
            x = paddle.tanh(self.step(x)) * 2.0
            traj.append(x)
            if x.abs().max() > bound:
                break
        return paddle.stack(traj), len(traj)


case(args=[(rand(1, 2), 5, 10.0), (rand(1, 2), 5, 0.01)], rtol=1e-5, atol=1e-6)(
    AutoregressiveRollout)


def _np_adam(params, grads, m, v, step, lr, b1, b2, eps, wd):
    outs = []
    for p, g, mi, vi in zip(params, grads, m, v):
        if wd:
            p = p * (1 - lr * wd)
        mi = b1 * mi + (1 - b1) * g
        vi = b2 * vi + (1 - b2) * g * g
        mhat, vhat = mi / (1 - b1 ** step), vi / (1 - b2 ** step)
        outs.append((p - lr * mhat / (np.sqrt(vhat) + eps)).astype(np.float32))
    return outs


_P, _G = [rand(3), rand(2, 2)], [rand(3), rand(2, 2)]
_M, _V = [np.zeros(3, np.float32), np.zeros((2, 2), np.float32)], [
    np.zeros(3, np.float32), np.zeros((2, 2), np.float32)]


@case(args=[(_P, _G, _M, _V, 1, 0.1, 0.0), (_P, _G, [g * 0.1 for g in _G],
                                              [g * g for g in _G], 5, 0.01, 0.01)],
      ref=lambda p, g, m, v, s, lr, wd: _np_adam(p, g, m, v, s, lr, 0.9, 0.999, 1e-8, wd),
      rtol=1e-4, atol=1e-6)
def adamw_step(params, grads, exp_avgs, exp_avg_sqs, step, lr, weight_decay, betas=(0.9, 0.999),
               eps=1e-8):
    """A hand-written AdamW step over lists of tensors (the functional form optimizers use)."""
    beta1, beta2 = betas
    new_params = []
    for i, param in enumerate(params):
        grad = grads[i]
        if weight_decay != 0:
            param = param * (1 - lr * weight_decay)
        exp_avgs[i] = beta1 * exp_avgs[i] + (1 - beta1) * grad
        exp_avg_sqs[i] = beta2 * exp_avg_sqs[i] + (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        denom = (exp_avg_sqs[i] / bias_correction2).sqrt() + eps
        new_params.append(param - lr / bias_correction1 * exp_avgs[i] / denom)
    return new_params


class SGDMomentumStep(nn.Layer):
    """A training step inside the converted function: forward, backward, a hand-written
    momentum update under no_grad (returned as new weights, as functional trainers do),
    gradients cleared."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.momentum = {}

    def forward(self, x, y, lr=0.1, mu=0.9):
        loss = F.mse_loss(self.fc(x), y)
        loss.backward()
        updated = {}
        with paddle.no_grad():
            for name, p in self.fc.named_parameters():
                buf = self.momentum.get(name)
                buf = p.grad if buf is None else mu * buf + p.grad
                if mu > 0:
                    buf = mu * buf + p.grad  # Nesterov-style look-ahead
                updated[name] = p - lr * buf
        self.fc.clear_gradients()
        return loss, updated


case(args=[(rand(4, 3), rand(4, 1), 0.1, 0.9), (rand(4, 3), rand(4, 1), 0.5, 0.0)])(
    SGDMomentumStep)


@case(args=[(rand(5, 2), i64(3)), (rand(5, 2), i64(5))])
def paddle_shape_loop(x, n):
    """Paddle's dygraph-to-static test idiom: a loop bounded by paddle.shape(x)[0] and a
    tensor, accumulating into a tensor."""
    total = paddle.zeros([2])
    i = paddle.zeros([], dtype="int64")
    rows = paddle.shape(x)[0]
    while i < rows and i < n:
        total = total + x[i]
        i += 1
    return total, i


class _Classifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


class PGDAttack(nn.Layer):
    """Projected gradient descent on the input: `paddle.grad` in every step, a projection
    onto the eps-ball, and an early stop once every example is misclassified (a tensor
    break)."""

    def __init__(self):
        super().__init__()
        self.model = _Classifier()

    def forward(self, x, labels, eps=0.3, alpha=0.1, steps=5):
        x_adv = x.detach()
        for _ in range(steps):
            x_adv.stop_gradient = False
            loss = F.cross_entropy(self.model(x_adv), labels)
            (grad,) = paddle.grad(loss, x_adv)
            x_adv = x_adv.detach() + alpha * paddle.sign(grad)
            x_adv = paddle.minimum(paddle.maximum(x_adv, x - eps), x + eps)
            if (self.model(x_adv).argmax(axis=-1) != labels).all():
                break
        return x_adv.detach()


case(args=[(rand(4, 3), i64([0, 1, 0, 1]), 0.3, 0.1, 5),
           (rand(4, 3), i64([0, 1, 0, 1]), 5.0, 2.0, 5)], rtol=1e-5, atol=1e-6)(PGDAttack)
