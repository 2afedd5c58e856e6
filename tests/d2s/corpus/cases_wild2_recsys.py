"""Recommendation, contrastive learning and distillation as their repos write them: embedding
bags over offsets, FM and DeepFM interactions, multi-hot features with padding, InfoNCE with
masks and a temperature from config, triplet mining with loops, hard negatives, and KD losses
with a temperature and a Python alpha schedule."""
import collections
import dataclasses
import itertools

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, i64, rand

_TABLE = rand(10, 3)


def _np_bag(table, ids, offsets, mode):
    ends = list(offsets[1:]) + [len(ids)]
    rows = []
    for s, e in zip(offsets, ends):
        bag = table[ids[s:e]]
        if len(bag) == 0:
            rows.append(np.zeros(table.shape[1], np.float32))
        else:
            rows.append(bag.sum(0) if mode == "sum" else bag.mean(0) if mode == "mean"
                        else bag.max(0))
    return np.stack(rows)


@case(args=[(_TABLE, i64([1, 2, 4, 5, 4, 3, 2, 9]), [0, 4], "sum"),
            (_TABLE, i64([1, 2, 4, 5, 4, 3, 2, 9]), [0, 2, 2, 5], "mean"),
            (_TABLE, i64([7, 8]), [0, 1], "max")], ref=_np_bag)
def embedding_bag(weight, input_ids, offsets, mode="mean"):
    """torch.nn.functional.embedding_bag written by hand with Python offsets."""
    embedded = F.embedding(input_ids, weight)
    ends = offsets[1:] + [input_ids.shape[0]]
    bags = []
    for start, end in zip(offsets, ends):
        if end == start:
            bags.append(paddle.zeros([weight.shape[1]]))
            continue
        bag = embedded[start:end]
        reduce = {"sum": paddle.sum, "mean": paddle.mean, "max": paddle.max}[mode]
        bags.append(reduce(bag, axis=0))
    return paddle.stack(bags)


def _np_multihot(table, ids, pad):
    mask = (ids != pad)[..., None].astype(np.float32)
    emb = table[ids] * mask
    return emb.sum(1) / np.maximum(mask.sum(1), 1)


@case(args=[(_TABLE, i64([[1, 2, 0], [3, 0, 0]]), 0), (_TABLE, i64([[0, 0], [5, 6]]), None)],
      ref=lambda t, ids, pad: _np_multihot(t, ids, -1 if pad is None else pad))
def multi_hot_mean(table, ids, padding_idx=None):
    if padding_idx is None:
        return F.embedding(ids, table).mean(axis=1)
    mask = (ids != padding_idx).astype("float32").unsqueeze(-1)
    emb = F.embedding(ids, table) * mask
    count = mask.sum(axis=1).clip(min=1.0)
    return emb.sum(axis=1) / count


def _np_fm_vec(emb):
    s = emb.sum(1)
    return 0.5 * (s * s - (emb * emb).sum(1))


def _np_fm(emb):
    s = emb.sum(1)
    return 0.5 * (s * s - (emb * emb).sum(1)).sum(-1, keepdims=True)


@case(args=[(rand(2, 4, 3),), (rand(3, 2, 3), False)],
      ref=lambda e, r=True: _np_fm(e) if r else _np_fm_vec(e), rtol=1e-5, atol=1e-5,
      batch=lambda b: (rand(b, 4, 3),))
def fm_interaction(embeddings, reduce_sum=True):
    square_of_sum = paddle.sum(embeddings, axis=1) ** 2
    sum_of_square = paddle.sum(embeddings * embeddings, axis=1)
    if not reduce_sum:
        return 0.5 * (square_of_sum - sum_of_square)
    return 0.5 * paddle.sum(square_of_sum - sum_of_square, axis=-1, keepdim=True)


@dataclasses.dataclass
class DeepFMConfig:
    field_dims: tuple = (5, 4, 6)
    embed_dim: int = 3
    mlp_dims: tuple = (8,)
    use_fm: bool = True
    use_dnn: bool = True


class DeepFM(nn.Layer):
    """Sparse fields offset into one table; linear, FM and DNN parts switched by config."""

    def __init__(self, cfg: DeepFMConfig = None):
        super().__init__()
        cfg = cfg or DeepFMConfig()
        self.cfg = cfg
        offsets = np.concatenate([[0], np.cumsum(cfg.field_dims)[:-1]]).astype("int64")
        self.register_buffer("offsets", paddle.to_tensor(offsets))
        self.embedding = nn.Embedding(sum(cfg.field_dims), cfg.embed_dim)
        self.linear = nn.Embedding(sum(cfg.field_dims), 1)
        layers, d = [], len(cfg.field_dims) * cfg.embed_dim
        for h in cfg.mlp_dims:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x, return_parts=False):
        x = x + self.offsets.unsqueeze(0)
        emb = self.embedding(x)
        parts = {"linear": self.linear(x).sum(axis=1)}
        if self.cfg.use_fm:
            parts["fm"] = fm_interaction(emb)
        if self.cfg.use_dnn:
            parts["dnn"] = self.mlp(emb.flatten(1))
        logit = sum(parts.values())
        if return_parts:
            return F.sigmoid(logit.squeeze(1)), parts
        return F.sigmoid(logit.squeeze(1))


