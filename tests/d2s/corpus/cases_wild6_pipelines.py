"""2026 model-side pipeline code (second half of `cases_wild6_models.py`): segmentation
post-processing (connected components by label propagation, watershed-like flooding,
small-region removal, mask NMS), video models with frame caches on `self.`, tokenizer code
around a model (byte-level merges on Python lists guided by tensor scores), early exit and
adaptive computation (ACT halting), and Lightning/HF-style `training_step`s returning dicts
of `.item()` logs."""
import math
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

import runtime as paddle
import runtime.nn as nn

from .registry import case, f32, i64, rand

F = nn.functional

_BLOBS = f32([[1, 1, 0, 0], [0, 1, 0, 1], [0, 0, 0, 1], [1, 0, 1, 1]])
_ONE = f32([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1]])
_EMPTY = f32(np.zeros((4, 4)))


# ---- segmentation post-processing ---------------------------------------------------------
def _np_cc(mask):
    h, w = mask.shape
    lab = np.where(mask > 0, np.arange(1, h * w + 1).reshape(h, w), 0).astype(np.float32)
    while True:
        p = np.pad(lab, 1)
        nb = np.maximum.reduce([p[1:-1, 1:-1], p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2],
                                p[1:-1, 2:]])
        new = np.where(mask > 0, nb, 0)
        if (new == lab).all():
            return lab
        lab = new


@case(args=[(_BLOBS,), (_ONE,), (_EMPTY,)], ref=_np_cc)
def connected_components_propagation(mask):
    """GPU-friendly connected components: every foreground pixel starts with its own label
    and takes the max over its 4-neighbourhood until nothing changes (`while True` with a
    tensor `break`)."""
    h, w = mask.shape
    labels = paddle.arange(1, h * w + 1, dtype="float32").reshape([h, w])
    labels = paddle.where(mask > 0, labels, paddle.zeros_like(labels))
    while True:
        p = F.pad(labels.unsqueeze(0).unsqueeze(0), [1, 1, 1, 1]).squeeze(0).squeeze(0)
        nb = paddle.maximum(p[1:-1, 1:-1], p[:-2, 1:-1])
        nb = paddle.maximum(nb, p[2:, 1:-1])
        nb = paddle.maximum(nb, paddle.maximum(p[1:-1, :-2], p[1:-1, 2:]))
        new = paddle.where(mask > 0, nb, paddle.zeros_like(nb))
        if paddle.equal_all(new, labels):
            break
        labels = new
    return labels


@case(args=[(_BLOBS, 2), (_ONE, 2), (_BLOBS, 5)])
def remove_small_regions(mask, min_area):
    """SAM's `remove_small_regions`: label components (numpy on the mask passed in), drop
    those under `min_area`, report whether anything changed as a Python bool."""
    labels = connected_components_propagation(mask)
    ids = np.unique(labels.numpy())
    ids = [int(i) for i in ids if i != 0]
    keep = paddle.zeros_like(mask)
    n_removed = 0
    for i in ids:
        region = (labels == i).astype("float32")
        if region.sum() < min_area:
            n_removed += 1
            continue
        keep = keep + region
    return keep, n_removed, n_removed > 0


@case(args=[(f32([[3, 2, 1, 0], [2, 1, 0, 1], [1, 0, 1, 2], [0, 1, 2, 3]]), f32([[0, 0], [3, 3]]), 3),
            (f32([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]), f32([[0, 0], [0, 1]]), 2)])
def watershed_flood(elevation, seeds, max_level):
    """A watershed-like flood: markers grow level by level into unlabelled neighbours whose
    elevation is at most the water level; stops early when a level adds nothing."""
    h, w = elevation.shape
    labels = paddle.zeros([h, w])
    for k in range(seeds.shape[0]):
        labels[int(seeds[k, 0]), int(seeds[k, 1])] = float(k + 1)
    levels_used = 0
    for level in range(max_level + 1):
        levels_used += 1
        p = F.pad(labels.unsqueeze(0).unsqueeze(0), [1, 1, 1, 1]).squeeze(0).squeeze(0)
        nb = paddle.maximum(paddle.maximum(p[:-2, 1:-1], p[2:, 1:-1]),
                            paddle.maximum(p[1:-1, :-2], p[1:-1, 2:]))
        grow = (labels == 0) & (nb > 0) & (elevation <= level + 1)
        if not grow.any():
            break
        labels = paddle.where(grow, nb, labels)
    return labels, levels_used


