"""2025-26 sequence and representation-learning code, written as those repos write it: CTC
greedy and prefix decoding (wav2vec2 / ESPnet / NeMo decoders), top-k / top-p sampling with
temperatures from a generation-config object, tokenizer-free byte models (ByT5 id offsets,
BLT-style entropy patching), sequence packing with block-diagonal attention masks and
cu_seqlens, contrastive losses (CLIP's clamped logit scale, SimCLR NT-Xent with masks,
SupCon with anchors lacking positives), knowledge distillation (temperature-scaled KL,
teacher-correct masks, config dispatch) and mixup / cutmix with seeded Python randomness."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

import runtime as torch
import runtime.nn as nn
import runtime.nn.functional as F

from .registry import case, f32, i64, rand

# ---- CTC decoding ---------------------------------------------------------------------------


def _np_ctc_greedy(log_probs, lengths, blank=0):
    best = log_probs.argmax(-1)
    out = []
    for b in range(best.shape[0]):
        seq, prev = [], blank
        for t in range(int(lengths[b])):
            k = int(best[b, t])
            if k != prev and k != blank:
                seq.append(k)
            prev = k
        out.append(seq)
    return out


def _ctc_logits(*frames):
    """log-probs whose argmax follows `frames` (one list of labels per utterance)."""
    B, T = len(frames), max(len(f) for f in frames)
    lp = np.full((B, T, 5), -3.0, np.float32)
    for b, f in enumerate(frames):
        for t, k in enumerate(f):
            lp[b, t, k] = -0.1
    return lp


@case(args=[(_ctc_logits([1, 1, 0, 2, 2, 3], [0, 4, 4, 0, 4, 0]), i64([6, 6])),
            (_ctc_logits([1, 1, 0, 2, 2, 3], [0, 4, 4, 0, 4, 0]), i64([3, 0])),
            (_ctc_logits([0, 0, 0, 0], [2, 2, 2, 2]), i64([4, 2]))], ref=_np_ctc_greedy)
def ctc_greedy_batch_decode(log_probs, lengths, blank=0):
    """A per-utterance greedy CTC decoder that returns Python lists of token ids, collapsing
    repeats and dropping blanks, reading only the valid frames of each utterance."""
    best_path = log_probs.argmax(-1)
    hyps = []
    for b in range(best_path.shape[0]):
        tokens = []
        prev = blank
        for t in range(int(lengths[b])):
            k = int(best_path[b, t])
            if k != prev and k != blank:
                tokens.append(k)
            prev = k
        hyps.append(tokens)
    return hyps


@case(args=[(_ctc_logits([1, 1, 0, 2, 2, 3]), 0), (_ctc_logits([0, 3, 3, 3, 0, 3]), 0),
            (_ctc_logits([0, 0, 0, 0]), 0)])
def ctc_greedy_with_timestamps(log_probs, blank):
    """NeMo-style greedy decode with per-token frame offsets and a confidence (the mean of
    the chosen frames' probabilities) as Python numbers."""
    probs = log_probs[0].exp()
    best = probs.argmax(-1)
    tokens, offsets, confs = [], [], []
    prev = -1
    for t in range(best.shape[0]):
        k = best[t]
        if k != blank and k != prev:
            tokens.append(int(k))
            offsets.append(t)
            confs.append(float(probs[t, k]))
        prev = k
    confidence = sum(confs) / len(confs) if confs else 0.0
    return tokens, offsets, confidence


def _np_prefix_beam(probs, beam, blank=0):
    beams = {(): (1.0, 0.0)}
    for t in range(probs.shape[0]):
        nxt = {}
        for prefix, (pb, pnb) in beams.items():
            for c in range(probs.shape[1]):
                p = float(probs[t, c])
                if c == blank:
                    b_, nb_ = nxt.get(prefix, (0.0, 0.0))
                    nxt[prefix] = (b_ + (pb + pnb) * p, nb_)
                    continue
                new = prefix + (c,)
                b_, nb_ = nxt.get(new, (0.0, 0.0))
                if prefix and prefix[-1] == c:
                    nxt[new] = (b_, nb_ + pb * p)
                    b2, nb2 = nxt.get(prefix, (0.0, 0.0))
                    nxt[prefix] = (b2, nb2 + pnb * p)
                else:
                    nxt[new] = (b_, nb_ + (pb + pnb) * p)
        beams = dict(sorted(nxt.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:beam])
    best = max(beams.items(), key=lambda kv: kv[1][0] + kv[1][1])
    return list(best[0])


@case(args=[(np.exp(_ctc_logits([1, 0, 1, 2])[0]), 3),
            (np.exp(_ctc_logits([0, 0, 3, 3])[0]), 2)])
def ctc_prefix_beam_search_numpy(probs, beam_size, blank=0):
    """The classic CTC prefix beam search over `probs.numpy()`: dicts keyed by prefix
    tuples, pruned by summed blank / non-blank probability."""
    probs = probs.numpy()
    beams = {(): (1.0, 0.0)}
    for t in range(probs.shape[0]):
        next_beams = {}
        for prefix, (p_b, p_nb) in beams.items():
            for c in range(probs.shape[1]):
                p = float(probs[t, c])
                if c == blank:
                    b_, nb_ = next_beams.get(prefix, (0.0, 0.0))
                    next_beams[prefix] = (b_ + (p_b + p_nb) * p, nb_)
                    continue
                extended = prefix + (c,)
                b_, nb_ = next_beams.get(extended, (0.0, 0.0))
                if prefix and prefix[-1] == c:
                    next_beams[extended] = (b_, nb_ + p_b * p)
                    b2, nb2 = next_beams.get(prefix, (0.0, 0.0))
                    next_beams[prefix] = (b2, nb2 + p_nb * p)
                else:
                    next_beams[extended] = (b_, nb_ + (p_b + p_nb) * p)
        ranked = sorted(next_beams.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        beams = dict(ranked[:beam_size])
    best = max(beams.items(), key=lambda kv: kv[1][0] + kv[1][1])
    return list(best[0])


# ---- sampling with a generation config ----------------------------------------------------------
@dataclass
class GenerationConfig:
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    do_sample: bool = True
    min_tokens_to_keep: int = 1


def _np_sample(logits, u, cfg):
    if not cfg.do_sample:
        return logits.argmax(-1)
    x = logits / cfg.temperature if cfg.temperature != 1.0 else logits.copy()
    if cfg.top_k > 0:
        kth = np.sort(x, -1)[:, -cfg.top_k][:, None]
        x = np.where(x < kth, -np.inf, x)
    if cfg.top_p < 1.0:
        order = np.argsort(-x, -1, kind="stable")
        sx = np.take_along_axis(x, order, -1)
        p = np.exp(sx - sx.max(-1, keepdims=True))
        p = p / p.sum(-1, keepdims=True)
        cum = np.cumsum(p, -1)
        remove = cum - p > cfg.top_p
        remove[:, :cfg.min_tokens_to_keep] = False
        sx = np.where(remove, -np.inf, sx)
        x = np.full_like(x, -np.inf)
        np.put_along_axis(x, order, sx, -1)
    p = np.exp(x - x.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    return (np.cumsum(p, -1) < u[:, None]).sum(-1).clip(max=x.shape[-1] - 1)


_LOGITS = f32([[2.0, 1.0, 0.5, -1.0, 0.1], [0.0, 3.0, 2.9, 0.2, -2.0]])


@case(args=[(_LOGITS, f32([0.3, 0.9]), GenerationConfig(temperature=0.7, top_k=3)),
            (_LOGITS, f32([0.3, 0.9]), GenerationConfig(top_p=0.8)),
            (_LOGITS, f32([0.3, 0.9]), GenerationConfig(do_sample=False)),
            (_LOGITS, f32([0.99, 0.5]), GenerationConfig(temperature=2.0, top_k=2, top_p=0.5))],
      ref=_np_sample)
def sample_next_token(logits, uniform, generation_config):
    """HF-style logits warpers chosen by a config object (temperature, top-k, top-p with
    `min_tokens_to_keep`), then inverse-CDF sampling with a given uniform draw."""
    cfg = generation_config
    if not cfg.do_sample:
        return logits.argmax(-1)
    if cfg.temperature != 1.0:
        logits = logits / cfg.temperature
    if cfg.top_k > 0:
        kth = torch.topk(logits, cfg.top_k)[0][..., -1:]
        logits = torch.where(logits < kth, torch.full_like(logits, -float("inf")), logits)
    if cfg.top_p < 1.0:
        sorted_idx = torch.argsort(logits, descending=True)
        sorted_logits = torch.take_along_axis(logits, sorted_idx, -1)
        probs = F.softmax(sorted_logits, axis=-1)
        cum = torch.cumsum(probs, -1)
        remove = cum - probs > cfg.top_p
        remove[:, :cfg.min_tokens_to_keep] = False
        sorted_logits = torch.where(remove, torch.full_like(sorted_logits, -float("inf")),
                                    sorted_logits)
        logits = torch.full_like(logits, -float("inf"))
        logits = torch.put_along_axis(logits, sorted_idx, sorted_logits, -1)
    probs = F.softmax(logits, axis=-1)
    idx = (torch.cumsum(probs, -1) < uniform.unsqueeze(-1)).astype("int64").sum(-1)
    return torch.clip(idx, max=logits.shape[-1] - 1)


class TinyLM(nn.Layer):
    """Autoregressive generation with an EOS stop: a Python loop over `max_new_tokens`
    concatenating ids, stopping when every row has produced EOS (HF `generate` greedy)."""

    def __init__(self, vocab=6, dim=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, max_new_tokens, eos_token_id):
        finished = torch.zeros([input_ids.shape[0]], dtype="bool")
        for _ in range(max_new_tokens):
            h = self.emb(input_ids).mean(1)
            next_tokens = self.head(h).argmax(-1)
            next_tokens = torch.where(finished, torch.full_like(next_tokens, eos_token_id),
                                      next_tokens)
            input_ids = torch.concat([input_ids, next_tokens.unsqueeze(-1)], axis=-1)
            finished = finished | (next_tokens == eos_token_id)
            if finished.all():
                break
        return input_ids


case(args=[(i64([[1, 2], [3, 4]]), 4, 5), (i64([[1, 2], [3, 4]]), 4, 0),
           (i64([[0, 0]]), 3, 1)])(TinyLM)


# ---- byte-level models -------------------------------------------------------------------------
_BYTE_OFFSET = 3  # ByT5: pad=0, eos=1, unk=2, then bytes


def _encode_bytes(texts, max_len):
    ids = np.zeros((len(texts), max_len), np.int64)
    for i, t in enumerate(texts):
        b = [c + _BYTE_OFFSET for c in t.encode("utf-8")][:max_len - 1] + [1]
        ids[i, :len(b)] = b
    return ids


@case(args=[(["héllo", "ok"], 8), (["a much longer line", ""], 6)])
def byt5_encode_and_embed(texts, max_len):
    """ByT5's tokenizer inlined: utf-8 bytes + 3, EOS appended, padded with zeros; the
    attention mask and the number of real tokens per row follow."""
    rows = []
    for text in texts:
        ids = [b + _BYTE_OFFSET for b in text.encode("utf-8")][: max_len - 1] + [1]
        rows.append(ids + [0] * (max_len - len(ids)))
    input_ids = torch.to_tensor(rows, dtype="int64")
    attention_mask = (input_ids != 0).astype("int64")
    n_tokens = attention_mask.sum(-1)
    truncated = [len(t.encode("utf-8")) >= max_len for t in texts]
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "lengths": n_tokens.tolist(), "truncated": truncated}


@case(args=[(i64(_encode_bytes(["héllo", "ok"], 8)),), (i64(_encode_bytes(["\x00\x01"], 4)),)])
def byte_ids_to_counts(input_ids):
    """Decoding ByT5 ids back to bytes: specials dropped, ids shifted back, counted per byte
    class (ASCII letters, UTF-8 continuation bytes)."""
    ids = input_ids - _BYTE_OFFSET
    valid = ids >= 0
    ids = torch.where(valid, ids, torch.zeros_like(ids))
    letters = ((ids >= 65) & (ids < 123) & valid).astype("int64").sum()
    continuation = ((ids >= 128) & (ids < 192) & valid).astype("int64").sum()
    stats = {"letters": int(letters), "continuation": int(continuation)}
    if stats["continuation"] > 0:
        stats["multibyte"] = True
    return stats


def _np_patches(entropy, threshold, max_patch):
    starts = [0]
    for t in range(1, entropy.shape[0]):
        if entropy[t] > threshold or t - starts[-1] >= max_patch:
            starts.append(t)
    lengths = [b - a for a, b in zip(starts, starts[1:] + [entropy.shape[0]])]
    return starts, lengths


@case(args=[(f32([0.1, 2.0, 0.2, 0.3, 2.5, 0.1, 0.1]), 1.0, 3),
            (f32([0.1, 0.2, 0.2, 0.3, 0.5, 0.1, 0.1]), 1.0, 4),
            (f32([3.0, 3.0, 3.0]), 1.0, 8)], ref=_np_patches)
def entropy_patch_boundaries(entropy, threshold, max_patch):
    """BLT's entropy patcher: a new patch where the next-byte entropy exceeds a threshold or
    the current patch is full; returns patch starts and lengths as Python lists."""
    starts = [0]
    for t in range(1, entropy.shape[0]):
        if entropy[t] > threshold or t - starts[-1] >= max_patch:
            starts.append(t)
    ends = starts[1:] + [entropy.shape[0]]
    lengths = [e - s for s, e in zip(starts, ends)]
    return starts, lengths


# ---- sequence packing ---------------------------------------------------------------------------
def _np_packed_mask(doc_lens):
    ids = np.repeat(np.arange(len(doc_lens)), doc_lens)
    L = ids.shape[0]
    causal = np.tril(np.ones((L, L), bool))
    pos = np.concatenate([np.arange(n) for n in doc_lens])
    return (ids[:, None] == ids[None, :]) & causal, pos


@case(args=[([3, 2, 1],), ([6],), ([1, 1, 1, 1, 2],)], ref=_np_packed_mask)
def packed_causal_mask(doc_lens):
    """Packing several documents into one row: a block-diagonal causal mask and position ids
    that restart at every document (flash-attn varlen style, cu_seqlens from the lengths)."""
    cu_seqlens = [0]
    for n in doc_lens:
        cu_seqlens.append(cu_seqlens[-1] + n)
    total = cu_seqlens[-1]
    doc_ids = torch.zeros([total], dtype="int64")
    position_ids = torch.zeros([total], dtype="int64")
    for i, (start, end) in enumerate(zip(cu_seqlens[:-1], cu_seqlens[1:])):
        doc_ids[start:end] = i
        position_ids[start:end] = torch.arange(end - start)
    same_doc = doc_ids.unsqueeze(1) == doc_ids.unsqueeze(0)
    causal = torch.tril(torch.ones([total, total])).astype("bool")
    return same_doc & causal, position_ids


def _np_greedy_pack(lengths, max_len):
    bins, loads = [], []
    for i, n in enumerate(lengths):
        for b in range(len(bins)):
            if loads[b] + n <= max_len:
                bins[b].append(i)
                loads[b] += n
                break
        else:
            bins.append([i])
            loads.append(n)
    return bins, loads


@case(args=[(i64([5, 3, 4, 2, 1]), 8), (i64([8, 8]), 8), (i64([1, 1, 1]), 8)])
def first_fit_pack_lengths(seq_lens, max_len):
    """First-fit packing of example lengths read from a tensor (`.tolist()`), `for ... else`
    opening a new bin; returns the bins and their loads."""
    bins, loads = [], []
    for i, n in enumerate(seq_lens.tolist()):
        for b in range(len(bins)):
            if loads[b] + n <= max_len:
                bins[b].append(i)
                loads[b] += n
                break
        else:
            bins.append([i])
            loads.append(n)
    return bins, loads


@case(args=[(i64([[5, 6, 1, 7, 1, 8], [5, 1, 2, 2, 2, 1]]), 1, True),
            (i64([[5, 6, 7, 8, 9, 9], [2, 3, 4, 5, 1, 0]]), 1, False)],
      batch=lambda b: (np.tile(i64([[5, 1, 2, 1, 7, 1]]), (b, 1)),))
def cu_seqlens_from_eos(packed_ids, eos_id=1, causal=True):
    """Document boundaries recovered from EOS tokens in packed rows: segment ids by a cumsum
    over `is_eos` shifted by one, a block-diagonal (optionally causal) mask, and the longest
    document as an int."""
    is_eos = (packed_ids == eos_id).astype("int64")
    seg = torch.cumsum(is_eos, -1) - is_eos
    mask = seg.unsqueeze(-1) == seg.unsqueeze(-2)
    if causal:
        L = packed_ids.shape[-1]
        mask = mask & torch.tril(torch.ones([L, L])).astype("bool")
    counts = F.one_hot(seg, packed_ids.shape[-1]).sum(1)
    max_doc = int(counts.max())
    n_docs = (counts > 0).astype("int64").sum(-1)
    return mask, n_docs, max_doc


# ---- contrastive learning ---------------------------------------------------------------------
class CLIPHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.img_proj = nn.Linear(4, 3)
        self.txt_proj = nn.Linear(5, 3)
        self.logit_scale = self.create_parameter(
            [1], default_initializer=nn.initializer.Constant(math.log(1 / 0.07)))

    def forward(self, images, texts, output_dict=True):
        img = F.normalize(self.img_proj(images), axis=-1)
        txt = F.normalize(self.txt_proj(texts), axis=-1)
        logit_scale = torch.clip(self.logit_scale, 0, math.log(100)).exp()
        logits_per_image = logit_scale * torch.matmul(img, txt.t())
        labels = torch.arange(images.shape[0])
        loss = (F.cross_entropy(logits_per_image, labels)
                + F.cross_entropy(logits_per_image.t(), labels)) / 2
        if output_dict:
            return {"loss": loss, "logit_scale": logit_scale.item(),
                    "acc": (logits_per_image.argmax(-1) == labels).astype("float32").mean()}
        return loss, logits_per_image


case(args=[(rand(3, 4), rand(3, 5), True), (rand(3, 4), rand(3, 5), False)],
     batch=lambda b: (rand(b, 4), rand(b, 5)), rtol=1e-4, atol=1e-5)(CLIPHead)


def _np_nt_xent(z1, z2, t=0.5, labels=None):
    z = np.concatenate([z1, z2])
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    n = z1.shape[0]
    sim = z @ z.T / t
    np.fill_diagonal(sim, -np.inf)
    if labels is not None:
        lab = np.concatenate([labels, labels])
        same = (lab[:, None] == lab[None, :]) & ~np.eye(2 * n, dtype=bool)
        same[np.arange(2 * n), np.concatenate([np.arange(n, 2 * n), np.arange(n)])] = False
        sim = np.where(same, -np.inf, sim)
    labels = np.concatenate([np.arange(n, 2 * n), np.arange(n)])
    m = sim.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(sim - m).sum(1))
    return np.float32((lse - sim[np.arange(2 * n), labels]).mean())


@case(args=[(rand(3, 4), rand(3, 4), 0.5), (rand(2, 4), rand(2, 4), 0.1),
            (rand(4, 4), rand(4, 4), 0.5, i64([0, 1, 0, 2]))], ref=_np_nt_xent,
      rtol=1e-4, atol=1e-5, batch=lambda b: (rand(b, 4), rand(b, 4)))
def simclr_nt_xent(z_i, z_j, temperature=0.5, labels=None):
    """SimCLR's NT-Xent: 2N views, cosine similarities, the self-similarity masked with
    -inf through a boolean eye mask, positives at i +/- N; with class labels, other views of
    the same class are masked out as false negatives."""
    n = z_i.shape[0]
    z = F.normalize(torch.concat([z_i, z_j], axis=0), axis=1)
    sim = torch.matmul(z, z.t()) / temperature
    self_mask = torch.eye(2 * n).astype("bool")
    sim = torch.where(self_mask, torch.full_like(sim, -float("inf")), sim)
    targets = torch.concat([torch.arange(n, 2 * n), torch.arange(0, n)])
    if labels is not None:
        lab = torch.concat([labels, labels])
        false_neg = (lab.unsqueeze(1) == lab.unsqueeze(0)) & ~self_mask
        false_neg = false_neg & ~F.one_hot(targets, 2 * n).astype("bool")
        sim = torch.where(false_neg, torch.full_like(sim, -float("inf")), sim)
    return F.cross_entropy(sim, targets)


def _np_supcon(feats, labels, t):
    f = feats / np.linalg.norm(feats, axis=1, keepdims=True)
    n = f.shape[0]
    logits = f @ f.T / t
    logits = logits - logits.max(1, keepdims=True)
    not_self = ~np.eye(n, dtype=bool)
    pos = (labels[:, None] == labels[None, :]) & not_self
    exp = np.exp(logits) * not_self
    log_prob = logits - np.log(exp.sum(1, keepdims=True))
    n_pos = pos.sum(1)
    if n_pos.sum() == 0:
        return np.float32(0.0), 0
    has = n_pos > 0
    mean_lp = (pos * log_prob).sum(1)[has] / n_pos[has]
    return np.float32(-mean_lp.mean()), int(has.sum())


@case(args=[(rand(4, 3), i64([0, 1, 0, 2]), 0.2), (rand(4, 3), i64([0, 1, 2, 3]), 0.2),
            (rand(4, 3), i64([1, 1, 1, 1]), 0.5)], ref=_np_supcon, rtol=1e-4, atol=1e-5)
def supcon_loss_with_lonely_anchors(features, labels, temperature):
    """Supervised contrastive loss: anchors with no positive in the batch are left out of
    the mean; a batch with no positives at all gives zero (a tensor `if` on the count)."""
    f = F.normalize(features, axis=1)
    n = f.shape[0]
    logits = torch.matmul(f, f.t()) / temperature
    logits = logits - logits.max(1, keepdim=True).detach()
    not_self = 1.0 - torch.eye(n)
    pos = (labels.unsqueeze(1) == labels.unsqueeze(0)).astype("float32") * not_self
    exp_logits = torch.exp(logits) * not_self
    log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))
    n_pos = pos.sum(1)
    if n_pos.sum() == 0:
        return torch.zeros([]), 0
    has_pos = n_pos > 0
    mean_log_prob = (pos * log_prob).sum(1) / torch.clip(n_pos, min=1.0)
    loss = -(mean_log_prob * has_pos.astype("float32")).sum() / has_pos.astype(
        "float32").sum()
    return loss, int(has_pos.astype("int64").sum())


