"""2026 model code in domains the rest of the corpus lacks, written as those repos write it:
state-space models (Mamba-style selective scans, chunked scans, a decode step with a conv
cache), flow-matching / rectified-flow samplers (fixed, adaptive and Heun steps), speculative
decoding (greedy and rejection-sampled draft/verify), MoE routers with capacity and token
dropping, graph transformers and point-cloud ops (farthest point sampling, kNN, message
passing over a numpy edge list). Segmentation, video, tokenizer, early-exit and
training-step code is in `cases_wild6_pipelines.py`."""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import runtime as paddle
import runtime.nn as nn

from .registry import case, f32, i64, rand

F = nn.functional


# ---- state-space models -------------------------------------------------------------------
def _np_softplus(x):
    return np.log1p(np.exp(x))


def _np_selective_scan(u, delta, A, B, C, D):
    L, d = u.shape
    n = A.shape[1]
    h = np.zeros((d, n), np.float32)
    ys = []
    dt = _np_softplus(delta)
    for t in range(L):
        dA = np.exp(dt[t][:, None] * A)
        dBu = dt[t][:, None] * B[t][None, :] * u[t][:, None]
        h = dA * h + dBu
        ys.append(h @ C[t])
    return np.stack(ys) + u * D


@case(args=[(rand(4, 3), rand(4, 3), -np.abs(rand(3, 2)), rand(4, 2), rand(4, 2), rand(3)),
            (rand(2, 3), rand(2, 3), -np.abs(rand(3, 2)), rand(2, 2), rand(2, 2), rand(3))],
      ref=_np_selective_scan, rtol=1e-4, atol=1e-5)
def mamba_selective_scan_ref(u, delta, A, B, C, D):
    """mamba_ssm's `selective_scan_ref`: softplus on delta, discretise per step, a Python loop
    over the sequence length collecting `ys`, stacked at the end."""
    delta = paddle.log(1 + paddle.exp(delta))
    L = u.shape[0]
    x = paddle.zeros([u.shape[1], A.shape[1]])
    ys = []
    for i in range(L):
        deltaA = paddle.exp(delta[i].unsqueeze(-1) * A)
        deltaB_u = delta[i].unsqueeze(-1) * B[i].unsqueeze(0) * u[i].unsqueeze(-1)
        x = deltaA * x + deltaB_u
        y = paddle.matmul(x, C[i])
        ys.append(y)
    out = paddle.stack(ys, axis=0)
    return out + u * D


def _np_chunked(x, decay, chunk):
    L = x.shape[0]
    state = np.zeros(x.shape[1:], np.float32)
    outs = []
    for s in range(0, L, chunk):
        blk = x[s:s + chunk]
        for t in range(blk.shape[0]):
            state = decay * state + blk[t]
            outs.append(state.copy())
    return np.stack(outs), state


@case(args=[(rand(5, 2), f32(0.5), 2), (rand(4, 2), f32(0.9), 4), (rand(3, 2), f32(0.1), 1)],
      ref=_np_chunked, rtol=1e-5, atol=1e-6)
def chunked_linear_scan(x, decay, chunk_size):
    """A chunked scan (Mamba-2 / linear-attention style): the sequence is cut into chunks,
    each chunk scanned and its final state carried to the next; the last chunk is short."""
    L = x.shape[0]
    state = paddle.zeros(x.shape[1:])
    outs = []
    for start in range(0, L, chunk_size):
        chunk = x[start:start + chunk_size]
        for t in range(chunk.shape[0]):
            state = decay * state + chunk[t]
            outs.append(state)
    return paddle.stack(outs), state


@case(args=[(rand(4, 3), f32([0, 1, 0, 0]), f32(0.8)), (rand(4, 3), f32([0, 0, 0, 0]), f32(0.8)),
            (rand(3, 3), f32([1, 1, 1]), f32(0.3))])
def ssm_scan_with_resets(x, resets, decay):
    """A recurrent scan over packed sequences: where a new document starts (a tensor flag)
    the hidden state is zeroed before the step."""
    h = paddle.zeros([x.shape[1]])
    outs = []
    n_resets = 0
    for t in range(x.shape[0]):
        if resets[t] > 0:
            h = paddle.zeros_like(h)
            n_resets += 1
        h = decay * h + x[t]
        outs.append(h)
    return paddle.stack(outs), n_resets


@dataclass
class InferenceParams:
    max_seqlen: int
    seqlen_offset: int = 0


