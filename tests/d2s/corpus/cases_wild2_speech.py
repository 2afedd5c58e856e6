"""Speech front ends and losses as ESPnet/PaddleSpeech-style repos write them: framing with a
Python loop over hops, a magnitude spectrogram with a window, log-mel with a floor, CMVN by
utterance lengths, SpecAugment time/frequency masks from given draws, delta features, and a
CTC-style collapse of frame labels."""
import numpy as np

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, pos, rand


def _np_frames(wav, frame_len, hop, pad_end):
    n = len(wav)
    if pad_end and (n - frame_len) % hop:
        wav = np.pad(wav, (0, hop - (n - frame_len) % hop))
    count = 1 + (len(wav) - frame_len) // hop
    return np.stack([wav[i * hop:i * hop + frame_len] for i in range(count)])


@case(args=[(rand(20), 8, 4, False), (rand(21), 8, 4, True), (rand(20), 8, 4, True)],
      ref=_np_frames)
def frame_signal(wav, frame_length, hop_length, pad_end=False):
    n = wav.shape[0]
    remainder = (n - frame_length) % hop_length
    if pad_end and remainder:
        wav = F.pad(wav.unsqueeze(0), [0, hop_length - remainder], data_format="NCL").squeeze(0)
    num_frames = 1 + (wav.shape[0] - frame_length) // hop_length
    frames = [wav[i * hop_length:i * hop_length + frame_length] for i in range(num_frames)]
    return paddle.stack(frames)


