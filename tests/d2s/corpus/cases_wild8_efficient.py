"""2025-26 efficiency and science code, written as those repos write it: mixture-of-experts
routing (top-k gating with capacity and token dropping, Switch's load-balancing aux loss, an
expert loop that skips experts with no tokens), LoRA / adapters (merge and unmerge on a flag,
a rank-0 config that disables the adapter, per-name scaling from a config dict), quantization
calibration (running min/max observers on a Layer, a histogram observer, per-channel
symmetric fake quant, a percentile clip), sparse attention masks (sliding windows, block-
sparse layouts from a Python list of allowed blocks, global tokens), recommendation re-ranking
(MMR diversity with a Python loop over picks, hard-negative selection) and small physics
(molecular dynamics with a neighbour list rebuilt when atoms moved far enough, an SPH density
sum with a cutoff, velocity Verlet with an energy-drift check)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import runtime as torch
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand

# ---- mixture of experts ----------------------------------------------------------------------


def _np_topk_capacity(logits, k, capacity):
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs = probs / probs.sum(-1, keepdims=True)
    idx = np.argsort(-probs, -1, kind="stable")[:, :k]
    counts = np.zeros(logits.shape[1], np.int64)
    keep = np.zeros(idx.shape, bool)
    for t in range(idx.shape[0]):
        for j in range(k):
            e = idx[t, j]
            if counts[e] < capacity:
                counts[e] += 1
                keep[t, j] = True
    return idx, keep, counts


@case(args=[(f32([[2, 1, 0, 0], [2, 0, 1, 0], [0, 0, 1, 3], [0, 2, 0, 1]]), 2, 2),
            (f32([[3, 0, 0, 0], [3, 0, 0, 0], [3, 0, 0, 0], [3, 1, 0, 0]]), 1, 2)],
      ref=_np_topk_capacity, batch=lambda b: (rand(b, 4),))
def topk_routing_with_capacity(router_logits, top_k=2, capacity=2):
    """GShard-style dispatch: each token's top-k experts in order, a token dropped for an
    expert whose capacity is full (a per-expert counter tensor updated in a token loop)."""
    probs = F.softmax(router_logits, axis=-1)
    _, idx = torch.topk(probs, top_k, axis=-1)
    counts = torch.zeros([router_logits.shape[1]], dtype="int64")
    keep = torch.zeros(idx.shape, dtype="bool")
    for t in range(idx.shape[0]):
        for j in range(top_k):
            e = idx[t, j]
            if counts[e] < capacity:
                counts[e] += 1
                keep[t, j] = True
    return idx, keep, counts


def _np_switch_aux(logits, n_experts):
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs = probs / probs.sum(-1, keepdims=True)
    idx = probs.argmax(-1)
    frac = np.bincount(idx, minlength=n_experts) / logits.shape[0]
    return np.float32(n_experts * np.sum(frac * probs.mean(0)))


@case(args=[(rand(6, 4), 4), (f32(np.tile([[4, 0, 0, 0]], (6, 1))), 4)], ref=_np_switch_aux)
def switch_load_balancing_loss(router_logits, num_experts):
    """Switch Transformer's aux loss: fraction of tokens per expert times the mean router
    probability, times the expert count."""
    probs = F.softmax(router_logits, axis=-1)
    expert_index = probs.argmax(axis=-1)
    mask = F.one_hot(expert_index, num_experts).astype("float32")
    tokens_per_expert = mask.mean(axis=0)
    router_prob_per_expert = probs.mean(axis=0)
    if tokens_per_expert.max() == 1.0:
        # every token went to one expert: the loss is its mean probability times E
        return num_experts * router_prob_per_expert[expert_index[0]]
    return num_experts * (tokens_per_expert * router_prob_per_expert).sum()


class SparseMoE(nn.Layer):
    """Mixtral's block: route, then a loop over experts that skips experts no token chose
    (`if not mask.any(): continue`), accumulating with index_add; aux stats in a dict."""

    def __init__(self, dim=4, num_experts=3, top_k=1):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias_attr=False)
        self.experts = nn.LayerList([nn.Linear(dim, dim) for _ in range(num_experts)])
        self.top_k = top_k

    def forward(self, x):
        logits = self.gate(x)
        weights, selected = torch.topk(F.softmax(logits, axis=-1), self.top_k, axis=-1)
        out = torch.zeros_like(x)
        stats = {"skipped": 0, "used": []}
        for e, expert in enumerate(self.experts):
            mask = (selected == e).any(axis=-1)
            if not mask.any():
                stats["skipped"] += 1
                continue
            stats["used"].append(e)
            w = (weights * (selected == e).astype("float32")).sum(axis=-1, keepdim=True)
            out = out + torch.where(mask.unsqueeze(-1), w * expert(x), torch.zeros_like(x))
        return out, stats


case(args=[(rand(5, 4),), (f32(np.tile([[3.0, -3.0, 3.0, -3.0]], (5, 1))),)],
     batch=lambda b: (rand(b, 4),))(SparseMoE)


def _np_zloss(logits, coef):
    lse = np.log(np.exp(logits).sum(-1))
    return np.float32(coef * np.mean(lse ** 2))


@case(args=[(rand(4, 3), 1e-3), (rand(4, 3), 0.0)], ref=_np_zloss, rtol=1e-4)
def router_z_loss(router_logits, coef=1e-3):
    """ST-MoE's router z-loss, off (a Python 0.0 coefficient returns a 0-d zero)."""
    if coef == 0.0:
        return torch.zeros([])
    lse = torch.logsumexp(router_logits, axis=-1)
    return coef * (lse ** 2).mean()