class MambaDecodeStep(nn.Layer):
    """A Mamba block's `step()` run over a prompt token by token: a conv state cache rolled by
    one with the new token written at the end, a recurrent SSM state, both kept as buffers
    reassigned every step; offset 0 (a new sequence) starts from zeros."""

    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(3, 6)
        self.conv_w = self.create_parameter([3, 4])
        self.A = self.create_parameter([3, 2])
        self.register_buffer("conv_state", paddle.zeros([3, 4]))
        self.register_buffer("ssm_state", paddle.zeros([3, 2]))

    def step(self, x, params):
        xz = self.in_proj(x)
        xs, z = xz[:3], xz[3:]
        if params.seqlen_offset == 0:
            conv_state = paddle.zeros([3, 4])
            ssm_state = paddle.zeros([3, 2])
        else:
            conv_state, ssm_state = self.conv_state, self.ssm_state
        conv_state = paddle.concat([conv_state[:, 1:], xs.unsqueeze(-1)], axis=-1)
        xc = F.silu((conv_state * self.conv_w).sum(-1))
        dA = paddle.exp(-paddle.abs(self.A))
        ssm_state = dA * ssm_state + xc.unsqueeze(-1)
        self.conv_state = conv_state
        self.ssm_state = ssm_state
        return ssm_state.sum(-1) * F.silu(z)

    def forward(self, tokens, max_seqlen):
        params = InferenceParams(max_seqlen=max_seqlen)
        ys = []
        for t in range(min(tokens.shape[0], params.max_seqlen)):
            ys.append(self.step(tokens[t], params))
            params.seqlen_offset += 1
        return paddle.stack(ys), params.seqlen_offset


case(args=[(rand(3, 3), 8), (rand(4, 3), 2)])(MambaDecodeStep)


# ---- flow matching ------------------------------------------------------------------------
def _velocity(x, t, w):
    return paddle.tanh(paddle.matmul(x, w)) * (1.0 - t) - x


def _np_velocity(x, t, w):
    return np.tanh(x @ w) * (1.0 - t) - x


def _np_euler(x, w, num_steps):
    dt = 1.0 / num_steps
    for i in range(num_steps):
        x = x + dt * _np_velocity(x, i * dt, w)
    return x


@case(args=[(rand(2, 3), rand(3, 3), 4), (rand(2, 3), rand(3, 3), 1)], ref=_np_euler,
      rtol=1e-5, atol=1e-5)
def rectified_flow_euler(x0, w, num_steps):
    """A rectified-flow Euler sampler: `t` a Python float from `torch.linspace`-like steps."""
    dt = 1.0 / num_steps
    x = x0
    for i in range(num_steps):
        t = i * dt
        x = x + dt * _velocity(x, t, w)
    return x


@case(args=[(rand(2, 3), rand(3, 3), f32(0.05)), (rand(2, 3), rand(3, 3) * 4, f32(0.001)),
            (rand(2, 3), rand(3, 3), f32(10.0))])
def adaptive_step_flow_sampler(x0, w, tol):
    """An adaptive sampler: an Euler and a Heun step from the same point estimate the error;
    the step is accepted when the error is under `tol`, the step size then grows or shrinks
    (a tensor `while t < 1`); returns the sample and the number of evaluations as an int."""
    x = x0
    t = paddle.zeros([])
    h = paddle.full([], 0.25)
    nfe = 0
    while t < 1.0:
        h = paddle.minimum(h, 1.0 - t)
        v1 = _velocity(x, t, w)
        x_euler = x + h * v1
        v2 = _velocity(x_euler, t + h, w)
        x_heun = x + 0.5 * h * (v1 + v2)
        nfe += 2
        err = (x_heun - x_euler).abs().max()
        if err < tol:
            x = x_heun
            t = t + h
            h = h * 1.5
        else:
            h = h * 0.5
    return x, nfe


@dataclass
class FlowConfig:
    num_steps: int = 3
    sigma_min: float = 1e-4
    last_step_euler: bool = True


@case(args=[(rand(2, 3), rand(3, 3), FlowConfig()), (rand(2, 3), rand(3, 3), FlowConfig(2, 0.0, False))])
def heun_sampler_with_config(x, w, cfg):
    """EDM-style Heun sampling from a config dataclass: the last step is Euler only when the
    config says so; the trajectory is kept in a Python list."""
    ts = [i / cfg.num_steps for i in range(cfg.num_steps + 1)]
    traj = [x]
    for i in range(cfg.num_steps):
        t, t_next = ts[i], ts[i + 1]
        d = _velocity(x, t, w)
        x_next = x + (t_next - t) * d
        if not (cfg.last_step_euler and i == cfg.num_steps - 1):
            d2 = _velocity(x_next, t_next, w)
            x_next = x + (t_next - t) * 0.5 * (d + d2)
        x = x_next
        traj.append(x)
    return x, len(traj), traj[-2]


