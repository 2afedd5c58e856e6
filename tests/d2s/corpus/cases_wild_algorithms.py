"""Iterative algorithms inside models, as research repos write them: greedy bipartite matching
with `while True` and a tensor `break`, k-means until convergence, the CRF forward algorithm
over a padding mask, WGAN-GP's gradient penalty with `paddle.grad`, scheduled sampling, early
exit over a LayerList, loss dicts summed over `.values()` and `**kwargs` forwards."""
import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, pos, rand


def _np_greedy_match(cost, thr):
    cost = cost.copy()
    pairs = []
    while True:
        i, j = np.unravel_index(cost.argmin(), cost.shape)
        if cost[i, j] > thr:
            break
        pairs.append((i, j))
        cost[i, :] = np.inf
        cost[:, j] = np.inf
    return np.asarray(pairs, np.int64).reshape(-1, 2)


_COST = f32([[0.1, 0.9, 0.8], [0.7, 0.2, 0.9], [0.6, 0.5, 0.95]])


@case(args=[(_COST, 0.5), (_COST, 0.15), (_COST, 1.0)],
      ref=lambda c, t: _np_greedy_match(c, t))
def greedy_matching(cost, threshold):
    """SORT-style tracking association: repeatedly take the cheapest pair under a threshold."""
    cost = cost.clone()
    n_cols = cost.shape[1]
    pairs = []
    while True:
        flat = cost.reshape([-1]).argmin()
        i, j = flat // n_cols, flat % n_cols
        if cost[i, j] > threshold:
            break
        pairs.append(paddle.stack([i, j]))
        cost[i, :] = float("inf")
        cost[:, j] = float("inf")
    if len(pairs) == 0:
        return paddle.zeros([0, 2], dtype="int64")
    return paddle.stack(pairs)


def _np_kmeans(x, init, iters, tol):
    c = init.copy()
    for _ in range(iters):
        assign = ((x[:, None] - c[None]) ** 2).sum(-1).argmin(1)
        new = np.stack([x[assign == k].mean(0) if (assign == k).any() else c[k]
                        for k in range(len(c))])
        shift = np.abs(new - c).max()
        c = new
        if shift < tol:
            break
    return c.astype(np.float32)


_PTS = f32([[0.0, 0.0], [0.1, 0.2], [5.0, 5.0], [5.2, 4.9], [0.2, 0.1], [4.8, 5.1]])


@case(args=[(_PTS, _PTS[[0, 2]], 10, 1e-4), (_PTS, _PTS[[0, 1]], 1, 1e-4),
            (_PTS, f32([[0.0, 0.0], [100.0, 100.0]]), 10, 1e-4)],
      ref=lambda x, c, n, tol: _np_kmeans(x, c, n, tol), rtol=1e-5, atol=1e-5)
def kmeans(x, centroids, max_iter, tol):
    k = centroids.shape[0]
    for _ in range(max_iter):
        dist = ((x.unsqueeze(1) - centroids.unsqueeze(0)) ** 2).sum(axis=-1)
        assign = dist.argmin(axis=1)
        new_centroids = []
        for c in range(k):
            members = (assign == c).astype(x.dtype).unsqueeze(1)
            count = members.sum()
            if count > 0:
                new_centroids.append((x * members).sum(axis=0) / count)
            else:
                new_centroids.append(centroids[c])
        new_centroids = paddle.stack(new_centroids)
        shift = (new_centroids - centroids).abs().max()
        centroids = new_centroids
        if shift < tol:
            break
    return centroids


def _np_crf_forward(em, trans, mask):
    alpha = em[:, 0]
    for t in range(1, em.shape[1]):
        s = alpha[:, :, None] + trans[None] + em[:, t][:, None, :]
        m = s.max(1)
        nxt = m + np.log(np.exp(s - m[:, None]).sum(1))
        alpha = np.where(mask[:, t:t + 1] > 0, nxt, alpha)
    m = alpha.max(1)
    return (m + np.log(np.exp(alpha - m[:, None]).sum(1))).astype(np.float32)


_EM = rand(2, 4, 3)


@case(args=[(_EM, rand(3, 3), f32([[1, 1, 1, 1], [1, 1, 0, 0]])),
            (_EM[:, :1], rand(3, 3), f32([[1], [1]]))],
      ref=lambda e, t, m: _np_crf_forward(e, t, m), rtol=1e-5)
def crf_log_partition(emissions, transitions, mask):
    """The CRF forward algorithm over a batch with padding (pytorch-crf's `_compute_normalizer`)."""
    seq_len = emissions.shape[1]
    score = emissions[:, 0]
    for i in range(1, seq_len):
        broadcast_score = score.unsqueeze(2)
        broadcast_emissions = emissions[:, i].unsqueeze(1)
        next_score = broadcast_score + transitions + broadcast_emissions
        next_score = paddle.logsumexp(next_score, axis=1)
        score = paddle.where(mask[:, i].unsqueeze(1) > 0, next_score, score)
    return paddle.logsumexp(score, axis=1)