def _np_spec(frames, power):
    win = np.hanning(frames.shape[1] + 1)[:-1].astype(np.float32)
    k = np.arange(frames.shape[1])
    basis_re = np.cos(2 * np.pi * np.outer(k, k) / len(k))[:, :len(k) // 2 + 1]
    basis_im = -np.sin(2 * np.pi * np.outer(k, k) / len(k))[:, :len(k) // 2 + 1]
    x = frames * win
    mag = np.sqrt((x @ basis_re) ** 2 + (x @ basis_im) ** 2)
    return (mag ** power).astype(np.float32)


class DFTSpectrogram(nn.Layer):
    """A spectrogram by matmul with DFT bases, as export-friendly front ends compute it."""

    def __init__(self, n_fft=8, power=2.0):
        super().__init__()
        k = np.arange(n_fft)
        angle = 2 * np.pi * np.outer(k, k) / n_fft
        self.register_buffer("cos_basis", paddle.to_tensor(
            np.cos(angle)[:, :n_fft // 2 + 1].astype("float32")))
        self.register_buffer("sin_basis", paddle.to_tensor(
            -np.sin(angle)[:, :n_fft // 2 + 1].astype("float32")))
        self.register_buffer("window", paddle.to_tensor(
            np.hanning(n_fft + 1)[:-1].astype("float32")))
        self.power = power

    def forward(self, frames, power=None):
        power = power if power is not None else self.power
        x = frames * self.window
        re, im = paddle.matmul(x, self.cos_basis), paddle.matmul(x, self.sin_basis)
        mag = paddle.sqrt(re * re + im * im)
        if power == 1.0:
            return mag
        return mag.pow(power)


case(args=[(rand(5, 8), None), (rand(5, 8), 1.0)],
     ref=lambda f, p: _np_spec(f, 2.0 if p is None else p), rtol=1e-4, atol=1e-5)(DFTSpectrogram)


@case(args=[(pos(3, 4), 1e-10, "log"), (pos(3, 4) * 1e-12, 1e-10, "log"),
            (pos(3, 4), 1e-10, "db")],
      ref=lambda s, floor, kind: (np.log(np.maximum(s, floor)) if kind == "log"
                                  else 10 * np.log10(np.maximum(s, floor))),
      rtol=1e-5, atol=1e-5)
def log_compress(spec, floor, kind):
    spec = paddle.clip(spec, min=floor)
    if kind == "db":
        return 10.0 * paddle.log10(spec)
    return paddle.log(spec)


def _np_cmvn(feats, lengths, norm_vars):
    out = feats.copy()
    for b, n in enumerate(lengths):
        x = feats[b, :n]
        mean = x.mean(0)
        out[b, :n] = x - mean
        if norm_vars:
            out[b, :n] /= np.sqrt(((x - mean) ** 2).mean(0) + 1e-5)
        out[b, n:] = 0
    return out


@case(args=[(rand(2, 5, 3), i64([5, 3]), True), (rand(2, 5, 3), i64([2, 4]), False)],
      ref=_np_cmvn, rtol=1e-4, atol=1e-5)
def utterance_cmvn(feats, lengths, norm_vars=True):
    """Mean/variance normalisation over each utterance's valid frames; padding stays zero."""
    max_len = feats.shape[1]
    mask = (paddle.arange(max_len).unsqueeze(0) < lengths.unsqueeze(1)).astype(feats.dtype)
    mask = mask.unsqueeze(-1)
    count = lengths.astype(feats.dtype).reshape([-1, 1, 1])
    mean = (feats * mask).sum(axis=1, keepdim=True) / count
    out = (feats - mean) * mask
    if norm_vars:
        var = (out * out).sum(axis=1, keepdim=True) / count
        out = out / paddle.sqrt(var + 1e-5)
    return out


def _np_specaug(spec, t_starts, t_widths, f_starts, f_widths):
    spec = spec.copy()
    for s, w in zip(t_starts, t_widths):
        spec[s:s + w, :] = 0
    for s, w in zip(f_starts, f_widths):
        spec[:, s:s + w] = 0
    return spec


@case(args=[(rand(10, 6), [1, 6], [2, 3], [0], [2]), (rand(10, 6), [], [], [3], [2]),
            (rand(10, 6), [4], [0], [], [])], ref=_np_specaug)
def spec_augment(spec, time_starts, time_widths, freq_starts, freq_widths):
    """SpecAugment with the random draws passed in; masks are built with arange comparisons."""
    n_time, n_freq = spec.shape
    t = paddle.arange(n_time).unsqueeze(1)
    f = paddle.arange(n_freq).unsqueeze(0)
    keep = paddle.ones_like(spec, dtype="bool")
    for start, width in zip(time_starts, time_widths):
        if width == 0:
            continue
        keep = keep & ~((t >= start) & (t < start + width))
    for start, width in zip(freq_starts, freq_widths):
        keep = keep & ~((f >= start) & (f < start + width))
    return paddle.where(keep, spec, paddle.zeros_like(spec))


@case(args=[(rand(10, 6), f32([0.9, 0.2, 0.5, 0.3]), 3, 2),
            (rand(10, 6), f32([0.05, 0.2, 0.01, 0.3]), 3, 2)])
def spec_augment_tensor_draws(spec, draws, max_time_width, max_freq_width):
    """The draws are tensors: widths and starts are computed in the graph; a zero width draw
    skips the mask with a tensor if."""
    n_time, n_freq = spec.shape
    t_width = (draws[0] * max_time_width).astype("int64")
    t_start = (draws[1] * (n_time - max_time_width)).astype("int64")
    if t_width > 0:
        t = paddle.arange(n_time).unsqueeze(1)
        spec = paddle.where((t >= t_start) & (t < t_start + t_width), paddle.zeros_like(spec), spec)
    f_width = (draws[2] * max_freq_width).astype("int64")
    f_start = (draws[3] * (n_freq - max_freq_width)).astype("int64")
    if f_width > 0:
        f = paddle.arange(n_freq).unsqueeze(0)
        spec = paddle.where((f >= f_start) & (f < f_start + f_width), paddle.zeros_like(spec), spec)
    return spec


def _np_delta(feat, window):
    n = len(feat)
    padded = np.concatenate([feat[:1].repeat(window, 0), feat, feat[-1:].repeat(window, 0)])
    denom = 2 * sum(i * i for i in range(1, window + 1))
    out = np.zeros_like(feat)
    for i in range(1, window + 1):
        out += i * (padded[window + i:window + i + n] - padded[window - i:window - i + n])
    return out / denom


@case(args=[(rand(6, 3), 2, 1), (rand(6, 3), 1, 2), (rand(6, 3), 2, 0)])
def add_deltas(feat, window=2, order=2):
    """Kaldi's add-deltas: delta of delta stacked on the features."""
    outs = [feat]
    cur = feat
    for _ in range(order):
        n = cur.shape[0]
        padded = paddle.concat([cur[:1].tile([window, 1]), cur, cur[-1:].tile([window, 1])])
        denom = 2 * sum(i * i for i in range(1, window + 1))
        delta = paddle.zeros_like(cur)
        for i in range(1, window + 1):
            delta = delta + i * (padded[window + i:window + i + n]
                                 - padded[window - i:window - i + n])
        cur = delta / denom
        outs.append(cur)
    return paddle.concat(outs, axis=-1)


def _np_collapse(labels, blank):
    out, prev = [], None
    for lab in labels:
        if lab != prev and lab != blank:
            out.append(lab)
        prev = lab
    return np.asarray(out, np.int64)


@case(args=[(i64([0, 1, 1, 0, 2, 2, 2, 0, 1]), 0), (i64([3, 3, 3]), 0), (i64([0, 0]), None)],
      ref=lambda labels, blank: _np_collapse(labels, -1 if blank is None else blank))
def ctc_collapse_vectorised(frame_labels, blank=0):
    """Collapse repeats and drop blanks without a loop: compare with the shifted sequence."""
    prev = paddle.concat([paddle.full([1], -1, dtype=frame_labels.dtype), frame_labels[:-1]])
    keep = frame_labels != prev
    if blank is not None:
        keep = keep & (frame_labels != blank)
    return paddle.masked_select(frame_labels, keep)


def _np_align(log_probs, target):
    t_len, s_len = log_probs.shape[0], len(target)
    score = np.full((t_len, s_len), -np.inf, np.float32)
    score[0, 0] = log_probs[0, target[0]]
    for t in range(1, t_len):
        for s in range(s_len):
            stay = score[t - 1, s]
            move = score[t - 1, s - 1] if s > 0 else -np.inf
            score[t, s] = max(stay, move) + log_probs[t, target[s]]
    return score[-1, -1]


@case(args=[(np.log(pos(6, 4) / 4), i64([1, 2, 3])), (np.log(pos(5, 4) / 4), i64([2, 2]))],
      ref=_np_align, rtol=1e-5)
def forced_alignment_score(log_probs, target):
    """Viterbi forced alignment of a label sequence to frames (monotonic, no skips)."""
    t_len, s_len = log_probs.shape[0], target.shape[0]
    neg_inf = paddle.full([1], -1e30)
    emit = paddle.gather(log_probs, target, axis=1)  # [T, S]
    score = paddle.concat([emit[0, :1], paddle.full([s_len - 1], -1e30)])
    for t in range(1, t_len):
        move = paddle.concat([neg_inf, score[:-1]])
        score = paddle.maximum(score, move) + emit[t]
    return score[-1]


@case(args=[(rand(2, 7, 3), i64([7, 4]), 2), (rand(2, 6, 3), i64([6, 5]), 3)])
def subsample_lengths(feats, lengths, factor):
    """Frame stacking by `factor` (a conformer's subsampling), lengths divided, ceil mode."""
    b, t, d = feats.shape
    pad = (factor - t % factor) % factor
    if pad:
        feats = paddle.concat([feats, paddle.zeros([b, pad, d], dtype=feats.dtype)], axis=1)
    stacked = feats.reshape([b, -1, factor * d])
    new_lengths = (lengths + factor - 1) // factor
    return stacked, new_lengths