class CFMLoss(nn.Layer):
    """A conditional flow-matching training step: interpolate noise and data at a given
    time, regress the velocity, log `.item()`s in a dict; skip the loss term on padding."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.sigma_min = 1e-4

    def forward(self, x1, x0, t, mask):
        t_ = t.unsqueeze(-1)
        xt = (1 - (1 - self.sigma_min) * t_) * x0 + t_ * x1
        target = x1 - (1 - self.sigma_min) * x0
        pred = self.net(paddle.concat([xt, t_], axis=-1))
        err = ((pred - target) ** 2).mean(-1)
        if mask.sum() > 0:
            loss = (err * mask).sum() / mask.sum()
        else:
            loss = err.mean() * 0.0
        logs = {"train/loss": loss.item(), "train/t_mean": float(t.mean())}
        return {"loss": loss, "log": logs}


case(args=[(rand(2, 3), rand(2, 3), f32([0.2, 0.7]), f32([1, 0])),
           (rand(2, 3), rand(2, 3), f32([0.2, 0.7]), f32([0, 0]))])(CFMLoss)


# ---- speculative decoding -----------------------------------------------------------------
_TABLE = f32([[0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7],
              [0.7, 0.1, 0.1, 0.1]])


@case(args=[(_TABLE, _TABLE, 0, 3), (_TABLE, _TABLE[::-1].copy(), 1, 3),
            (_TABLE, np.roll(_TABLE, 1, axis=1), 2, 2)])
def speculative_greedy_verify(target_table, draft_table, start, k):
    """Greedy speculative decoding: the draft proposes k tokens (Python ints), the target
    verifies them in order and stops at the first disagreement, appending its own token."""
    draft = []
    cur = start
    for _ in range(k):
        cur = int(draft_table[cur].argmax())
        draft.append(cur)
    accepted = []
    prev = start
    for tok in draft:
        target_tok = int(target_table[prev].argmax())
        if target_tok != tok:
            accepted.append(target_tok)
            break
        accepted.append(tok)
        prev = tok
    return accepted, len(accepted) - 1


class SpecOutput(NamedTuple):
    tokens: object
    num_accepted: int
    all_accepted: bool


@case(args=[(f32([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]), f32([[0.4, 0.6], [0.3, 0.7], [0.5, 0.5]]),
             i64([1, 1, 0]), f32([0.1, 0.2, 0.3])),
            (f32([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]), f32([[0.4, 0.6], [0.3, 0.7], [0.5, 0.5]]),
             i64([1, 0, 0]), f32([0.9, 0.99, 0.3]))])
def speculative_rejection_sampling(p_target, q_draft, draft_tokens, uniforms):
    """Leviathan et al.'s acceptance rule: accept draft token i while u_i < p/q; the first
    rejection resamples from max(0, p - q) (argmax here: the noise is fixed); a NamedTuple."""
    n = 0
    out = []
    for i in range(draft_tokens.shape[0]):
        tok = draft_tokens[i]
        ratio = p_target[i, tok] / q_draft[i, tok]
        if uniforms[i] < ratio:
            out.append(tok)
            n += 1
        else:
            residual = F.relu(p_target[i] - q_draft[i])
            out.append(residual.argmax())
            break
    return SpecOutput(paddle.stack(out), n, n == draft_tokens.shape[0])


# ---- mixture of experts -------------------------------------------------------------------
class CapacityRouter(nn.Layer):
    """A Switch-style top-1 router with expert capacity: tokens beyond an expert's capacity
    are dropped (their output is the residual); returns the load-balancing loss and the
    number of dropped tokens as a Python int."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(3, 2)
        self.experts = nn.LayerList([nn.Linear(3, 3) for _ in range(2)])
        self.capacity_factor = 1.0

    def forward(self, x):
        n_tok, n_exp = x.shape[0], len(self.experts)
        capacity = int(self.capacity_factor * n_tok / n_exp)
        probs = F.softmax(self.gate(x), axis=-1)
        expert_idx = probs.argmax(-1)
        out = x.clone()
        dropped = 0
        for e, expert in enumerate(self.experts):
            idx = paddle.nonzero(expert_idx == e).flatten()
            if idx.shape[0] == 0:
                continue
            kept = idx[:capacity]
            dropped += idx.shape[0] - kept.shape[0]
            y = expert(paddle.gather(x, kept)) * paddle.gather(probs[:, e], kept).unsqueeze(-1)
            out = paddle.scatter(out, kept, y)
        frac = paddle.stack([(expert_idx == e).astype("float32").mean() for e in range(n_exp)])
        aux = n_exp * (frac * probs.mean(0)).sum()
        return out, aux, dropped


