"""Graph neural nets as PyG/PGL-style repos write them: message passing with gather and
scatter over an edge list, a neighbour loop over a Python adjacency dict, GAT attention with a
softmax per destination node, readout chosen by config, and pooling per graph of a batch."""
import itertools

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, pos, rand

_X = rand(5, 4)
_SRC = i64([0, 1, 2, 3, 4, 0])
_DST = i64([1, 2, 3, 4, 0, 2])


def _np_mp(x, src, dst, aggr):
    out = np.zeros_like(x)
    deg = np.zeros(len(x), np.float32)
    for s, d in zip(src, dst):
        if aggr == "max":
            out[d] = np.maximum(out[d], x[s]) if deg[d] else x[s]
        else:
            out[d] += x[s]
        deg[d] += 1
    if aggr == "mean":
        out = out / np.maximum(deg, 1)[:, None]
    return out


@case(args=[(_X, _SRC, _DST, "sum"), (_X, _SRC, _DST, "mean"), (_X, _SRC[:3], _DST[:3], "mean")],
      ref=_np_mp)
def propagate(x, src, dst, aggr="sum"):
    """MessagePassing.propagate: gather sources, scatter-add into destinations."""
    messages = paddle.gather(x, src)
    out = paddle.zeros_like(x)
    out = paddle.scatter(out, dst, messages, overwrite=False)
    if aggr == "mean":
        ones = paddle.ones([dst.shape[0], 1], dtype=x.dtype)
        deg = paddle.scatter(paddle.zeros([x.shape[0], 1]), dst, ones, overwrite=False)
        out = out / paddle.clip(deg, min=1.0)
    return out


_ADJ = {0: [1, 2], 1: [0], 2: [0, 3], 3: []}


def _np_neigh(x, adj, self_loops):
    rows = []
    for node in range(len(x)):
        nbrs = list(adj.get(node, []))
        if self_loops:
            nbrs.append(node)
        rows.append(x[nbrs].mean(0) if nbrs else np.zeros(x.shape[1], np.float32))
    return np.stack(rows)


@case(args=[(rand(4, 3), _ADJ, True), (rand(4, 3), _ADJ, False)], ref=_np_neigh)
def neighbor_mean(x, adjacency, self_loops=True):
    """GraphSAGE's mean aggregator over a Python adjacency dict."""
    rows = []
    for node in range(x.shape[0]):
        neighbors = list(adjacency.get(node, []))
        if self_loops:
            neighbors.append(node)
        if not neighbors:
            rows.append(paddle.zeros([x.shape[1]], dtype=x.dtype))
            continue
        idx = paddle.to_tensor(neighbors, dtype="int64")
        rows.append(paddle.gather(x, idx).mean(axis=0))
    return paddle.stack(rows)


@case(args=[(rand(5, 4), _SRC, _DST, True), (rand(5, 4) * 3, _SRC[:4], _DST[:4], False)])
class GATLayer(nn.Layer):
    """One GAT head: edge scores, a softmax over each node's incoming edges, weighted sum."""

    def __init__(self, in_dim=4, out_dim=3, negative_slope=0.2):
        super().__init__()
        self.fc = nn.Linear(in_dim, out_dim, bias_attr=False)
        self.attn_src = self.create_parameter([out_dim])
        self.attn_dst = self.create_parameter([out_dim])
        self.negative_slope = negative_slope

    def forward(self, x, src, dst, return_attention=False):
        h = self.fc(x)
        score = (paddle.gather(h, src) * self.attn_src).sum(-1) + (
            paddle.gather(h, dst) * self.attn_dst).sum(-1)
        score = F.leaky_relu(score, self.negative_slope)
        n = x.shape[0]
        # softmax per destination: subtract a global max (stable enough), normalise by the sum
        score = paddle.exp(score - score.max())
        denom = paddle.scatter(paddle.zeros([n]), dst, score, overwrite=False)
        alpha = score / (paddle.gather(denom, dst) + 1e-16)
        out = paddle.scatter(paddle.zeros([n, h.shape[1]]), dst,
                             paddle.gather(h, src) * alpha.unsqueeze(-1), overwrite=False)
        if return_attention:
            return F.elu(out), alpha
        return F.elu(out)


def _np_readout(x, batch, num_graphs, mode):
    outs = []
    for g in range(num_graphs):
        rows = x[batch == g]
        outs.append(rows.sum(0) if mode == "sum" else rows.mean(0) if mode == "mean"
                    else rows.max(0))
    return np.stack(outs)


