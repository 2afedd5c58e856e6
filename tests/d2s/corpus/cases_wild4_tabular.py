"""Recommendation, tabular and text-preprocessing code as torchrec / DeepCTR / FT-Transformer /
HF tokenizers-around-the-model write it: embedding bags by offsets, feature crosses over a dict
of sparse features, categorical and numerical dict inputs with a feature config, optional
features with `.get`, padding and truncation in forward, attention masks built with Python
loops over a length list, and a dataclass batch."""
from dataclasses import dataclass

import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


class EmbeddingBagSum(nn.Layer):
    """An EmbeddingBag(mode='sum'/'mean') written with offsets: each bag is a slice between two
    offsets read as Python ints; an empty bag gives zeros."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)

    def forward(self, ids, offsets, mode="sum"):
        bounds = [int(o) for o in offsets] + [ids.shape[0]]
        bags = []
        for start, end in zip(bounds[:-1], bounds[1:]):  # noqa: RUF007  (as written)
            if end == start:
                bags.append(paddle.zeros([3]))
                continue
            vecs = self.emb(ids[start:end])
            bags.append(vecs.sum(axis=0) if mode == "sum" else vecs.mean(axis=0))
        return paddle.stack(bags)


case(args=[(i64([1, 2, 4, 5, 4, 3]), [0, 2, 2], "sum"),
           (i64([1, 2, 4]), [0, 1], "mean")], rtol=1e-5, atol=1e-6)(EmbeddingBagSum)


class CrossNetDict(nn.Layer):
    """DCN over a dict of sparse features: each field embedded by its own table (a LayerDict),
    fields sorted by name, concatenated, then explicit crosses x0 * (w . xl) + b + xl for a
    Python number of layers; missing optional fields are skipped."""

    FIELDS = ("user", "item", "ctx")

    def __init__(self):
        super().__init__()
        self.tables = nn.LayerDict({f: nn.Embedding(6, 2) for f in self.FIELDS})
        self.ws = nn.ParameterList(
            [self.create_parameter([6], default_initializer=nn.initializer.Constant(0.1 * i))
             for i in range(2)])

    def forward(self, features):
        embs = []
        for name in sorted(features):
            if name not in self.tables:
                continue
            embs.append(self.tables[name](features[name]))
        while len(embs) < len(self.FIELDS):
            embs.append(paddle.zeros_like(embs[0]))
        x0 = paddle.concat(embs, axis=-1)
        xl = x0
        for w in self.ws:
            xl = x0 * (xl * w).sum(axis=-1, keepdim=True) + xl
        return xl.sum(axis=-1)


case(args=[({"user": i64([1, 2]), "item": i64([3, 4]), "ctx": i64([0, 5])},),
           ({"user": i64([1]), "item": i64([2]), "debug": i64([0])},)],
     rtol=1e-5, atol=1e-6)(CrossNetDict)


_CAT_CONFIG = {"color": 4, "size": 3}
_NUM_STATS = {"price": (10.0, 5.0), "weight": (2.0, 1.0)}


class TabularModel(nn.Layer):
    """A tabular model on a dict of columns: categorical columns embedded by a config of
    cardinalities (out-of-range codes clipped to an 'unknown' bucket), numerical columns
    standardised with Python stats and NaNs replaced by 0; a missing numerical column becomes
    zeros with a flag column."""

    def __init__(self):
        super().__init__()
        self.embs = nn.LayerDict({k: nn.Embedding(n + 1, 2) for k, n in _CAT_CONFIG.items()})
        self.head = nn.Linear(2 * len(_CAT_CONFIG) + 2 * len(_NUM_STATS), 1)

    def forward(self, batch):
        cols = []
        for name, card in _CAT_CONFIG.items():
            codes = batch[name]
            if (codes >= card).any():
                codes = paddle.where(codes >= card, paddle.full_like(codes, card), codes)
            cols.append(self.embs[name](codes))
        n = batch["color"].shape[0]
        for name, (mean, std) in _NUM_STATS.items():
            x = batch.get(name)
            if x is None:
                cols += [paddle.zeros([n, 1]), paddle.ones([n, 1])]
                continue
            x = paddle.where(paddle.isnan(x), paddle.full_like(x, mean), x)
            cols += [((x - mean) / std).unsqueeze(-1), paddle.zeros([n, 1])]
        return self.head(paddle.concat(cols, axis=-1)).squeeze(-1)


case(args=[({"color": i64([0, 3]), "size": i64([1, 2]), "price": f32([12.0, np.nan]),
             "weight": f32([1.0, 3.0])},),
           ({"color": i64([7, 1]), "size": i64([0, 5]), "price": f32([8.0, 9.0])},)],
     rtol=1e-5, atol=1e-6)(TabularModel)


@case(args=[(i64([[1, 2, 3, 0, 0], [4, 5, 6, 7, 8]]), 4, 0),
            (i64([[1, 2, 0], [3, 0, 0]]), 6, 0)])
def pad_or_truncate_in_forward(input_ids, max_len, pad_id):
    """A collator in forward: truncate to `max_len` or right-pad with `pad_id`, then build the
    attention mask and the lengths (a Python int comparison on the static shape)."""
    seq_len = input_ids.shape[1]
    if seq_len > max_len:
        input_ids = input_ids[:, :max_len]
    elif seq_len < max_len:
        pad = paddle.full([input_ids.shape[0], max_len - seq_len], pad_id, dtype="int64")
        input_ids = paddle.concat([input_ids, pad], axis=1)
    attention_mask = (input_ids != pad_id).astype("int64")
    lengths = attention_mask.sum(axis=1)
    return input_ids, attention_mask, lengths


@case(args=[([3, 1, 2], True), ([2, 2], False)])
def attention_mask_python_loops(lengths, causal):
    """An additive attention mask built cell by cell with Python loops over a lengths list,
    causal or not (the style of older seq2seq repos)."""
    n = max(lengths)
    mask = paddle.zeros([len(lengths), n, n])
    for b, length in enumerate(lengths):
        for i in range(n):
            for j in range(n):
                if j >= length or (causal and j > i):
                    mask[b, i, j] = -1e9
    return mask


@dataclass
class TextBatch:
    input_ids: paddle.Tensor
    attention_mask: paddle.Tensor
    labels: paddle.Tensor = None


class TextClassifier(nn.Layer):
    """Mean pooling over the attention mask of a dataclass batch; the loss only with labels,
    and label smoothing when the batch's loss is above a threshold."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 4)
        self.cls = nn.Linear(4, 3)

    def forward(self, ids, mask, labels=None):
        batch = TextBatch(ids, mask, labels)
        h = self.emb(batch.input_ids)
        m = batch.attention_mask.astype("float32").unsqueeze(-1)
        pooled = (h * m).sum(axis=1) / paddle.clip(m.sum(axis=1), min=1.0)
        logits = self.cls(pooled)
        if batch.labels is None:
            return logits
        loss = F.cross_entropy(logits, batch.labels)
        if loss > 1.0:
            smooth = -F.log_softmax(logits, axis=-1).mean(axis=-1).mean()
            loss = 0.9 * loss + 0.1 * smooth
        return logits, loss