case(args=[(rand(4, 3),), (f32([[1, 2, 3]] * 4),), (f32([[-1, -2, 3]] * 6),)])(CapacityRouter)


@case(args=[(f32([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 2.5], [0.1, 0.2, 0.3]]), 2),
            (f32([[2.0, 1.0, 0.0], [3.0, 1.0, 1.0], [2.5, 0.0, 2.0], [2.2, 0.2, 0.3]]), 1)])
def topk_router_token_drop(logits, capacity):
    """A top-2 router with per-expert counters kept in a Python dict: tokens are assigned in
    order and dropped when their expert is full (a DeepSpeed-style `tokens_per_expert`)."""
    weights, experts = paddle.topk(F.softmax(logits, axis=-1), 2)
    tokens_per_expert = {e: 0 for e in range(logits.shape[1])}
    keep = []
    for i in range(logits.shape[0]):
        row = []
        for j in range(2):
            e = int(experts[i, j])
            if tokens_per_expert[e] < capacity:
                tokens_per_expert[e] += 1
                row.append(weights[i, j])
            else:
                row.append(paddle.zeros([]))
        keep.append(paddle.stack(row))
    return paddle.stack(keep), tokens_per_expert


@case(args=[(rand(4, 3), rand(3, 2), f32([0.0, 0.0]), 0.5), (rand(4, 3), rand(3, 2), None, 0.25)])
def expert_choice_routing(x, w_gate, bias, capacity_factor):
    """Expert-choice routing: each expert picks its top-c tokens; tokens no expert picked
    pass through, and the routed fraction comes back as a Python float."""
    logits = paddle.matmul(x, w_gate)
    if bias is not None:
        logits = logits + bias
    scores = F.softmax(logits, axis=0)
    c = max(1, int(x.shape[0] * capacity_factor))
    picked = paddle.zeros([x.shape[0]])
    out = paddle.zeros_like(x)
    for e in range(scores.shape[1]):
        vals, idx = paddle.topk(scores[:, e], c)
        out = out + paddle.scatter(paddle.zeros_like(x), idx, x[idx] * vals.unsqueeze(-1))
        picked = paddle.scatter(picked, idx, paddle.ones([c]))
    out = paddle.where(picked.unsqueeze(-1) > 0, out, x)
    return out, float(picked.mean())


class MoEBlockWithAnyCheck(nn.Layer):
    """Mixtral's sparse block: a loop over experts with `if not mask.any(): continue`, the
    router z-loss added only in training-like mode, and the expert usage list of ints."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(3, 3)
        self.experts = nn.LayerList([nn.Linear(3, 3) for _ in range(3)])

    def forward(self, h, z_loss_coef):
        logits = self.router(h)
        top_w, top_i = paddle.topk(F.softmax(logits, -1), 1)
        out = paddle.zeros_like(h)
        usage = []
        for e in range(3):
            mask = (top_i[:, 0] == e)
            if not mask.any():
                usage.append(0)
                continue
            usage.append(int(mask.sum()))
            out = out + paddle.where(mask.unsqueeze(-1), self.experts[e](h) * top_w, 0.0)
        aux = paddle.zeros([])
        if z_loss_coef > 0:
            aux = z_loss_coef * (paddle.logsumexp(logits, -1) ** 2).mean()
        return out, aux, usage


case(args=[(rand(4, 3), 0.0), (rand(4, 3) * 3, 1e-3), (f32([[1, 0, 0]] * 4), 0.0)])(
    MoEBlockWithAnyCheck)


# ---- graph transformers and point clouds --------------------------------------------------
def _np_fps(points, n, start):
    idx = [start]
    dist = np.full(points.shape[0], np.inf, np.float32)
    for _ in range(n - 1):
        dist = np.minimum(dist, ((points - points[idx[-1]]) ** 2).sum(-1))
        idx.append(int(dist.argmax()))
    return np.asarray(idx, np.int64)


@case(args=[(rand(6, 3), 3, 0), (rand(5, 3), 4, 2)], ref=_np_fps)
def farthest_point_sampling(points, n_samples, start):
    """PointNet++'s FPS: a running min-distance and the next centroid as a Python int."""
    idx = [start]
    dist = paddle.full([points.shape[0]], float("inf"))
    for _ in range(n_samples - 1):
        d = ((points - points[idx[-1]]) ** 2).sum(-1)
        dist = paddle.minimum(dist, d)
        idx.append(int(dist.argmax()))
    return paddle.to_tensor(idx, dtype="int64")