@case(args=[(f32([[[1, 1], [0, 0]], [[1, 1], [0, 1]], [[0, 0], [1, 1]]]), f32([0.9, 0.8, 0.7]), 0.5),
            (f32([[[1, 1], [0, 0]], [[1, 1], [0, 1]], [[0, 0], [1, 1]]]), f32([0.7, 0.8, 0.9]), 0.9)])
def mask_nms(masks, scores, iou_thr):
    """Mask NMS as instance-segmentation heads write it: sort by score, keep a Python list
    of kept indices, suppress masks whose IoU with a kept one is over the threshold."""
    order = paddle.argsort(scores, descending=True)
    keep = []
    for i in range(order.shape[0]):
        m = masks[order[i]]
        suppressed = False
        for j in keep:
            k = masks[j]
            inter = (m * k).sum()
            union = ((m + k) > 0).astype("float32").sum()
            if inter / union > iou_thr:
                suppressed = True
                break
        if not suppressed:
            keep.append(int(order[i]))
    return keep


# ---- video / temporal ---------------------------------------------------------------------
class StreamingFrameEncoder(nn.Layer):
    """A streaming video encoder with a frame cache on `self.`: a new clip resets the cache,
    a scene cut (a tensor condition on the feature difference) clears it, and it keeps the
    last 2 frames."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.cache = []
        self.n_cuts = 0

    def reset(self):
        self.cache = []
        self.n_cuts = 0

    def forward(self, clip, cut_thr):
        self.reset()
        outs = []
        for t in range(clip.shape[0]):
            feat = self.proj(clip[t])
            if self.cache and (feat - self.cache[-1]).abs().mean() > cut_thr:
                self.cache = []
                self.n_cuts += 1
            self.cache.append(feat)
            self.cache = self.cache[-2:]
            outs.append(paddle.stack(self.cache).mean(0))
        return paddle.stack(outs), len(self.cache), self.n_cuts


case(args=[(rand(3, 4), 10.0), (rand(3, 4) * 5, 0.01), (rand(3, 4), 0.5)])(StreamingFrameEncoder)


@case(args=[(rand(4, 2, 3), 0.1), (rand(4, 2, 3) * 0.01, 0.5), (rand(3, 2, 3), 0.0)])
def keyframe_selection(frames, thr):
    """Keyframes: the first frame, then every frame differing from the last keyframe by more
    than `thr`; the indices as Python ints and the stacked keyframes."""
    key_idx = [0]
    last = frames[0]
    for t in range(1, frames.shape[0]):
        if (frames[t] - last).abs().mean() > thr:
            key_idx.append(t)
            last = frames[t]
    return key_idx, paddle.stack([frames[i] for i in key_idx])


@case(args=[(rand(4, 6), 2, False), (rand(3, 6), 3, False), (rand(3, 6), 3, True)],
      ref=lambda x, fold_div, residual: (x if residual else 0) + np.concatenate(
          [np.concatenate([x[1:, :6 // fold_div], np.zeros_like(x[:1, :6 // fold_div])]),
           np.concatenate([np.zeros_like(x[:1, 6 // fold_div:2 * (6 // fold_div)]),
                           x[:-1, 6 // fold_div:2 * (6 // fold_div)]]),
           x[:, 2 * (6 // fold_div):]], axis=1))
def temporal_shift(x, fold_div, residual):
    """TSM's temporal shift: one fold of channels shifted back in time, one forward (added
    to the input in the residual variant)."""
    c = x.shape[1]
    fold = c // fold_div
    out = paddle.zeros_like(x)
    out[:-1, :fold] = x[1:, :fold]
    out[1:, fold:2 * fold] = x[:-1, fold:2 * fold]
    out[:, 2 * fold:] = x[:, 2 * fold:]
    if residual:
        return x + out
    return out


@dataclass
class MemoryBank:
    size: int
    keys: list = field(default_factory=list)


@case(args=[(rand(5, 3), 2, 0.0), (rand(5, 3), 3, 0.9), (rand(2, 3), 4, -1.0)])
def video_memory_bank(frames, bank_size, sim_thr):
    """XMem-like memory: a frame is written to the bank when it is dissimilar enough to the
    last memory (a tensor cosine); the oldest entry is evicted when full."""
    bank = MemoryBank(bank_size)
    outs = []
    for t in range(frames.shape[0]):
        f = frames[t]
        if not bank.keys:
            bank.keys.append(f)
        else:
            sim = F.cosine_similarity(f, bank.keys[-1], axis=0)
            if sim < sim_thr:
                bank.keys.append(f)
                if len(bank.keys) > bank.size:
                    bank.keys.pop(0)
        outs.append(paddle.stack(bank.keys).mean(0))
    return paddle.stack(outs), len(bank.keys)


# ---- tokenizer-side code ------------------------------------------------------------------
_PAIR_SCORES = f32([[0.0, 0.9, 0.1, 0.0], [0.2, 0.0, 0.8, 0.0], [0.0, 0.0, 0.0, 0.7],
                    [0.3, 0.0, 0.0, 0.0]])


@case(args=[([0, 1, 2, 3], _PAIR_SCORES, 0.5), ([3, 0, 1], _PAIR_SCORES, 0.95), ([2], _PAIR_SCORES, 0.1)])
def bpe_merges_guided_by_scores(tokens, pair_scores, min_score):
    """Byte-level BPE with learned merge scores: repeatedly merge the best-scoring adjacent
    pair (scores read from a tensor) into one Python tuple token until no pair beats
    `min_score`; the token list stays a Python list."""
    pieces = [(t,) for t in tokens]
    while len(pieces) > 1:
        best, best_i = -1.0, -1
        for i in range(len(pieces) - 1):
            s = float(pair_scores[pieces[i][-1], pieces[i + 1][0]])
            if s > best:
                best, best_i = s, i
        if best < min_score:
            break
        pieces = pieces[:best_i] + [pieces[best_i] + pieces[best_i + 1]] + pieces[best_i + 2:]
    return pieces


@case(args=[(f32([0.1, 0.8, 0.05, 0.9]), ["a", "b", "c", "d"], 0.5),
            (f32([0.9, 0.1, 0.2, 0.1]), ["a", "b", "c", "d"], 0.5)])
def word_boundaries_from_model(boundary_probs, chars, thr):
    """A learned tokenizer (boundary predictor): characters are grouped into words where the
    model's boundary probability passes the threshold; words are Python strings."""
    words, cur = [], ""
    for i, ch in enumerate(chars):
        cur += ch
        if boundary_probs[i] > thr:
            words.append(cur)
            cur = ""
    if cur:
        words.append(cur)
    return words