class _Critic(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 6)
        self.fc2 = nn.Linear(6, 1)

    def forward(self, x):
        return self.fc2(paddle.tanh(self.fc1(x)))


@case(args=[(rand(4, 3), rand(4, 3), f32([[0.3], [0.7], [0.5], [0.1]]), 10.0),
            (rand(4, 3), rand(4, 3), f32([[0.3], [0.7], [0.5], [0.1]]), 0.0)])
class WGANGradientPenalty(nn.Layer):
    def __init__(self):
        super().__init__()
        self.critic = _Critic()

    def forward(self, real, fake, alpha, lambda_gp):
        d_loss = self.critic(fake).mean() - self.critic(real).mean()
        if lambda_gp == 0:
            return d_loss
        interp = alpha * real + (1 - alpha) * fake
        interp.stop_gradient = False
        out = self.critic(interp)
        grads = paddle.grad(outputs=out, inputs=interp, grad_outputs=paddle.ones_like(out),
                            create_graph=True)[0]
        gp = ((grads.norm(2, axis=1) - 1) ** 2).mean()
        return d_loss + lambda_gp * gp


@case(args=[(i64([[2, 3, 4, 1]]), f32([0.1, 0.9, 0.2, 0.8]), 0.5),
            (i64([[2, 3, 4, 1]]), f32([0.1, 0.9, 0.2, 0.8]), 0.0)])
class ScheduledSamplingDecoder(nn.Layer):
    """Teacher forcing with a per-step draw (passed in): the next input is the gold token when
    the draw is under the ratio, else the model's own prediction."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.cell = nn.GRUCell(4, 4)
        self.proj = nn.Linear(4, 6)

    def forward(self, target, draws, teacher_ratio):
        batch, steps = target.shape
        h = paddle.zeros([batch, 4])
        inp = paddle.zeros([batch], dtype="int64")
        logits_all = []
        for t in range(steps):
            _, h = self.cell(self.emb(inp), h)
            logits = self.proj(h)
            logits_all.append(logits)
            if draws[t] < teacher_ratio:
                inp = target[:, t]
            else:
                inp = logits.argmax(axis=-1)
        logits_all = paddle.stack(logits_all, axis=1)
        loss = F.cross_entropy(logits_all.reshape([-1, 6]), target.reshape([-1]))
        return loss, logits_all


@case(args=[(pos(2, 4) * 0.01,), (pos(2, 4) * 5,), (rand(2, 4),)],
      batch=lambda b: (rand(b, 4) * b,))
class EarlyExitEncoder(nn.Layer):
    """DeeBERT-style early exit: each layer has a classifier; return as soon as one is sure."""

    def __init__(self, threshold=0.6):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.LayerList([nn.Linear(4, 2) for _ in range(3)])
        self.threshold = threshold

    def forward(self, x):
        probs = None
        for i, (layer, head) in enumerate(zip(self.layers, self.heads)):
            x = F.relu(layer(x)) + x
            probs = F.softmax(head(x), axis=-1)
            if probs.max(axis=-1).min() > self.threshold:
                return probs, i
        return probs, len(self.layers) - 1


def _loss_terms(outputs, targets, weights):
    losses = {}
    for name, pred in outputs.items():
        if name not in targets:
            continue
        losses[name] = weights.get(name, 1.0) * F.mse_loss(pred, targets[name])
    return losses


@case(args=[({"box": rand(2, 4), "cls": rand(2, 3)}, {"box": rand(2, 4), "cls": rand(2, 3)},
             {"box": 5.0}),
            ({"box": rand(2, 4), "cls": rand(2, 3)}, {"box": rand(2, 4) * 20}, {})],
      stdout=("loss spike:",))
def weighted_loss_dict(outputs, targets, weights):
    losses = _loss_terms(outputs, targets, weights)
    total = sum(losses.values())
    if total > 10:
        print("loss spike:", total)
    losses["total"] = total
    return losses


@case(args=[(rand(2, 3, 4),), (rand(2, 3, 4), i64([[1, 1, 0], [1, 0, 0]])),
            (rand(2, 3, 4), None, 0.5)])
class KwargsForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, attention_mask=None, dropout_p=0.0, **kwargs):
        h = self.fc(x)
        if attention_mask is not None:
            h = h * attention_mask.unsqueeze(-1).astype(h.dtype)
            denom = attention_mask.sum(axis=1, keepdim=True).astype(h.dtype)
        else:
            denom = paddle.full([x.shape[0], 1], float(x.shape[1]))
        pooled = h.sum(axis=1) / denom
        if dropout_p > 0 and kwargs.get("training", self.training):
            pooled = F.dropout(pooled, dropout_p)
        return pooled