@case(args=[(rand(5, 3), rand(2, 3), 2, 0.5), (rand(5, 3), rand(2, 3), 3, 10.0), (rand(5, 3) + 5, rand(2, 3), 2, 0.5)])
def ball_query_knn(points, centers, k, radius):
    """kNN grouping with a ball-query cut: neighbours outside the radius are replaced by the
    first neighbour (the CUDA kernel's padding rule); returns the groups and their counts."""
    d2 = ((centers.unsqueeze(1) - points.unsqueeze(0)) ** 2).sum(-1)
    dist, idx = paddle.topk(-d2, k)
    dist = -dist
    first = idx[:, :1].expand_as(idx)
    idx = paddle.where(dist > radius ** 2, first, idx)
    counts = (dist <= radius ** 2).astype("int64").sum(-1)
    if counts.min() == 0:
        idx = paddle.where(counts.unsqueeze(-1) == 0, paddle.zeros_like(idx), idx)
    return idx, counts, int(counts.max())


@case(args=[(rand(4, 3), np.array([[0, 1, 2, 3], [1, 2, 3, 0]]), rand(3, 3), 2),
            (rand(4, 3), np.array([[0, 0, 1], [1, 2, 3]]), rand(3, 3), 1)])
def message_passing_numpy_edges(x, edge_index, w, num_layers):
    """A GCN with the edge list as a numpy array (PyG-style `edge_index`): degrees with
    `np.bincount`, symmetric normalisation, `num_layers` rounds with a residual."""
    src, dst = edge_index
    deg = np.bincount(dst, minlength=x.shape[0]).astype("float32") + 1.0
    norm = paddle.to_tensor(1.0 / np.sqrt(deg[src] * deg[dst]))
    src_t, dst_t = paddle.to_tensor(src), paddle.to_tensor(dst)
    h = x
    for _ in range(num_layers):
        msg = paddle.gather(h, src_t) * norm.unsqueeze(-1)
        agg = paddle.zeros_like(h).index_add(dst_t, 0, msg)
        h = F.relu(paddle.matmul(agg + h, w)) + h
    return h


@case(args=[(rand(4, 3), f32([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]]), 2),
            (rand(4, 3), f32([[0, 1, 1, 1], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]), 0)])
def graph_attention_with_lappe(x, adj, pe_dim):
    """A graph transformer layer: Laplacian eigenvector positional encodings (numpy eigh on
    the adjacency passed in) concatenated when `pe_dim > 0`, attention masked to edges."""
    if pe_dim > 0:
        a = adj.numpy()
        lap = np.diag(a.sum(1)) - a
        _, vecs = np.linalg.eigh(lap)
        pe = paddle.to_tensor(np.abs(vecs[:, 1:1 + pe_dim]).astype("float32"))
        x = paddle.concat([x, pe], axis=-1)
    scores = paddle.matmul(x, x, transpose_y=True) / (x.shape[-1] ** 0.5)
    scores = paddle.where(adj > 0, scores, paddle.full_like(scores, -1e9))
    return paddle.matmul(F.softmax(scores, -1), x)


@case(args=[(rand(6, 2), 0.8), (rand(6, 2) * 5, 0.5), (rand(3, 2), 1e-4)])
def radius_graph_edges(pos, r):
    """`radius_graph`: all pairs within r (no self loops) as an edge list; the edge count
    comes back as a Python int and an empty graph gets a self-loop fallback."""
    d = paddle.cdist(pos, pos)
    adj = (d < r) & (d > 0)
    edges = paddle.nonzero(adj)
    if edges.shape[0] == 0:
        n = pos.shape[0]
        ar = paddle.arange(n)
        edges = paddle.stack([ar, ar], axis=1)
    return edges.t(), edges.shape[0]