@case(args=[(i64([5, 6, 7, 0, 0]), 0, 3), (i64([5, 6, 7, 8, 9]), 0, 3), (i64([0, 0, 0, 0, 0]), 0, 2)])
def strip_padding_and_truncate(ids, pad_id, max_len):
    """Decode-side cleanup: ids to a Python list, padding stripped, truncated, and a flag."""
    out = [int(i) for i in ids if int(i) != pad_id]
    truncated = len(out) > max_len
    return out[:max_len], truncated


# ---- early exit / adaptive computation ----------------------------------------------------
class EarlyExitClassifier(nn.Layer):
    """DeeBERT-style early exit: each layer has a classifier; inference returns as soon as
    the entropy is under the threshold, with the exit layer as a Python int."""

    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.LayerList([nn.Linear(4, 2) for _ in range(3)])

    def forward(self, x, entropy_thr):
        h = x
        for i, (layer, head) in enumerate(zip(self.layers, self.heads)):
            h = paddle.tanh(layer(h))
            probs = F.softmax(head(h), -1)
            entropy = -(probs * paddle.log(probs + 1e-9)).sum()
            if entropy < entropy_thr:
                return probs, i
        return probs, len(self.layers)


case(args=[(rand(4), 1.0), (rand(4), 0.0), (rand(4) * 20, 0.3)])(EarlyExitClassifier)


