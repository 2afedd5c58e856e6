"""Data, metric and graph code as 2025-era repos write it (HF tokenizers' collators, QA span
decoding, torchmetrics-style metric objects, PyG message passing): padding from Python lists
of ids, attention masks turned into additive 4-D masks, best answer spans with Python
filters over tensor candidates, macro-F1 from a confusion matrix with guards for empty
classes, retrieval AP, GIN / GraphSAGE layers and a segment softmax, graph readout by a batch
vector, label propagation until it settles."""
from collections import Counter, defaultdict

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


def _np_collate(seqs, max_length, pad_id):
    width = min(max(len(s) for s in seqs), max_length)
    ids = np.full((len(seqs), width), pad_id, np.int64)
    mask = np.zeros((len(seqs), width), np.int64)
    for i, s in enumerate(seqs):
        s = s[:width]
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    return ids, mask


@case(args=[([[5, 6, 7], [8]], 8, 0), ([[5, 6, 7, 9, 9], [8, 1]], 3, 2)], ref=_np_collate)
def collate_with_truncation(sequences, max_length, pad_token_id):
    """DataCollatorWithPadding: Python lists of token ids padded to the longest (truncated),
    with the attention mask."""
    longest = max(len(s) for s in sequences)
    width = min(longest, max_length)
    input_ids, attention_mask = [], []
    for seq in sequences:
        if len(seq) > width:
            seq = seq[:width]
        pad = width - len(seq)
        input_ids.append(seq + [pad_token_id] * pad)
        attention_mask.append([1] * len(seq) + [0] * pad)
    return paddle.to_tensor(input_ids, dtype="int64"), paddle.to_tensor(attention_mask)


def _np_4d_mask(mask, causal):
    b, t = mask.shape
    m = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min
    if causal:
        m = np.where(np.triu(np.ones((t, t), bool), 1), np.finfo(np.float32).min, m)
    return np.broadcast_to(m, (b, 1, t, t)).astype(np.float32)


@case(args=[(i64([[1, 1, 0], [1, 1, 1]]), False), (i64([[1, 1, 0], [1, 0, 0]]), True),
            (i64([[1, 1, 1]]), True)], ref=_np_4d_mask)
def prepare_4d_attention_mask(attention_mask, is_causal):
    """HF's _prepare_4d_causal_attention_mask; a batch without padding skips the padding
    part (a tensor condition)."""
    bsz, tgt_len = attention_mask.shape
    min_value = float(np.finfo(np.float32).min)
    mask = paddle.zeros([bsz, 1, tgt_len, tgt_len])
    if not attention_mask.astype("bool").all():
        inverted = 1.0 - attention_mask[:, None, None, :].astype("float32")
        mask = mask + inverted * min_value
    if is_causal:
        future = paddle.triu(paddle.ones([tgt_len, tgt_len]), diagonal=1).astype("bool")
        mask = paddle.masked_fill(mask, future, min_value)
    return mask


def _np_best_span(start, end, max_len):
    best, best_span = -np.inf, (0, 0)
    s_idx = np.argsort(-start, kind="stable")[:3]
    e_idx = np.argsort(-end, kind="stable")[:3]
    for s in s_idx:
        for e in e_idx:
            if e < s or e - s + 1 > max_len:
                continue
            if start[s] + end[e] > best:
                best, best_span = start[s] + end[e], (s, e)
    return np.int64(best_span[0]), np.int64(best_span[1]), np.float32(best)


@case(args=[(f32([0.1, 2.0, 0.3, 1.0, 0.0]), f32([0.0, 0.5, 1.5, 0.2, 3.0]), 2),
            (f32([0.1, 2.0, 0.3, 1.0, 0.0]), f32([0.0, 0.5, 1.5, 0.2, 3.0]), 5),
            (f32([3.0, 0.0, 0.0, 0.0, 0.1]), f32([2.0, 0.0, 1.0, 0.0, 0.0]), 1)],
      ref=_np_best_span)