# ---- knowledge distillation ---------------------------------------------------------------------
@dataclass
class DistillConfig:
    kd_type: str = "kl"
    temperature: float = 4.0
    alpha: float = 0.5
    only_correct_teacher: bool = False


def _kd_term(s, t, cfg):
    if cfg.kd_type == "mse":
        return F.mse_loss(s, t)
    log_p = F.log_softmax(s / cfg.temperature, axis=-1)
    q = F.softmax(t / cfg.temperature, axis=-1)
    kl = (q * (torch.log(q + 1e-12) - log_p)).sum(-1)
    return kl * cfg.temperature ** 2


@case(args=[(rand(4, 3), rand(4, 3), i64([0, 1, 2, 0]), DistillConfig()),
            (rand(4, 3), rand(4, 3), i64([0, 1, 2, 0]), DistillConfig(kd_type="mse")),
            (f32([[1, 0, 0], [0, 1, 0]]), f32([[0, 0, 1], [0, 0, 1]]), i64([0, 1]),
             DistillConfig(only_correct_teacher=True)),
            (f32([[1, 0, 0], [0, 1, 0]]), f32([[0, 0, 1], [0, 2, 1]]), i64([0, 1]),
             DistillConfig(only_correct_teacher=True))], rtol=1e-4, atol=1e-5)