class ACTCell(nn.Layer):
    """Graves' Adaptive Computation Time: ponder steps until the halting probability sums
    past 1 - eps (or max steps), the remainder weights the last state; returns the pondering
    cost as a Python float via `.item()`."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(3, 3)
        self.halt = nn.Linear(3, 1)
        self.max_steps = 5
        self.eps = 0.01

    def forward(self, h, bias):
        halting = paddle.zeros([])
        state = paddle.zeros_like(h)
        n = 0
        while halting < 1 - self.eps and n < self.max_steps:
            h = paddle.tanh(self.cell(h))
            p = F.sigmoid(self.halt(h).squeeze(-1) + bias)
            n += 1
            if halting + p > 1 - self.eps or n == self.max_steps:
                p = 1 - halting
            state = state + p * h
            halting = halting + p
        return state, n, (n + (1 - halting)).item()


case(args=[(rand(3), f32(5.0)), (rand(3), f32(-1.0)), (rand(3), f32(-10.0))])(ACTCell)


PonderOut = namedtuple("PonderOut", ["y", "steps", "halted"])


@case(args=[(rand(2, 3), f32([0.9, 0.2]), 4), (rand(2, 3), f32([0.95, 0.95]), 4),
            (rand(2, 3), f32([0.1, 0.1]), 2)])
def pondernet_batch_halting(x, halt_prob, max_steps):
    """PonderNet-style per-example halting in a batch: a still-running mask, examples halt
    when their cumulative halting passes 0.5; the loop stops when all halted."""
    running = paddle.ones([x.shape[0]], dtype="bool")
    cum = paddle.zeros([x.shape[0]])
    y = x
    steps = 0
    for _ in range(max_steps):
        steps += 1
        y = paddle.where(running.unsqueeze(-1), paddle.tanh(y) + 0.1, y)
        cum = cum + paddle.where(running, halt_prob, paddle.zeros_like(cum))
        running = running & (cum < 0.5)
        if not running.any():
            break
    return PonderOut(y, steps, (~running).astype("int64").sum().item())


# ---- Lightning / HF training steps --------------------------------------------------------
class LitClassifier(nn.Layer):
    """A LightningModule's `training_step(batch, batch_idx)`: `self.log`-style values kept
    in a dict of `.item()`s, accuracy logged every other batch, a dict returned."""

    def __init__(self):
        super().__init__()
        self.model = nn.Linear(3, 2)
        self.logged = {}

    def log(self, name, value, prog_bar=False):
        self.logged[name] = value.item() if isinstance(value, paddle.Tensor) else value

    def forward(self, batch, batch_idx):
        x, y = batch
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.log("train_loss", loss, prog_bar=True)
        if batch_idx % 2 == 0:
            acc = (logits.argmax(-1) == y).astype("float32").mean()
            self.log("train_acc", acc)
        return {"loss": loss, "progress": f"loss={loss.item():.3f}"}


case(args=[((rand(4, 3), i64([0, 1, 1, 0])), 0), ((rand(4, 3), i64([1, 1, 1, 1])), 1)])(
    LitClassifier)


@dataclass
class ModelOutput:
    loss: object = None
    logits: object = None
    aux: dict = field(default_factory=dict)


class HFSeqClassifier(nn.Layer):
    """An HF-style `forward(input_ids, labels=None, return_dict=True)`: loss only with labels,
    regression vs classification decided by `num_labels`, a dataclass or a tuple returned."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.head = nn.Linear(4, 2)
        self.num_labels = 2

    def forward(self, input_ids, labels=None, return_dict=True):
        h = self.emb(input_ids).mean(1)
        logits = self.head(h)
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = F.mse_loss(logits.squeeze(-1), labels.astype("float32"))
            else:
                loss = F.cross_entropy(logits, labels)
        if not return_dict:
            return (loss, logits) if loss is not None else (logits,)
        return ModelOutput(loss, logits, {"n_tokens": int((input_ids != 0).sum())})


def _hf_call(model_output):
    if isinstance(model_output, ModelOutput):
        return model_output.loss, model_output.logits, model_output.aux
    return model_output


@case(args=[(i64([[1, 2, 0], [3, 4, 5]]), i64([0, 1]), True), (i64([[1, 2, 0], [3, 0, 0]]), None, False),
            (i64([[1, 2, 3], [3, 4, 5]]), i64([1, 1]), False)])
def hf_forward_then_unpack(input_ids, labels, return_dict):
    """The caller side of an HF model: the output dataclass is unpacked into plain values."""
    paddle.seed(0)
    model = HFSeqClassifier()
    return _hf_call(model(input_ids, labels=labels, return_dict=return_dict))