case(args=[(i64([[1, 2, 0], [3, 4, 5]]), i64([[1, 1, 0], [1, 1, 1]]), None),
           (i64([[1, 2, 0], [3, 4, 5]]), i64([[1, 1, 0], [1, 1, 1]]), i64([0, 2])),
           (i64([[7, 7, 7], [8, 8, 8]]), i64([[1, 0, 0], [1, 1, 0]]), i64([1, 1]))],
     rtol=1e-5, atol=1e-6)(TextClassifier)


@case(args=[(i64([[5, 6, 7, 8, 9, 10]]), 4, 2), (i64([[5, 6, 7]]), 4, 2)])
def sliding_window_chunks(input_ids, window, stride):
    """Long-document chunking: windows of `window` tokens every `stride`, the last window
    padded; a short document is one window. Returns the chunks and how many there are."""
    n = input_ids.shape[1]
    chunks = []
    start = 0
    while True:
        chunk = input_ids[:, start:start + window]
        if chunk.shape[1] < window:
            chunk = F.pad(chunk, [0, window - chunk.shape[1]], value=0)
        chunks.append(chunk)
        if start + window >= n:
            break
        start += stride
    return paddle.concat(chunks, axis=0), len(chunks)


@case(args=[(rand(3, 4), i64([0, 1, 1]), {"w_pos": 2.0}), (rand(3, 4), i64([0, 0, 0]), {})])
def weighted_bce_with_config(logits, clicks, cfg):
    """CTR loss: BCE with a positive weight from a config dict (default 1.0), and a sampled
    negatives correction only when the batch has any click."""
    w_pos = cfg.get("w_pos", 1.0)
    y = clicks.astype("float32").unsqueeze(-1).expand([-1, logits.shape[1]])
    weight = paddle.where(y > 0, paddle.full_like(y, w_pos), paddle.ones_like(y))
    loss = F.binary_cross_entropy_with_logits(logits, y, weight=weight)
    if clicks.sum() > 0:
        loss = loss + 0.01 * (logits * (1 - y)).mean()
    return loss