def best_answer_span(start_logits, end_logits, max_answer_length):
    """Extractive QA post-processing: the best (start, end) over the top candidates, skipping
    spans that end before they start or are too long (tensor `continue`s)."""
    start_idx = paddle.topk(start_logits, 3)[1]
    end_idx = paddle.topk(end_logits, 3)[1]
    best_score = float("-inf")
    best_start, best_end = 0, 0
    for s in start_idx:
        for e in end_idx:
            if e < s:
                continue
            if e - s + 1 > max_answer_length:
                continue
            score = start_logits[s] + end_logits[e]
            if score > best_score:
                best_score, best_start, best_end = score, s, e
    return best_start, best_end, best_score


def _np_macro_f1(pred, target, n):
    cm = np.zeros((n, n), np.int64)
    for p, t in zip(pred, target):
        cm[t, p] += 1
    f1s = []
    for c in range(n):
        tp, fp, fn = cm[c, c], cm[:, c].sum() - cm[c, c], cm[c, :].sum() - cm[c, c]
        if tp + fp + fn == 0:
            continue
        prec = tp / (tp + fp) if tp + fp > 0 else 0.0
        rec = tp / (tp + fn) if tp + fn > 0 else 0.0
        f1s.append(0.0 if prec + rec == 0 else 2 * prec * rec / (prec + rec))
    return np.float32(np.mean(f1s)), cm


@case(args=[(i64([0, 1, 2, 2, 1]), i64([0, 2, 2, 2, 1]), 3),
            (i64([0, 0, 1, 1]), i64([0, 0, 1, 0]), 4)], ref=_np_macro_f1, rtol=1e-5)
def macro_f1_from_confusion(preds, target, num_classes):
    """A confusion matrix by scatter-add of flat indices, then per-class precision and
    recall with Python fallbacks for empty denominators and classes never seen."""
    flat = target * num_classes + preds
    cm = paddle.bincount(flat, minlength=num_classes * num_classes).reshape(
        [num_classes, num_classes])
    f1_scores = []
    for c in range(num_classes):
        tp = cm[c, c]
        fp = cm[:, c].sum() - tp
        fn = cm[c, :].sum() - tp
        if tp + fp + fn == 0:
            continue
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall == 0:
            f1_scores.append(0.0)
        else:
            f1_scores.append(2 * precision * recall / (precision + recall))
    return sum(f1_scores) / len(f1_scores), cm


@case(args=[(f32([[0.1, 0.5, 0.2, 0.2], [0.7, 0.1, 0.1, 0.1]]), i64([1, 3]), (1, 2)),
            (f32([[0.1, 0.5, 0.2, 0.2]]), i64([2]), (1,))])
def topk_accuracy_dict(output, target, topk):
    """The ImageNet reference's accuracy(): a dict of top-k accuracies, one per k in a
    Python tuple."""
    maxk = max(topk)
    batch_size = target.shape[0]
    _, pred = paddle.topk(output, maxk, axis=1)
    correct = pred == target.unsqueeze(-1)
    res = {}
    for k in topk:
        correct_k = correct[:, :k].astype("float32").sum()
        res[f"top{k}"] = correct_k * (100.0 / batch_size)
    return res


def _np_ap(scores, labels):
    order = np.argsort(-scores, kind="stable")
    hits = labels[order]
    if hits.sum() == 0:
        return 0.0
    prec = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return np.float32((prec * hits).sum() / hits.sum())


@case(args=[(f32([0.9, 0.2, 0.7, 0.4]), i64([1, 0, 0, 1])), (f32([0.9, 0.2]), i64([0, 0]))],
      ref=_np_ap)
def average_precision(scores, labels):
    order = paddle.argsort(scores, descending=True)
    hits = paddle.gather(labels, order).astype("float32")
    num_pos = hits.sum()
    if num_pos == 0:
        return 0.0
    ranks = paddle.arange(1, hits.shape[0] + 1, dtype="float32")
    precision_at_k = paddle.cumsum(hits) / ranks
    return (precision_at_k * hits).sum() / num_pos


class _Accuracy:
    """A torchmetrics-style metric: `update` accumulates Python and tensor state,
    `compute` reads it."""

    def __init__(self, ignore_index=None):
        self.ignore_index = ignore_index
        self.correct = 0
        self.total = 0
        self.per_class = defaultdict(int)

    def update(self, preds, target):
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target = preds[keep], target[keep]
        self.correct += (preds == target).astype("int64").sum()
        self.total += target.shape[0]

    def compute(self):
        return self.correct.astype("float32") / max(self.total, 1)