class LitWithGradNormLog(nn.Layer):
    """A `training_step` that backpropagates itself and logs the gradient norm of the head
    (a Python float) and whether it was clipped, as Lightning's manual optimisation does."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def forward(self, x, y, max_norm):
        self.log_msg = ""
        pred = self.net(x).squeeze(-1)
        loss = F.mse_loss(pred, y)
        loss.backward()
        g = self.net.weight.grad
        norm = float(paddle.sqrt((g * g).sum()))
        clipped = norm > max_norm
        if clipped:
            self.log_msg = f"clipped at {max_norm}"
        self.net.clear_gradients()
        return {"loss": loss.detach(), "grad_norm": norm, "clipped": clipped,
                "msg": f"step loss {loss.item():.2f} norm {norm:.2f}"}


case(args=[(rand(4, 3), rand(4), 100.0), (rand(4, 3) * 10, rand(4) * 10, 0.01)])(LitWithGradNormLog)


@case(args=[(rand(4, 3), i64([0, 1, 2, 0]), 0.1), (rand(4, 3), i64([0, 0, 0, 0]), 0.0)])
def validation_epoch_metrics(logits, labels, label_smoothing):
    """`validation_step` + `on_validation_epoch_end`: per-class correct counts in a Python
    dict over `labels.tolist()`, a macro accuracy as a Python float, the loss with smoothing
    only when asked for."""
    if label_smoothing > 0:
        n_cls = logits.shape[-1]
        soft = F.one_hot(labels, n_cls) * (1 - label_smoothing) + label_smoothing / n_cls
        loss = F.cross_entropy(logits, soft, soft_label=True)
    else:
        loss = F.cross_entropy(logits, labels)
    preds = logits.argmax(-1)
    per_class = {}
    for p, l in zip(preds.tolist(), labels.tolist()):
        hit, tot = per_class.get(l, (0, 0))
        per_class[l] = (hit + int(p == l), tot + 1)
    macro = sum(h / t for h, t in per_class.values()) / len(per_class)
    return {"val_loss": loss.item(), "macro_acc": macro, "per_class": per_class}


_CLASSES = ["background", "road", "car"]


@case(args=[(rand(3, 2, 2), 0.0), (f32(np.stack([np.ones((2, 2)), np.zeros((2, 2)), np.zeros((2, 2))])), 0.5)])
def semantic_area_report(logits, min_frac):
    """Segmentation post-processing to a report: per-class area fractions in a dict keyed by
    class name (Python floats), classes under `min_frac` left out, the dominant class."""
    pred = logits.argmax(0)
    total = pred.numel()
    report = {}
    for c, name in enumerate(_CLASSES):
        frac = float((pred == c).astype("float32").sum()) / total
        if frac < min_frac:
            continue
        report[name] = frac
    dominant = max(report, key=report.get) if report else None
    return report, dominant


@case(args=[(f32([0.1, 0.5, 0.2, 0.9]), ["a", "ab", "b", "abc"], 2), (f32([0.9, 0.1, 0.8, 0.2]), ["a", "ab", "b", "abc"], 1)])
def unigram_best_pieces(piece_scores, vocab, max_pieces):
    """A tokenizer picking the best-scoring vocabulary pieces by a model's scores: pieces
    sorted by `float(score)`, the top ones kept as Python strings with their scores."""
    scored = [(float(piece_scores[i]), p) for i, p in enumerate(vocab)]
    scored.sort(key=lambda sp: -sp[0])
    best = [p for _, p in scored[:max_pieces]]
    return best, scored[0][0]


@case(args=[(rand(4, 3), i64([0, 1, 1, 0]), 0, 2), (rand(4, 3), i64([0, 1, 1, 0]), 3, 2),
            (rand(4, 3) * 10, i64([1, 1, 1, 1]), 1, 1)])
def training_step_accumulate_logs(x, y, batch_idx, accumulate):
    """A training step under gradient accumulation: the loss is divided by the number of
    accumulated batches, logs only on the last micro-batch, a NaN check as a Python bool."""
    paddle.seed(1)
    logits = paddle.matmul(x, paddle.ones([3, 2]) * paddle.to_tensor(f32([0.5, -0.5])))
    loss = F.cross_entropy(logits, y) / accumulate
    out = {"loss": loss}
    if (batch_idx + 1) % accumulate == 0:
        out["log"] = {"loss": loss.item() * accumulate,
                      "acc": (logits.argmax(-1) == y).astype("float32").mean().item()}
    out["finite"] = bool(paddle.isfinite(loss))
    return out


# ---- more state: caches, counters and Python numbers beside tensors ----------------------
class KVCacheWithEviction(nn.Layer):
    """A video-LLM frame-token cache (StreamingLLM-style): attention sinks kept, the oldest
    non-sink entries evicted when over budget, the evicted count a Python int on `self`."""

    def __init__(self):
        super().__init__()
        self.n_sink = 1
        self.budget = 3

    def forward(self, frames, keep_scores):
        cache, scores = [], []
        self.evicted = 0
        for t in range(frames.shape[0]):
            cache.append(frames[t])
            scores.append(keep_scores[t])
            if len(cache) > self.budget:
                rest = paddle.stack(scores[self.n_sink:])
                drop = self.n_sink + int(rest.argmin())
                cache.pop(drop)
                scores.pop(drop)
                self.evicted += 1
        return paddle.stack(cache), self.evicted


case(args=[(rand(5, 2), f32([9, 1, 2, 3, 4])), (rand(3, 2), f32([1, 2, 3])),
           (rand(5, 2), f32([9, 5, 4, 3, 0.5]))])(KVCacheWithEviction)


@case(args=[(f32([0.2, 0.9, 0.4, 0.95]), 0.5, 2), (f32([0.1, 0.2, 0.3, 0.4]), 0.5, 2),
            (f32([0.9, 0.9, 0.9, 0.9]), 0.5, 3)])
def medusa_tree_acceptance(head_probs, threshold, max_len):
    """Medusa-style typical acceptance: walk the candidate heads while their probability
    passes the threshold, collecting accepted positions and a running log-probability as a
    Python float."""
    accepted = []
    logp = 0.0
    for i in range(head_probs.shape[0]):
        p = head_probs[i]
        if p < threshold or len(accepted) >= max_len:
            break
        accepted.append(i)
        logp += float(paddle.log(p))
    return accepted, logp, len(accepted) == max_len


@case(args=[(rand(6, 2), i64([0, 0, 1, 1, 2, 2]), 3), (rand(6, 2), i64([0, 0, 0, 0, 0, 0]), 3),
            (rand(4, 2), i64([2, 1, 2, 1]), 3)])
def point_cloud_instance_centroids(points, instance_ids, n_instances):
    """Instance centroids of a point cloud as a dict keyed by instance id (a Python int from
    the loop), instances with no points left out, the count of empty ones."""
    centroids = {}
    empty = 0
    for k in range(n_instances):
        mask = (instance_ids == k).astype("float32")
        n = mask.sum()
        if n == 0:
            empty += 1
            continue
        centroids[k] = (points * mask.unsqueeze(-1)).sum(0) / n
    return centroids, empty


@dataclass
class ACTState:
    remainders: object
    n_updates: object
    halted: bool = False


@case(args=[(rand(2, 3), f32([0.6, 0.3]), 4), (rand(2, 3), f32([0.99, 0.99]), 4),
            (rand(2, 3), f32([0.05, 0.05]), 2)])
def universal_transformer_act(state, halt_p, max_hops):
    """The Universal Transformer's ACT loop with a dataclass carrying the remainders and the
    number of updates per position; `halted` set when every position has stopped."""
    st = ACTState(paddle.zeros([state.shape[0]]), paddle.zeros([state.shape[0]]))
    halting = paddle.zeros([state.shape[0]])
    for _ in range(max_hops):
        still = (halting < 1.0).astype("float32")
        new_halted = ((halting + halt_p * still) > 0.9).astype("float32") * still
        still = still * (1 - new_halted)
        halting = halting + halt_p * still
        st.remainders = st.remainders + new_halted * (1 - halting)
        halting = halting + new_halted * (1 - halting)
        st.n_updates = st.n_updates + still + new_halted
        state = state + 0.1 * (still + new_halted).unsqueeze(-1) * paddle.tanh(state)
        if (halting >= 1.0).all():
            st.halted = True
            break
    return state, st.remainders, st.n_updates, st.halted