case(args=[(i64([[1, 2, 3], [4, 0, 5]]), False), (i64([[0, 0, 0]]), True)],
     batch=lambda b: (np.tile(i64([[1, 2, 3]]), (b, 1)),))(DeepFM)


def _np_info_nce(q, k, temperature, labels=None):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    k = k / np.linalg.norm(k, axis=1, keepdims=True)
    logits = q @ k.T / temperature
    if labels is not None:
        same = (labels[None] == labels[:, None]) & ~np.eye(len(labels), dtype=bool)
        logits = np.where(same, -1e9, logits)
    logits = logits - logits.max(1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return -np.diag(logp).mean()


@case(args=[(rand(4, 3), rand(4, 3), 0.1, None), (rand(4, 3), rand(4, 3), 0.5, None),
            (rand(4, 3), rand(4, 3), 0.1, i64([0, 0, 1, 1]))],
      ref=_np_info_nce,
      rtol=1e-4, atol=1e-5)
def info_nce(query, keys, temperature=0.1, labels=None):
    """InfoNCE; with labels, positives of the same label are masked out of the negatives
    (supervised-contrastive style)."""
    query = F.normalize(query, axis=-1)
    keys = F.normalize(keys, axis=-1)
    logits = paddle.matmul(query, keys, transpose_y=True) / temperature
    if labels is not None:
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        eye = paddle.eye(labels.shape[0]).astype("bool")
        logits = paddle.where(same & ~eye, paddle.full_like(logits, -1e9), logits)
    targets = paddle.arange(query.shape[0])
    return F.cross_entropy(logits, targets)


def _np_triplets(emb, labels, margin):
    d = np.sqrt(((emb[:, None] - emb[None]) ** 2).sum(-1) + 1e-12)
    losses = []
    for a in range(len(emb)):
        pos_idx = [p for p in range(len(emb)) if p != a and labels[p] == labels[a]]
        neg_idx = [n for n in range(len(emb)) if labels[n] != labels[a]]
        if not pos_idx or not neg_idx:
            continue
        hardest_pos = max(d[a, p] for p in pos_idx)
        hardest_neg = min(d[a, n] for n in neg_idx)
        losses.append(max(hardest_pos - hardest_neg + margin, 0.0))
    return np.float32(np.mean(losses)) if losses else np.float32(0.0)


@case(args=[(rand(5, 3), [0, 0, 1, 1, 2], 0.2), (rand(4, 3), [0, 1, 2, 3], 0.2),
            (rand(4, 3), [1, 1, 2, 2], 1.0)], ref=_np_triplets, rtol=1e-4, atol=1e-5)
def batch_hard_triplet_loss(embeddings, labels, margin):
    """Batch-hard mining with Python loops over anchors and Python label lists."""
    diff = embeddings.unsqueeze(1) - embeddings.unsqueeze(0)
    dist = paddle.sqrt((diff * diff).sum(-1) + 1e-12)
    losses = []
    for a, label in enumerate(labels):
        positives = [p for p, other in enumerate(labels) if p != a and other == label]
        negatives = [n for n, other in enumerate(labels) if other != label]
        if not positives or not negatives:
            continue
        hardest_pos = paddle.max(paddle.gather(dist[a], paddle.to_tensor(positives)))
        hardest_neg = paddle.min(paddle.gather(dist[a], paddle.to_tensor(negatives)))
        losses.append(F.relu(hardest_pos - hardest_neg + margin))
    if len(losses) == 0:
        return paddle.to_tensor(0.0)
    return paddle.stack(losses).mean()


@case(args=[(rand(4, 3), rand(6, 3), 2, 0.0), (rand(4, 3), rand(6, 3), 3, 0.9)])
def hard_negative_scores(query, candidates, k, false_negative_threshold):
    """Top-k hardest negatives per query, dropping likely false negatives above a threshold."""
    sims = paddle.matmul(F.normalize(query, axis=1), F.normalize(candidates, axis=1),
                         transpose_y=True)
    if false_negative_threshold > 0:
        sims = paddle.where(sims > false_negative_threshold, paddle.full_like(sims, -2.0), sims)
    values, indices = paddle.topk(sims, k, axis=1)
    return values, indices


def _np_kd(s, t, labels, temp, alpha):
    def log_softmax(z):
        z = z - z.max(-1, keepdims=True)
        return z - np.log(np.exp(z).sum(-1, keepdims=True))

    p_t = np.exp(log_softmax(t / temp))
    kl = (p_t * (np.log(p_t) - log_softmax(s / temp))).sum(-1).mean() * temp * temp
    ce = -log_softmax(s)[np.arange(len(labels)), labels].mean()
    return np.float32(alpha * kl + (1 - alpha) * ce)


@case(args=[(rand(3, 4), rand(3, 4), i64([0, 2, 1]), 4.0, 0.7),
            (rand(3, 4), rand(3, 4), i64([0, 2, 1]), 1.0, 0.0)], ref=_np_kd, rtol=1e-4,
      atol=1e-5)
def distillation_loss(student_logits, teacher_logits, labels, temperature, alpha):
    hard = F.cross_entropy(student_logits, labels)
    if alpha == 0.0:
        return hard
    soft_t = F.softmax(teacher_logits / temperature, axis=-1)
    log_s = F.log_softmax(student_logits / temperature, axis=-1)
    kl = (soft_t * (paddle.log(soft_t) - log_s)).sum(-1).mean()
    return alpha * kl * temperature ** 2 + (1 - alpha) * hard


class _Tiny(nn.Layer):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(4, width)
        self.fc2 = nn.Linear(width, 3)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(h), h


class FeatureDistiller(nn.Layer):
    """Teacher under no_grad, hint loss on a projected feature, loss terms in a dict and a
    summed total; the per-term weights come from a dict with defaults."""

    def __init__(self, weights=None):
        super().__init__()
        self.student, self.teacher = _Tiny(4), _Tiny(6)
        self.proj = nn.Linear(4, 6)
        self.weights = weights or {"kd": 1.0}

    def forward(self, x, labels=None):
        with paddle.no_grad():
            t_logits, t_feat = self.teacher(x)
        s_logits, s_feat = self.student(x)
        losses = collections.OrderedDict()
        losses["kd"] = F.mse_loss(s_logits, t_logits)
        losses["hint"] = F.mse_loss(self.proj(s_feat), t_feat)
        if labels is not None:
            losses["ce"] = F.cross_entropy(s_logits, labels)
        total = sum(self.weights.get(name, 0.5) * value for name, value in losses.items())
        return total, dict(losses)


case(args=[(rand(3, 4), None), (rand(3, 4), i64([0, 1, 2]))], rtol=1e-5, atol=1e-6)(
    FeatureDistiller)


@case(args=[(rand(6, 3), [0, 0, 1, 1, 2, 2]), (rand(4, 3), [0, 1, 0, 1])])
def prototype_logits(embeddings, labels):
    """Prototypical networks: class means from Python labels grouped with itertools."""
    pairs = sorted(enumerate(labels), key=lambda p: p[1])
    protos = []
    for _, group in itertools.groupby(pairs, key=lambda p: p[1]):
        idx = paddle.to_tensor([i for i, _ in group])
        protos.append(paddle.gather(embeddings, idx).mean(axis=0))
    protos = paddle.stack(protos)
    d = ((embeddings.unsqueeze(1) - protos.unsqueeze(0)) ** 2).sum(-1)
    return -d


@case(args=[(rand(4, 3), rand(4, 3), 0.5), (rand(4, 3), rand(4, 3), -2.0)])
def cosine_margin_loss(anchor, positive, margin):
    """Contrastive loss on pairs where a pair counts only if its similarity is under margin;
    returns zero with no contributing pairs (a tensor if over the count)."""
    sim = F.cosine_similarity(anchor, positive, axis=-1)
    active = (sim < margin).astype("float32")
    n = active.sum()
    if n > 0:
        return ((1 - sim) * active).sum() / n
    return paddle.zeros([])


@case(args=[(rand(3, 4), rand(5, 4), 2, 3), (rand(3, 4) * -1, rand(5, 4), 3, 2)])
def rerank_best_candidate(user, items, top, num_slates):
    """Re-ranking: the candidate slate with the best total score, picked with max(key=...)."""
    scores = paddle.matmul(user.mean(axis=0), items, transpose_y=True)
    order = paddle.argsort(scores, descending=True)
    slates = [paddle.gather(items, order[start:start + top]) for start in range(num_slates)]
    best = max(slates, key=lambda s: paddle.matmul(s, user.mean(axis=0)).sum())
    worst = min(slates, key=lambda s: paddle.matmul(s, user.mean(axis=0)).sum())
    return best, worst