@case(args=[([i64([0, 1, 1]), i64([2, 2])], [i64([0, 1, 0]), i64([2, 1])], None),
            ([i64([0, 1, 1])], [i64([0, -1, 1])], -1)])
def metric_object_over_batches(preds_list, target_list, ignore_index):
    """The metric object is made in the function and updated per batch (ignore_index masks
    with a data-dependent number of kept items)."""
    metric = _Accuracy(ignore_index=ignore_index)
    for preds, target in zip(preds_list, target_list):
        metric.update(preds, target)
    return metric.compute()


@case(args=[(["the cat", "a cat sat", "the the"], 2), (["one"], 5)])
def vocab_from_corpus(texts, min_freq):
    """Vocabulary building before the model: Counter over split words, Python filters, then
    token ids as a tensor."""
    counts = Counter(w for t in texts for w in t.split())
    vocab = {"<pad>": 0, "<unk>": 1}
    for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if n >= min_freq:
            vocab[word] = len(vocab)
    ids = [[vocab.get(w, 1) for w in t.split()] for t in texts]
    width = max(len(x) for x in ids)
    return paddle.to_tensor([x + [0] * (width - len(x)) for x in ids]), len(vocab)


class GINConv(nn.Layer):
    """GIN: (1 + eps) * x + sum of neighbours (scatter-add by destination), then an MLP;
    `train_eps` decides whether eps is a parameter."""

    def __init__(self, dim=3, train_eps=True):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        if train_eps:
            self.eps = self.create_parameter(
                [1], default_initializer=nn.initializer.Constant(0.1))
        else:
            self.eps = None

    def forward(self, x, edge_index, num_layers=1):
        src, dst = edge_index[0], edge_index[1]
        for _ in range(num_layers):
            agg = paddle.scatter(paddle.zeros_like(x), dst, paddle.gather(x, src),
                                 overwrite=False)
            eps = self.eps if self.eps is not None else 0.0
            out = self.mlp((1 + eps) * x + agg)
            x = out + x if out.shape == x.shape else out
        return x


case(args=[(rand(4, 3), i64([[0, 1, 2, 3], [1, 2, 3, 0]]), 1),
           (rand(3, 3), i64([[0, 1], [1, 2]]), 2)], rtol=1e-4, atol=1e-5)(GINConv)


def _np_sage(x, edge_index, normalize):
    src, dst = edge_index
    agg = np.zeros_like(x)
    np.add.at(agg, dst, x[src])
    deg = np.maximum(np.bincount(dst, minlength=len(x)), 1).astype(np.float32)
    out = x + agg / deg[:, None]
    if normalize:
        out = out / np.maximum(np.linalg.norm(out, axis=-1, keepdims=True), 1e-12)
    return out


@case(args=[(rand(4, 2), i64([[0, 1, 2, 0], [1, 2, 1, 1]]), True),
            (rand(3, 2), i64([[0, 1], [2, 2]]), False)], ref=_np_sage, rtol=1e-5, atol=1e-6)
def sage_mean_aggregate(x, edge_index, normalize):
    """GraphSAGE mean aggregation: degrees clipped at 1 for nodes with no in-edges."""
    src, dst = edge_index[0], edge_index[1]
    agg = paddle.scatter(paddle.zeros_like(x), dst, paddle.gather(x, src), overwrite=False)
    deg = paddle.bincount(dst, minlength=x.shape[0]).astype("float32").clip(min=1.0)
    out = x + agg / deg.unsqueeze(-1)
    if normalize:
        out = F.normalize(out, axis=-1)
    return out


def _np_segment_softmax(scores, index, n):
    out = np.zeros_like(scores)
    for g in range(n):
        m = index == g
        if m.any():
            e = np.exp(scores[m] - scores[m].max())
            out[m] = e / e.sum()
    return out


@case(args=[(f32([1.0, 2.0, 0.5, 3.0]), i64([0, 0, 1, 1]), 2),
            (f32([1.0, 2.0, 0.5]), i64([0, 2, 2]), 3)], ref=_np_segment_softmax, rtol=1e-5)