# ---- LoRA / adapters -------------------------------------------------------------------------
class LoRALinear(nn.Layer):
    """peft's LoRA Linear: a frozen base, A and B factors, `merged` as a Python flag the
    forward reads; rank 0 in the config disables the adapter."""

    def __init__(self, cfg=None):
        super().__init__()
        cfg = cfg or {"r": 2, "alpha": 4, "dropout": 0.0}
        self.base = nn.Linear(4, 3)
        self.r = cfg["r"]
        self.scaling = cfg["alpha"] / cfg["r"] if cfg["r"] > 0 else 0.0
        if self.r > 0:
            self.lora_A = nn.Linear(4, self.r, bias_attr=False)
            self.lora_B = nn.Linear(self.r, 3, bias_attr=False)
            self.lora_B.weight.set_value(torch.full([self.r, 3], 0.1))
        self.merged = False

    def forward(self, x, adapter_on=True):
        out = self.base(x)
        if self.r > 0 and adapter_on and not self.merged:
            out = out + self.lora_B(self.lora_A(x)) * self.scaling
        return out


case(args=[(rand(2, 4),), (rand(2, 4), False)], batch=lambda b: (rand(b, 4),))(LoRALinear)


def _np_merge(w, a, b, scale, fan_in_fan_out):
    delta = (a @ b) * scale
    return (w + (delta.T if fan_in_fan_out else delta)).astype(np.float32)


@case(args=[(rand(4, 3), rand(4, 2), rand(2, 3), 2.0, False),
            (rand(3, 4), rand(4, 2), rand(2, 3), 0.5, True)], ref=_np_merge, rtol=1e-5)
def merge_lora_weight(base_weight, lora_a, lora_b, scaling, fan_in_fan_out=False):
    """`merge_and_unload`: W + (A @ B) * scale, transposed for fan-in-fan-out (GPT-2 Conv1D)
    layers."""
    delta = torch.matmul(lora_a, lora_b) * scaling
    if fan_in_fan_out:
        delta = delta.t()
    return base_weight + delta


@case(args=[(rand(2, 4), {"q_proj": 2.0, "v_proj": 0.5}, ["q_proj", "k_proj", "v_proj"]),
            (rand(2, 4), {}, ["q_proj"])])
def per_module_adapter_scales(x, scales, names):
    """An adapter stack configured by a dict of per-module scales: modules without an entry
    pass through; which modules were active is a Python list."""
    active = []
    h = x
    for name in names:
        s = scales.get(name)
        if s is None:
            continue
        h = h + s * torch.tanh(h)
        active.append(name)
    return h, active