_BATCH = i64([0, 0, 1, 1, 1])


@case(args=[(rand(5, 3), _BATCH, 2, "sum"), (rand(5, 3), _BATCH, 2, "mean"),
            (rand(5, 3), _BATCH, 2, "max")], ref=_np_readout)
def global_pool(x, batch, num_graphs, mode="mean"):
    """Readout per graph of a mini-batch of graphs, chosen by a string."""
    pooled = []
    for g in range(num_graphs):
        mask = batch == g
        rows = paddle.masked_select(x, mask.unsqueeze(-1).expand_as(x)).reshape([-1, x.shape[1]])
        if mode == "sum":
            pooled.append(rows.sum(axis=0))
        elif mode == "mean":
            pooled.append(rows.mean(axis=0))
        else:
            pooled.append(rows.max(axis=0))
    return paddle.stack(pooled)


def _np_pool_tensor(x, batch):
    n = batch.max() + 1
    return np.stack([x[batch == g].mean(0) for g in range(n)])


@case(args=[(rand(5, 3), _BATCH), (rand(6, 3), i64([0, 1, 1, 2, 2, 2]))], ref=_np_pool_tensor)
def mean_pool_tensor_count(x, batch):
    """The number of graphs is read from the batch vector: a loop over a tensor count."""
    num_graphs = batch.max() + 1
    sums = paddle.zeros([0, x.shape[1]])
    g = 0
    while g < num_graphs:
        weight = (batch == g).astype(x.dtype).unsqueeze(-1)
        row = (x * weight).sum(axis=0, keepdim=True) / weight.sum()
        sums = paddle.concat([sums, row])
        g += 1
    return sums


class _GCNConv(nn.Layer):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj_norm):
        return paddle.matmul(adj_norm, self.lin(x))


def _normalize_adj(adj, add_self_loops=True):
    if add_self_loops:
        adj = adj + paddle.eye(adj.shape[0])
    deg = adj.sum(axis=1)
    d_inv_sqrt = paddle.where(deg > 0, deg.pow(-0.5), paddle.zeros_like(deg))
    return d_inv_sqrt.unsqueeze(1) * adj * d_inv_sqrt.unsqueeze(0)


_A = f32([[0, 1, 1, 0], [1, 0, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0]])


@case(args=[(rand(4, 3), _A, True), (rand(4, 3), _A, False)])
class GCN(nn.Layer):
    """Two GCN layers with a residual when the widths match, dropout off in eval."""

    def __init__(self, dims=(3, 8, 8), dropout=0.5):
        super().__init__()
        self.convs = nn.LayerList([_GCNConv(a, b) for a, b in itertools.pairwise(dims)])
        self.dropout = dropout

    def forward(self, x, adj, residual):
        adj_norm = _normalize_adj(adj)
        for i, conv in enumerate(self.convs):
            h = conv(x, adj_norm)
            if i < len(self.convs) - 1:
                h = F.relu(h)
                h = F.dropout(h, self.dropout, training=self.training)
            if residual and h.shape == x.shape:
                h = h + x
            x = h
        return x


@case(args=[(pos(4, 2), i64([0, 1, 2]), i64([1, 2, 3]), 3),
            (pos(4, 2), i64([0, 1]), i64([1, 0]), 1)])
def k_hop_features(x, src, dst, hops):
    """SGC-style propagation repeated `hops` times, collecting every hop (jumping knowledge)."""
    feats = [x]
    h = x
    for _ in range(hops):
        h = paddle.scatter(paddle.zeros_like(h), dst, paddle.gather(h, src), overwrite=False)
        feats.append(h)
    return paddle.concat(feats, axis=-1), len(feats)


@case(args=[(rand(5, 4), _SRC, _DST, 0.5), (rand(5, 4), _SRC, _DST, 0.99)])
def edge_dropout_scores(x, src, dst, keep_threshold):
    """Link prediction scores, keeping edges whose sigmoid score is above a threshold; when no
    edge survives, fall back to the best one."""
    scores = F.sigmoid((paddle.gather(x, src) * paddle.gather(x, dst)).sum(-1))
    keep = scores > keep_threshold
    if keep.sum() == 0:
        best = scores.argmax()
        return paddle.stack([src[best], dst[best]]).unsqueeze(0), scores.max().unsqueeze(0)
    kept = paddle.nonzero(keep).squeeze(-1)
    return paddle.stack([src[kept], dst[kept]], axis=1), scores[kept]