def distillation_loss_from_config(student_logits, teacher_logits, labels, cfg):
    """A distiller whose KD term is chosen by config; with `only_correct_teacher` the KD
    term is averaged over samples the teacher gets right, falling back to CE alone when the
    teacher is wrong everywhere. Logs floats in a dict."""
    ce = F.cross_entropy(student_logits, labels)
    kd = _kd_term(student_logits, teacher_logits.detach(), cfg)
    if kd.ndim > 0 and cfg.only_correct_teacher:
        correct = (teacher_logits.argmax(-1) == labels).astype("float32")
        if correct.sum() > 0:
            kd = (kd * correct).sum() / correct.sum()
        else:
            kd = torch.zeros([])
    elif kd.ndim > 0:
        kd = kd.mean()
    loss = (1 - cfg.alpha) * ce + cfg.alpha * kd
    return loss, {"ce": ce.item(), "kd": kd.item()}


# ---- mixup / cutmix -------------------------------------------------------------------------
def _rand_bbox(h, w, lam, rng):
    cut = math.sqrt(1.0 - lam)
    ch, cw = int(h * cut), int(w * cut)
    cy, cx = rng.randint(0, h - 1), rng.randint(0, w - 1)
    y1, y2 = max(cy - ch // 2, 0), min(cy + ch // 2, h)
    x1, x2 = max(cx - cw // 2, 0), min(cx + cw // 2, w)
    return y1, y2, x1, x2


def _np_mix(x, y, seed, num_classes, alpha=1.0, switch_prob=0.5):
    rng = random.Random(seed)
    lam = rng.betavariate(alpha, alpha)
    target = np.eye(num_classes, dtype=np.float32)[y]
    if rng.random() < switch_prob:
        y1, y2, x1, x2 = _rand_bbox(x.shape[2], x.shape[3], lam, rng)
        x = x.copy()
        x[:, :, y1:y2, x1:x2] = x[::-1][:, :, y1:y2, x1:x2]
        lam = 1.0 - (y2 - y1) * (x2 - x1) / (x.shape[2] * x.shape[3])
    else:
        x = lam * x + (1 - lam) * x[::-1]
    return x, lam * target + (1 - lam) * target[::-1], lam


@case(args=[(rand(2, 1, 4, 4), i64([0, 2]), 0, 3), (rand(2, 1, 4, 4), i64([0, 2]), 1, 3),
            (rand(2, 1, 4, 4), i64([1, 1]), 7, 3)], ref=_np_mix, rtol=1e-5, atol=1e-6)
def mixup_or_cutmix_seeded(x, y, seed, num_classes, alpha=1.0, switch_prob=0.5):
    """timm's Mixup with a seeded `random.Random`: beta-distributed lam, cutmix with a
    random box (lam corrected by the box area) or mixup, flipped-batch pairing, soft
    targets; lam returned as a float."""
    rng = random.Random(seed)
    lam = rng.betavariate(alpha, alpha)
    target = F.one_hot(y, num_classes)
    if rng.random() < switch_prob:
        y1, y2, x1, x2 = _rand_bbox(x.shape[2], x.shape[3], lam, rng)
        x = x.clone()
        x[:, :, y1:y2, x1:x2] = x.flip(0)[:, :, y1:y2, x1:x2]
        lam = 1.0 - (y2 - y1) * (x2 - x1) / (x.shape[2] * x.shape[3])
    else:
        x = x * lam + x.flip(0) * (1.0 - lam)
    target = target * lam + target.flip(0) * (1.0 - lam)
    return x, target, lam


@case(args=[(rand(3, 4), i64([0, 1, 2]), f32(0.3), i64([2, 0, 1])),
            (rand(3, 4), i64([0, 1, 2]), f32(0.8), i64([1, 2, 0]))],
      rtol=1e-5, atol=1e-6)
def mixup_lam_from_tensor(x, y, lam, perm):
    """Mixup with lam drawn on device (passed in): lam < 0.5 is flipped so the first
    sample dominates (a tensor `if`), labels are returned for a mixed criterion."""
    if lam < 0.5:
        lam = 1.0 - lam
    mixed = lam * x + (1 - lam) * x[perm]
    return mixed, y, y[perm], lam


@case(args=[(_ctc_logits([1, 1, 1, 0, 2, 2, 0, 0, 3]), 0), (_ctc_logits([0, 0, 0]), 0),
            (_ctc_logits([4, 4, 4, 4]), 0)])
def ctc_greedy_run_lengths(log_probs, blank):
    """Greedy CTC with run-length skipping: a `while` walks each run of equal labels,
    recording (label, start frame, duration) for non-blank runs."""
    best = log_probs[0].argmax(-1)
    T = best.shape[0]
    segments = []
    t = 0
    while t < T:
        start = t
        while t < T and best[t] == best[start]:
            t += 1
        if best[start] != blank:
            segments.append((int(best[start]), start, t - start))
    return segments


@case(args=[(_LOGITS, i64([[1, 3, 0]]), 1.3, GenerationConfig(temperature=0.5)),
            (_LOGITS, i64([[4, 3, 2]]), 1.0, GenerationConfig())])
def repetition_penalty_then_greedy(logits, generated, penalty, cfg):
    """HF's RepetitionPenaltyLogitsProcessor (gather the generated ids' scores, divide the
    positive and multiply the negative ones) skipped when the penalty is 1.0, then a
    temperature from the config and greedy choice."""
    if penalty != 1.0:
        ids = generated.expand([logits.shape[0], generated.shape[1]])
        score = torch.take_along_axis(logits, ids, 1)
        score = torch.where(score < 0, score * penalty, score / penalty)
        logits = torch.put_along_axis(logits, ids, score, 1)
    if cfg.temperature != 1.0:
        logits = logits / cfg.temperature
    return logits.argmax(-1), F.softmax(logits, -1).max(-1)


class ByteLM(nn.Layer):
    """A tokenizer-free byte LM head over patches (BLT-style): byte embeddings mean-pooled
    into fixed patches, a padded tail patch masked out, next-byte logits per patch."""

    def __init__(self, patch=3):
        super().__init__()
        self.patch = patch
        self.emb = nn.Embedding(259, 4)
        self.out = nn.Linear(4, 259)

    def forward(self, byte_ids):
        L = byte_ids.shape[-1]
        pad = (-L) % self.patch
        if pad:
            byte_ids = F.pad(byte_ids.unsqueeze(0).astype("float32"), [0, pad],
                             value=0.0).squeeze(0).astype("int64")
        h = self.emb(byte_ids)
        patches = h.reshape([byte_ids.shape[0], -1, self.patch, 4])
        mask = (byte_ids != 0).astype("float32").reshape([byte_ids.shape[0], -1, self.patch, 1])
        pooled = (patches * mask).sum(2) / torch.clip(mask.sum(2), min=1.0)
        return self.out(pooled), int(pad)


case(args=[(i64(_encode_bytes(["héllo"], 7)),), (i64(_encode_bytes(["abcdef"], 6)),)])(ByteLM)


@case(args=[(rand(3, 4), rand(3, 4), rand(3, 4), 0.1), (rand(3, 4), rand(3, 4), None, 0.1)],
      rtol=1e-4, atol=1e-5)
def info_nce_with_optional_hard_negatives(query, positive, hard_negative, temperature):
    """Sentence-embedding InfoNCE (sentence-transformers MultipleNegativesRankingLoss):
    in-batch negatives, plus hard negatives concatenated when given; accuracy as a float."""
    q = F.normalize(query, axis=-1)
    candidates = [F.normalize(positive, axis=-1)]
    if hard_negative is not None:
        candidates.append(F.normalize(hard_negative, axis=-1))
    docs = torch.concat(candidates, axis=0)
    scores = torch.matmul(q, docs.t()) / temperature
    labels = torch.arange(q.shape[0])
    loss = F.cross_entropy(scores, labels)
    acc = float((scores.argmax(-1) == labels).astype("float32").mean())
    return loss, acc