def segment_softmax(scores, index, num_segments):
    """PyG's softmax(src, index): per-segment max by a Python loop over segments (an empty
    segment skipped by a tensor condition), then normalised by a scatter-add of exps."""
    seg_max = paddle.zeros([num_segments])
    for g in range(num_segments):
        mask = index == g
        if mask.any():
            seg_max[g] = paddle.masked_select(scores, mask).max()
    e = (scores - paddle.gather(seg_max, index)).exp()
    denom = paddle.scatter(paddle.zeros([num_segments]), index, e, overwrite=False)
    return e / paddle.gather(denom, index)


def _np_readout(x, batch, size=None):
    n = int(batch.max()) + 1 if size is None else size
    out = np.zeros((n, x.shape[1]), np.float32)
    np.add.at(out, batch, x)
    cnt = np.bincount(batch, minlength=n)[:, None]
    return (out / np.maximum(cnt, 1)).astype(np.float32)


@case(args=[(rand(5, 2), i64([0, 0, 1, 1, 1]), None), (rand(3, 2), i64([0, 1, 2]), None),
            (rand(3, 2), i64([0, 2, 2]), 4)], ref=_np_readout)
def global_mean_pool_by_batch(x, batch, size=None):
    """PyG's global_mean_pool: the number of graphs, when not given, is
    `int(batch.max()) + 1`, a size read from a tensor."""
    size = int(batch.max()) + 1 if size is None else size
    out = paddle.scatter(paddle.zeros([size, x.shape[1]]), batch, x, overwrite=False)
    count = paddle.bincount(batch, minlength=size).astype("float32").clip(min=1.0)
    return out / count.unsqueeze(-1)


def _np_label_prop(adj, labels, mask, alpha, tol, max_iter):
    deg = adj.sum(1, keepdims=True)
    a = adj / np.maximum(deg, 1)
    y0 = np.eye(labels.max() + 1, dtype=np.float32)[labels] * mask[:, None]
    y = y0.copy()
    for i in range(max_iter):
        new = alpha * a @ y + (1 - alpha) * y0
        diff = np.abs(new - y).max()
        y = new
        if diff < tol:
            return y.argmax(1), i + 1
    return y.argmax(1), max_iter


@case(args=[(f32([[0, 1, 0], [1, 0, 1], [0, 1, 0]]), i64([0, 1, 1]), f32([1, 0, 1]),
             0.5, 1e-3, 50),
            (f32([[0, 1, 0], [1, 0, 1], [0, 1, 0]]), i64([0, 1, 1]), f32([1, 0, 1]),
             0.5, 1e-3, 2)], ref=_np_label_prop)
def label_propagation(adj, labels, train_mask, alpha, tol, max_iter):
    """Label propagation until the update is below tol (a tensor break) or max_iter; the
    iteration count is returned as a Python int."""
    deg = adj.sum(axis=1, keepdim=True)
    a = adj / deg.clip(min=1.0)
    y0 = F.one_hot(labels, int(labels.max()) + 1) * train_mask.unsqueeze(-1)
    y = y0
    iters = max_iter
    for i in range(max_iter):
        new = alpha * (a @ y) + (1 - alpha) * y0
        diff = (new - y).abs().max()
        y = new
        if diff < tol:
            iters = i + 1
            break
    return y.argmax(axis=1), iters


@case(args=[(i64([[3, 5, 0, 0], [7, 0, 0, 0]]), 0), (i64([[3, 5, 2, 9]]), 0)])
def lengths_and_last_tokens(input_ids, pad_token_id):
    """Sequence lengths from a padded batch, as a Python list, then the last real token of
    each row (HF's sequence-classification pooling without a pad token fallback)."""
    lengths = (input_ids != pad_token_id).astype("int64").sum(axis=1)
    if (lengths == input_ids.shape[1]).all():
        last = input_ids[:, -1]
    else:
        last = paddle.take_along_axis(input_ids, (lengths - 1).unsqueeze(-1), axis=1)
        last = last.squeeze(-1)
    return last, lengths.tolist()