# ---- quantization calibration --------------------------------------------------------------
class MinMaxObserver(nn.Layer):
    """torch.ao's MinMaxObserver: running min/max buffers updated every call (the first call
    initialises them; a Python flag on the Layer says whether it has), then a scale and a
    zero point for uint8. Its state changes every call, so it runs as a training case
    (cases_wild8_training.observer_calibration_pass: every call compared from one start)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("min_val", torch.zeros([]))
        self.register_buffer("max_val", torch.zeros([]))
        self.initialized = False

    def forward(self, x):
        cur_min, cur_max = x.min(), x.max()
        if not self.initialized:
            self.min_val = cur_min
            self.max_val = cur_max
            self.initialized = True
        else:
            self.min_val = torch.minimum(self.min_val, cur_min)
            self.max_val = torch.maximum(self.max_val, cur_max)
        min_neg = torch.minimum(self.min_val, torch.zeros([]))
        max_pos = torch.maximum(self.max_val, torch.zeros([]))
        scale = torch.clip((max_pos - min_neg) / 255.0, min=1e-8)
        zero_point = torch.clip(torch.round(-min_neg / scale), 0, 255).astype("int64")
        return scale, zero_point



def _np_hist_thr(x, bins, pct):
    hist, edges = np.histogram(np.abs(x), bins=bins, range=(0, np.abs(x).max()))
    c = np.cumsum(hist) / hist.sum()
    for i in range(bins):
        if c[i] >= pct:
            return np.float32(edges[i + 1])
    return np.float32(edges[-1])


@case(args=[(rand(64, lo=-1, hi=1), 8, 0.9), (f32([0.1] * 60 + [5.0] * 4), 8, 0.9),
            (f32([0.1] * 63 + [5.0]), 8, 1.0)], ref=_np_hist_thr, rtol=1e-5)
def histogram_percentile_clip(x, bins=8, percentile=0.99):
    """A histogram observer's clip value: the first bin edge whose cumulative fraction
    reaches the percentile, found by a loop with an early return."""
    amax = x.abs().max()
    hist = torch.histogram(x.abs(), bins=bins, min=0.0, max=float(amax)).astype("float32")
    cdf = torch.cumsum(hist, axis=0) / hist.sum()
    width = amax / bins
    for i in range(bins):
        if cdf[i] >= percentile:
            return width * (i + 1)
    return amax


def _np_fake_quant(w, bits, axis):
    qmax = 2 ** (bits - 1) - 1
    amax = np.abs(w).max(axis=1 - axis, keepdims=True) if axis is not None else np.abs(w).max()
    scale = np.maximum(amax / qmax, 1e-8)
    return (np.clip(np.round(w / scale), -qmax - 1, qmax) * scale).astype(np.float32)


@case(args=[(rand(3, 4), 8, 0), (rand(3, 4), 4, None)], ref=_np_fake_quant, rtol=1e-5,
      atol=1e-6, batch=lambda b: (rand(b, 4),))
def fake_quant_per_channel(weight, num_bits=8, ch_axis=0):
    """Symmetric fake quantisation per output channel (or per tensor when `ch_axis` is None),
    bits and axis from the QConfig."""
    qmax = 2 ** (num_bits - 1) - 1
    if ch_axis is not None:
        amax = weight.abs().max(axis=1 - ch_axis, keepdim=True)
    else:
        amax = weight.abs().max()
    scale = torch.clip(amax / qmax, min=1e-8)
    return torch.clip(torch.round(weight / scale), -qmax - 1, qmax) * scale


@dataclass
class CalibStats:
    n_batches: int = 0
    absmax: float = 0.0
    outliers: int = 0


@case(args=[(rand(3, 4), CalibStats, 0.9), (rand(3, 4, lo=-5, hi=5), CalibStats, 2.0)])
def smoothquant_calibrate(batch, stats_cls, outlier_thr):
    """SmoothQuant calibration over the rows of a batch: a dataclass of Python statistics
    updated per row (an int counter, a float running max, outliers counted with an if)."""
    stats = stats_cls()
    for row in batch:
        stats.n_batches += 1
        m = float(row.abs().max())
        stats.absmax = max(stats.absmax, m)
        if m > outlier_thr:
            stats.outliers += 1
    return stats.n_batches, stats.absmax, stats.outliers


# ---- sparse attention masks ------------------------------------------------------------------
def _np_sliding(q, k, window, causal):
    L = q.shape[0]
    i, j = np.arange(L)[:, None], np.arange(L)[None, :]
    allowed = np.abs(i - j) <= window
    if causal:
        allowed &= j <= i
    s = q @ k.T / np.sqrt(q.shape[1])
    s = np.where(allowed, s, -1e9)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


@case(args=[(rand(5, 4), rand(5, 4), 1, True), (rand(5, 4), rand(5, 4), 2, False)],
      ref=_np_sliding, rtol=1e-5, atol=1e-6)
def sliding_window_attention_probs(q, k, window=1, causal=True):
    """Longformer/Mistral local attention: a band mask, made causal on a flag."""
    L = q.shape[0]
    pos = torch.arange(L)
    allowed = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs() <= window
    if causal:
        allowed = allowed & (pos.unsqueeze(0) <= pos.unsqueeze(1))
    scores = torch.matmul(q, k.t()) / math.sqrt(q.shape[1])
    scores = torch.where(allowed, scores, torch.full_like(scores, -1e9))
    return F.softmax(scores, axis=-1)


def _np_block_mask(seq, block, layout):
    nb = seq // block
    m = np.zeros((seq, seq), bool)
    for r, c in layout:
        if r < nb and c < nb:
            m[r * block:(r + 1) * block, c * block:(c + 1) * block] = True
    return m


@case(args=[(8, 2, [(0, 0), (1, 1), (1, 0), (3, 3), (5, 5)]), (8, 4, [(0, 0), (1, 1)])],
      ref=_np_block_mask)
def block_sparse_layout_mask(seq_len, block, layout):
    """BigBird/Sparse Transformer block layouts given as a Python list of (row, col) blocks;
    blocks out of range are skipped."""
    nb = seq_len // block
    mask = torch.zeros([seq_len, seq_len], dtype="bool")
    for r, c in layout:
        if r >= nb or c >= nb:
            continue
        mask[r * block:(r + 1) * block, c * block:(c + 1) * block] = True
    return mask


@case(args=[(rand(6, 4), i64([0, 3]), 1), (rand(6, 4), i64([5]), 0)])
def global_plus_local_attention(x, global_idx, window):
    """Longformer's global tokens: a band plus rows and columns of the global tokens; the
    output of the global tokens is returned too (gathered)."""
    L = x.shape[0]
    pos = torch.arange(L)
    if window > 0:
        allowed = (pos.unsqueeze(1) - pos.unsqueeze(0)).abs() <= window
    else:
        allowed = torch.eye(L).astype("bool")
    is_global = torch.zeros([L], dtype="bool")
    is_global[global_idx] = True
    allowed = allowed | is_global.unsqueeze(0) | is_global.unsqueeze(1)
    scores = torch.matmul(x, x.t())
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    out = torch.matmul(F.softmax(scores, axis=-1), x)
    return out, out[global_idx], int(allowed.astype("int64").sum())


# ---- recommendation re-ranking ---------------------------------------------------------------
def _np_mmr(rel, sim, k, lam):
    picked, cand = [], list(range(len(rel)))
    if lam >= 1.0:
        return np.argsort(-rel, kind="stable")[:k].astype(np.int64)
    for _ in range(k):
        best, best_s = None, -1e9
        for c in cand:
            div = max(sim[c, p] for p in picked) if picked else 0.0
            s = lam * rel[c] - (1 - lam) * div
            if s > best_s:
                best, best_s = c, s
        picked.append(best)
        cand.remove(best)
    return np.asarray(picked, np.int64)


SIM = f32([[1, .9, .1, .2], [.9, 1, .2, .1], [.1, .2, 1, .3], [.2, .1, .3, 1]])


@case(args=[(f32([0.9, 0.85, 0.5, 0.3]), SIM, 3, 0.5), (f32([0.9, 0.85, 0.5, 0.3]), SIM, 3, 1.0)],
      ref=_np_mmr)
def mmr_rerank(relevance, similarity, k=3, lam=0.5):
    """Maximal marginal relevance: pick k items greedily, each the best trade-off between its
    relevance and its similarity to what was picked (a mask tensor instead of a set)."""
    n = relevance.shape[0]
    if lam >= 1.0:  # pure relevance
        return torch.argsort(relevance, descending=True)[:k]
    picked = []
    taken = torch.zeros([n], dtype="bool")
    for _ in range(k):
        if picked:
            div = similarity[:, torch.stack(picked)].max(axis=1)
        else:
            div = torch.zeros([n])
        score = lam * relevance - (1 - lam) * div
        score = torch.where(taken, torch.full_like(score, -1e9), score)
        best = score.argmax()
        picked.append(best)
        taken[best] = True
    return torch.stack(picked)


@case(args=[(rand(3, 4), rand(6, 4), i64([0, 1, 2]), 2),
            (rand(3, 4), rand(6, 4), i64([5, 5, 5]), 1, 0.1)],
      batch=lambda b: (rand(b, 4), rand(6, 4), i64([i % 6 for i in range(b)])))
def hard_negative_mining(user_emb, item_emb, positives, num_neg=2, temperature=None):
    """In-batch hard negatives: the highest-scoring items that are not the user's positive,
    found with a masked topk; the loss is a softmax over positive + negatives."""
    scores = torch.matmul(user_emb, item_emb.t())
    pos_mask = F.one_hot(positives, item_emb.shape[0]).astype("bool")
    neg_scores = torch.where(pos_mask, torch.full_like(scores, -1e9), scores)
    hard, _ = torch.topk(neg_scores, num_neg, axis=1)
    pos = (scores * pos_mask.astype("float32")).sum(axis=1, keepdim=True)
    logits = torch.concat([pos, hard], axis=1)
    if temperature is not None:
        logits = logits / temperature
    return F.cross_entropy(logits, torch.zeros([logits.shape[0]], dtype="int64"))


# ---- physics -------------------------------------------------------------------------------
def _np_md(pos, vel, steps, dt, cutoff, skin):
    ref = pos.copy()
    rebuilds = 0
    nbr = None
    for _ in range(steps):
        if nbr is None or np.abs(pos - ref).max() > skin / 2:
            d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
            nbr = (d < cutoff + skin) & (d > 0)
            ref = pos.copy()
            rebuilds += 1
        diff = pos[:, None] - pos[None]
        r2 = (diff ** 2).sum(-1) + np.eye(len(pos))
        f = np.where(nbr[..., None], diff / r2[..., None] ** 2, 0).sum(1)
        vel = vel + dt * f
        pos = pos + dt * vel
    return pos.astype(np.float32), rebuilds


@case(args=[(f32([[0, 0], [1.0, 0], [0, 1.2]]), f32([[0, 0], [0, 0], [0, 0]]), 4, 0.01, 1.5,
             0.3),
            (f32([[0, 0], [1.0, 0], [0, 1.2]]), f32([[-20, 0], [20, 0], [0, 20]]), 4, 0.01, 1.5,
             0.3)], ref=_np_md, rtol=1e-4, atol=1e-5,
      batch=lambda b: (rand(b, 2, lo=0, hi=3), rand(b, 2, lo=-20, hi=20)))
def md_with_neighbor_list(pos, vel, steps=4, dt=0.01, cutoff=1.5, skin=0.3):
    """A Verlet-list MD loop (JAX-MD / ASE style): the neighbour list is rebuilt when an atom
    has moved more than half the skin since the last build; rebuilds are counted."""
    ref = pos
    nbr = None
    rebuilds = 0
    eye = torch.eye(pos.shape[0])
    for _ in range(steps):
        if nbr is None or (pos - ref).abs().max() > skin / 2:
            d = torch.cdist(pos, pos)
            nbr = (d < cutoff + skin) & (d > 0)
            ref = pos
            rebuilds += 1
        diff = pos.unsqueeze(1) - pos.unsqueeze(0)
        r2 = (diff ** 2).sum(-1) + eye
        force = torch.where(nbr.unsqueeze(-1), diff / (r2 ** 2).unsqueeze(-1),
                            torch.zeros_like(diff)).sum(axis=1)
        vel = vel + dt * force
        pos = pos + dt * vel
    return pos, rebuilds


def _np_sph(pos, h, mass=1.0, kernel="cubic"):
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    q = d / h
    if kernel == "poly6":
        w = np.where(q < 1, (1 - q * q) ** 3, 0.0) * 4 / (np.pi * h * h)
    else:
        w = np.where(q < 1, (1 - q) ** 3, 0.0) * 10 / (7 * np.pi * h * h)
    return (mass * w.sum(1)).astype(np.float32)


@case(args=[(rand(5, 2, lo=0, hi=1), 0.5, 1.0), (rand(5, 2, lo=0, hi=1), 2.0, 0.5, "poly6")],
      ref=_np_sph, rtol=1e-4, atol=1e-5)
def sph_density(positions, h, mass=1.0, kernel="cubic"):
    """SPH density summation with a compact kernel (zero beyond the smoothing length),
    chosen by name as in the simulation config."""
    d = torch.cdist(positions, positions)
    q = d / h
    zero = torch.zeros_like(q)
    if kernel == "poly6":
        w = torch.where(q < 1, (1 - q * q) ** 3, zero) * (4 / (math.pi * h * h))
    else:
        w = torch.where(q < 1, (1 - q) ** 3, zero) * (10 / (7 * math.pi * h * h))
    return mass * w.sum(axis=1)


@case(args=[(f32([1.0]), f32([0.0]), 0.1, 10, 1e-2), (f32([1.0]), f32([0.0]), 0.9, 10, 1e-4)],
      raises=(RuntimeError,))
def verlet_with_energy_check(x, v, dt, steps, max_drift):
    """Velocity Verlet for a harmonic oscillator with an energy-drift guard that raises (as
    simulation codes do) when the integrator blows up."""
    def energy(x, v):
        return 0.5 * (v ** 2).sum() + 0.5 * (x ** 2).sum()

    e0 = energy(x, v)
    a = -x
    for step in range(steps):
        x = x + dt * v + 0.5 * dt * dt * a
        a_new = -x
        v = v + 0.5 * dt * (a + a_new)
        a = a_new
        drift = (energy(x, v) - e0).abs() / e0
        if drift > max_drift:
            raise RuntimeError(f"energy drift {float(drift):.3g} at step {step}")
    return x, v