@case(args=[(rand(6, 2), f32(0.5), 3), (rand(5, 2), f32(0.9), 2)])
def chunk_states_in_dict(x, decay, chunk):
    """Mamba-2's chunk states kept per chunk index in a dict (`states[c]`), the final states
    passed between chunks, the last chunk's state returned with the number of chunks."""
    states = {}
    prev = paddle.zeros([x.shape[1]])
    n_chunks = (x.shape[0] + chunk - 1) // chunk
    for c in range(n_chunks):
        blk = x[c * chunk:(c + 1) * chunk]
        weights = decay ** paddle.arange(blk.shape[0] - 1, -1, -1, dtype="float32")
        local = (blk * weights.unsqueeze(-1)).sum(0)
        states[c] = decay ** blk.shape[0] * prev + local
        prev = states[c]
    return states[n_chunks - 1], len(states)


@case(args=[(rand(2, 3), rand(3, 3), 3, 1.0, 0.5), (rand(2, 3), rand(3, 3), 3, 2.0, 0.5),
            (rand(2, 3), rand(3, 3), 2, 3.0, 10.0)])
def cfg_guided_flow_sampler(x, w, steps, cfg_scale, guidance_norm_max):
    """Classifier-free guidance in a flow sampler: the unconditional branch only when the
    scale is not 1; the guided velocity is rescaled when its norm passes a maximum."""
    dt = 1.0 / steps
    n_rescaled = 0
    for i in range(steps):
        t = i * dt
        v_cond = _velocity(x, t, w)
        if cfg_scale != 1.0:
            v_uncond = _velocity(x, t, w * 0.5)
            v = v_uncond + cfg_scale * (v_cond - v_uncond)
        else:
            v = v_cond
        norm = v.norm()
        if norm > guidance_norm_max:
            v = v * (guidance_norm_max / norm)
            n_rescaled += 1
        x = x + dt * v
    return x, n_rescaled


@case(args=[(_TABLE, 0, 4, 0.6), (_TABLE * f32([1, 1, 0.5, 1]), 0, 4, 0.6), (_TABLE, 3, 2, 0.9)])
def draft_until_unconfident(draft_table, start, max_draft, min_conf):
    """Adaptive drafting (as in EAGLE-2 / Medusa-style drafters): keep drafting while the
    draft model's confidence stays over a threshold; the draft ids are Python ints."""
    draft = []
    cur = start
    for _ in range(max_draft):
        probs = draft_table[cur] / draft_table[cur].sum()
        conf = probs.max()
        if conf < min_conf:
            break
        cur = int(probs.argmax())
        draft.append(cur)
    return draft, len(draft)


class AuxFreeBalancer(nn.Layer):
    """DeepSeek-V3's auxiliary-loss-free balancing: a per-expert bias buffer added to the
    routing scores for selection only, nudged after the step towards balanced load."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(3, 3)
        self.register_buffer("expert_bias", paddle.zeros([3]))
        self.update_rate = 0.1

    def forward(self, x, update):
        scores = F.sigmoid(self.gate(x))
        if update:
            with paddle.no_grad():
                _, first = paddle.topk(scores, 1)
                first_load = F.one_hot(first[:, 0], 3).sum(0)
                err = first_load.mean() - first_load
                self.expert_bias = paddle.zeros([3]) + self.update_rate * paddle.sign(err)
        _, idx = paddle.topk(scores + self.expert_bias, 1)
        load = F.one_hot(idx[:, 0], 3).sum(0)
        weights = paddle.take_along_axis(scores, idx, axis=1)
        return weights, load, self.expert_bias


case(args=[(rand(4, 3), True), (rand(4, 3), False)])(AuxFreeBalancer)


@case(args=[(rand(8, 3), 0.5), (rand(8, 3) * 0.1, 1.0), (rand(4, 3), 1e-4)])
def voxel_downsample(points, voxel):
    """Open3D-style voxel downsampling: voxel keys by `np.unique` on the coordinates passed in,
    points averaged per voxel with a scatter-add; the voxel count a Python int."""
    keys = np.floor(points.numpy() / voxel).astype("int64")
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    n = int(inverse.max()) + 1
    if n == points.shape[0]:
        return points, n
    inv = paddle.to_tensor(inverse)
    sums = paddle.zeros([n, 3]).index_add(inv, 0, points)
    counts = paddle.zeros([n]).index_add(inv, 0, paddle.ones([points.shape[0]]))
    return sums / counts.unsqueeze(-1), n
