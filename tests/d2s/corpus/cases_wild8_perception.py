"""2025-26 perception post-processing, written as those repos write it: multi-object tracking
(SORT/ByteTrack-style IoU matching loops, track life cycles with hit/miss counters kept on
`self.` and in dicts, a two-stage high/low score association), OCR post-processing (CTC
greedy decoding with a blank and repeats, DBNet box scoring with an unclip ratio, a text-line
merger), audio DSP (STFT framing with a Hann window, mel filter banks built from a config
dict, voice activity detection with a hangover counter, pitch by autocorrelation with a
voiced/unvoiced flag) and stereo / optical-flow cost volumes (a disparity loop with
`for ... else`, a coarse-to-fine flow refinement that stops when the update is small)."""
from __future__ import annotations

import math

import numpy as np

import runtime as torch
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand

# ---- tracking -------------------------------------------------------------------------------


def box_iou(a, b):
    """IoU of every box of `a` ([N, 4] x1y1x2y2) with every box of `b` ([M, 4])."""
    lt = torch.maximum(a[:, None, :2], b[None, :, :2])
    rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clip(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a[:, None] + area_b[None, :] - inter + 1e-9)


def _np_iou(a, b):
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    aa = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    ab = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (aa[:, None] + ab[None, :] - inter + 1e-9)


def boxes(n, lo=0.0, hi=60.0):
    """`n` random x1y1x2y2 boxes with sides between 5 and 15."""
    xy = rand(n, 2, lo=lo, hi=hi)
    return np.concatenate([xy, xy + rand(n, 2, lo=5, hi=15)], 1)


TRACKS = f32([[0, 0, 10, 10], [20, 20, 30, 30], [50, 50, 60, 60]])
DETS_NEAR = f32([[1, 1, 11, 11], [21, 19, 31, 29], [49, 51, 59, 61]])
DETS_FAR = f32([[100, 100, 110, 110], [21, 19, 31, 29], [200, 0, 210, 10]])
DETS_NONE = f32([[300, 300, 310, 310], [400, 400, 410, 410], [500, 0, 510, 10]])


def _np_greedy_match(tracks, dets, thr):
    iou = _np_iou(tracks, dets).astype(np.float32)
    matches = np.full(tracks.shape[0], -1, np.int64)
    n = 0
    for _ in range(min(iou.shape)):
        best = iou.max()
        if best < thr:
            break
        flat = int(iou.argmax())
        t, d = flat // iou.shape[1], flat % iou.shape[1]
        matches[t] = d
        iou[t, :] = -1.0
        iou[:, d] = -1.0
        n += 1
    return matches, n


@case(args=[(TRACKS, DETS_NEAR, 0.3), (TRACKS, DETS_FAR, 0.3), (TRACKS, DETS_NONE, 0.3)],
      ref=_np_greedy_match, batch=lambda b: (boxes(b), boxes(4)))
def greedy_iou_matching(tracks, dets, iou_threshold=0.3):
    """SORT without Hungarian: repeatedly take the best remaining pair until it is under the
    threshold; rows and columns used are knocked out with -1."""
    iou = box_iou(tracks, dets)
    matches = torch.full([tracks.shape[0]], -1, dtype="int64")
    num_matched = 0
    for _ in range(min(iou.shape)):
        best = iou.max()
        if best < iou_threshold:
            break
        flat = iou.argmax()
        t, d = flat // iou.shape[1], flat % iou.shape[1]
        matches[t] = d
        iou[t, :] = -1.0
        iou[:, d] = -1.0
        num_matched += 1
    return matches, num_matched


class TrackLifecycle(nn.Layer):
    """ByteTrack's track states on the module: hits and misses per track (buffers), a frame
    counter (a Python int), tracks confirmed after `min_hits` and removed after `max_age`."""

    def __init__(self, num_tracks=3, min_hits=1, max_age=0):
        super().__init__()
        self.cfg = {"min_hits": min_hits, "max_age": max_age, "iou": 0.3}
        self.register_buffer("hits", torch.zeros([num_tracks], dtype="int64"))
        self.register_buffer("misses", torch.zeros([num_tracks], dtype="int64"))
        self.frame_id = 0

    def forward(self, tracks, dets):
        self.frame_id += 1
        iou = box_iou(tracks, dets)
        best = iou.max(axis=1)
        matched = best > self.cfg["iou"]
        hits = torch.where(matched, self.hits + 1, torch.zeros_like(self.hits))
        misses = torch.where(matched, torch.zeros_like(self.misses), self.misses + 1)
        confirmed = hits >= self.cfg["min_hits"]
        alive = misses <= self.cfg["max_age"]
        if not bool(alive.all()):
            status = "pruned"
        elif confirmed.any():
            status = "tracking"
        else:
            status = "tentative"
        return {"confirmed": confirmed, "alive": alive, "status": status,
                "n_conf": int(confirmed.sum())}


case(args=[(TRACKS, DETS_NEAR), (TRACKS, DETS_FAR), (TRACKS, DETS_NONE)])(TrackLifecycle)


def _np_two_stage(tracks, dets, scores, high, low, thr):
    iou = _np_iou(tracks, dets)
    assigned = np.full(tracks.shape[0], -1, np.int64)
    used = np.zeros(dets.shape[0], bool)
    stages = []
    for name, keep in (("high", scores >= high), ("low", (scores >= low) & (scores < high))):
        if not keep.any():
            continue
        for t in range(tracks.shape[0]):
            if assigned[t] >= 0:
                continue
            cand = np.where(keep & ~used, iou[t], -1.0)
            d = int(cand.argmax())
            if cand[d] > thr:
                assigned[t] = d
                used[d] = True
        stages.append(name)
    return assigned, stages


@case(args=[(TRACKS, DETS_NEAR, f32([0.9, 0.8, 0.2]), 0.6, 0.1, 0.3),
            (TRACKS, DETS_NEAR, f32([0.05, 0.05, 0.05]), 0.6, 0.1, 0.3),
            (TRACKS, DETS_FAR, f32([0.3, 0.2, 0.9]), 0.6, 0.1, 0.3)],
      batch=lambda b: (boxes(b), DETS_NEAR, f32([0.9, 0.3, 0.05])))
def bytetrack_two_stage_association(tracks, dets, scores, high=0.6, low=0.1, thr=0.3):
    """ByteTrack: associate high-score detections first, then the low ones with the tracks
    left; the stages that ran are logged in a Python list."""
    iou = box_iou(tracks, dets)
    assigned = torch.full([tracks.shape[0]], -1, dtype="int64")
    used = torch.zeros([dets.shape[0]], dtype="bool")
    stages = []
    for name, keep in (("high", scores >= high), ("low", (scores >= low) & (scores < high))):
        if not keep.any():
            continue
        for t in range(tracks.shape[0]):
            if assigned[t] >= 0:
                continue
            cand = torch.where(keep & ~used, iou[t], torch.full_like(iou[t], -1.0))
            d = cand.argmax()
            if cand[d] > thr:
                assigned[t] = d
                used[d] = True
        stages.append(name)
    return assigned, stages


class KalmanBoxPredictor:
    """A constant-velocity box predictor kept as a plain object (not a Layer), as tracking
    repos write their `Track` classes: the age counter and the velocity are its fields."""

    def __init__(self, box):
        self.box = box
        self.velocity = torch.zeros([4])
        self.age = 0
        self.time_since_update = 0

    def predict(self):
        self.box = self.box + self.velocity
        self.age += 1
        self.time_since_update += 1
        return self.box

    def update(self, det, alpha=0.5):
        if box_iou(self.box[None], det[None])[0, 0] > 0.1:
            self.velocity = alpha * (det - self.box) + (1 - alpha) * self.velocity
            self.box = det
            self.time_since_update = 0
        return self.box


@case(args=[(f32([0, 0, 10, 10]), f32([[1, 1, 11, 11], [2, 2, 12, 12], [3, 3, 13, 13]])),
            (f32([0, 0, 10, 10]), f32([[1, 1, 11, 11], [90, 90, 99, 99], [2, 2, 12, 12]]))],
      batch=lambda b: (f32([0, 0, 10, 10]), boxes(b, 0.0, 3.0)))
def track_with_predictor_object(first_box, detections):
    """A per-frame loop over detections with a plain Track object: predict, then update when
    the detection overlaps; the object's Python counters are returned."""
    trk = KalmanBoxPredictor(first_box)
    for det in detections:
        trk.predict()
        trk.update(det)
    return trk.box, trk.velocity, trk.age, trk.time_since_update


@case(args=[(f32([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1]]), 0.5),
            (f32([[0.3, 0.2, 0.1], [0.2, 0.1, 0.4]]), 0.5),
            (f32([[0.9, 0.8, 0.0], [0.6, 0.7, 0.1]]), 0.5)])
def track_status_summary(score_matrix, threshold):
    """A log line per frame: counts of matched and lost tracks as Python ints in an f-string,
    the worst track's index in a dict."""
    best = score_matrix.max(axis=1)
    n_matched = int((best > threshold).sum())
    n_lost = score_matrix.shape[0] - n_matched
    summary = {"matched": n_matched, "lost": n_lost}
    if n_lost > 0:
        summary["worst"] = int(best.argmin())
    summary["msg"] = f"{n_matched} matched / {n_lost} lost"
    return summary


# ---- OCR post-processing -------------------------------------------------------------------
CHARSET = "-abcdefgh"  # index 0 is the CTC blank


def _np_ctc_greedy(logits, blank=0):
    ids = logits.argmax(-1)
    out, prev = [], -1
    for i in ids.tolist():
        if i != prev and i != blank:
            out.append(i)
        prev = i
    return np.asarray(out, np.int64) if out else np.zeros([0], np.int64)


def _ctc_logits(path):
    x = np.full((len(path), len(CHARSET)), -2.0, np.float32)
    for t, i in enumerate(path):
        x[t, i] = 3.0
    return x


@case(args=[(_ctc_logits([1, 1, 0, 2, 2, 3]),), (_ctc_logits([0, 0, 0, 0, 0, 0]),),
            (_ctc_logits([4, 0, 4, 4, 0, 5]),)])
def ctc_greedy_text(logits):
    """PaddleOCR's CTCLabelDecode: argmax per step, drop repeats and blanks, join the chars
    into a string and a mean confidence (a Python float)."""
    probs = F.softmax(logits, axis=-1)
    ids = probs.argmax(axis=-1)
    conf = probs.max(axis=-1)
    keep = torch.ones_like(ids, dtype="bool")
    keep[1:] = ids[1:] != ids[:-1]
    keep = keep & (ids != 0)
    chars = ids.masked_select(keep)
    if chars.shape[0] == 0:
        return "", 0.0
    text = "".join(CHARSET[int(c)] for c in chars)
    return text, float(conf.masked_select(keep).mean())


@case(args=[(_ctc_logits([1, 1, 0, 2, 2, 3]),), (_ctc_logits([0, 0, 0, 0, 0, 0]),),
            (_ctc_logits([4, 0, 4, 4, 0, 5]),)], ref=_np_ctc_greedy,
      batch=lambda b: (_ctc_logits([(3 * i) % 4 for i in range(b)]),))
def ctc_collapse_loop(logits, blank=0):
    """The loop form of the same decoder (as in many CRNN repos): a Python list of ids grown
    while walking the time steps, turned into a tensor at the end."""
    ids = logits.argmax(axis=-1)
    out = []
    prev = -1
    for t in range(ids.shape[0]):
        cur = ids[t]
        if cur != prev and cur != blank:
            out.append(cur)
        prev = cur
    if len(out) == 0:
        return torch.zeros([0], dtype="int64")
    return torch.stack(out)


def _np_box_score(prob, boxes, thresh):
    scores, keep = [], []
    for i, (x0, y0, x1, y1) in enumerate(boxes.astype(np.int64).tolist()):
        s = prob[y0:y1, x0:x1].mean()
        scores.append(s)
        if s >= thresh:
            keep.append(i)
    return np.asarray(scores, np.float32), keep


PROB = np.zeros((8, 8), np.float32)
PROB[1:4, 1:6] = 0.9
PROB[5:7, 2:7] = 0.4


@case(args=[(PROB, f32([[1, 1, 6, 4], [2, 5, 7, 7]]), 0.6),
            (PROB * 0.5, f32([[1, 1, 6, 4], [2, 5, 7, 7]]), 0.6),
            (PROB, f32([[0, 0, 2, 2], [1, 1, 6, 4]]), 0.3)], ref=_np_box_score)
def db_box_score_fast(prob_map, boxes, box_thresh=0.6):
    """DBNet's `box_score_fast`: the mean probability inside each candidate box; the indices
    of the boxes at or over `box_thresh` are kept in a Python list."""
    scores, keep = [], []
    for i, box in enumerate(boxes):
        x0, y0, x1, y1 = [int(v) for v in box]
        s = prob_map[y0:y1, x0:x1].mean()
        scores.append(s)
        if s < box_thresh:
            continue
        keep.append(i)
    return torch.stack(scores), keep


@case(args=[(f32([[0, 0, 10, 4], [11, 0, 20, 4], [40, 0, 50, 4]]), 3.0),
            (f32([[0, 0, 10, 4], [30, 0, 40, 4], [60, 0, 70, 4]]), 3.0),
            (f32([[0, 0, 10, 4], [11, 0, 20, 4], [21, 0, 30, 4]]), 3.0)])
def merge_text_boxes_into_lines(boxes, gap):
    """Merge horizontally adjacent word boxes into lines (boxes sorted by x): a running line
    box extended while the gap is small, closed otherwise; lines are a Python list."""
    lines = []
    cur = boxes[0]
    for i in range(1, boxes.shape[0]):
        b = boxes[i]
        if b[0] - cur[2] <= gap:
            cur = torch.concat([torch.minimum(cur[:2], b[:2]), torch.maximum(cur[2:], b[2:])])
        else:
            lines.append(cur)
            cur = b
    lines.append(cur)
    return torch.stack(lines), len(lines)


def _np_unclip(boxes, ratio, min_size=3):
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    area, peri = w * h, 2 * (w + h)
    d = area * ratio / np.maximum(peri, 1e-6)
    out = boxes + np.stack([-d, -d, d, d], 1)
    if min_size is None:
        return out.astype(np.float32)
    return np.where((np.minimum(w, h) < min_size)[:, None], boxes, out).astype(np.float32)


@case(args=[(f32([[0, 0, 10, 4], [5, 5, 6, 6]]), 1.5),
            (f32([[0, 0, 10, 4], [0, 0, 8, 8]]), 2.0, None)], ref=_np_unclip,
      batch=lambda b: (boxes(b),))
def db_unclip_boxes(boxes, unclip_ratio=1.5, min_size=3):
    """DB's unclip (a polygon offset by area * ratio / perimeter), axis-aligned; tiny boxes
    (min side < `min_size`) are left as they are."""
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    distance = w * h * unclip_ratio / torch.clip(2 * (w + h), min=1e-6)
    grown = boxes + torch.stack([-distance, -distance, distance, distance], axis=1)
    if min_size is None:
        return grown
    small = torch.minimum(w, h) < min_size
    return torch.where(small.unsqueeze(-1), boxes, grown)


@case(args=[(rand(1, 4, 6, lo=0, hi=1), 2.0), (rand(1, 4, 12, lo=0, hi=1), 2.0)], atol=1e-5)
def resize_norm_rec_img(img, max_wh_ratio, img_h=4):
    """PaddleOCR's `resize_norm_img` for recognition: resize to the target height keeping the
    aspect ratio up to the batch's widest ratio, normalise to [-1, 1], right-pad with zeros;
    the valid width ratio is a Python float."""
    c, h, w = img.shape
    img_w = int(img_h * max_wh_ratio)
    ratio = w / float(h)
    if math.ceil(img_h * ratio) > img_w:
        resized_w = img_w
    else:
        resized_w = int(math.ceil(img_h * ratio))
    resized = F.interpolate(img.unsqueeze(0), size=[img_h, resized_w], mode="bilinear",
                            align_corners=False)[0]
    resized = (resized - 0.5) / 0.5
    padding = torch.zeros([c, img_h, img_w])
    padding[:, :, :resized_w] = resized
    return padding, resized_w / img_w


# ---- audio DSP ----------------------------------------------------------------------------
def _np_frames(x, n_fft, hop, center):
    if center:
        x = np.pad(x, (n_fft // 2, n_fft // 2), mode="reflect")
    n = 1 + (x.shape[0] - n_fft) // hop
    win = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)).astype(np.float32)
    return np.stack([x[i * hop:i * hop + n_fft] * win for i in range(n)]).astype(np.float32)


def hann_window(n):
    return 0.5 - 0.5 * torch.cos(2 * math.pi * torch.arange(n, dtype="float32") / n)


@case(args=[(rand(32), 8, 4, True), (rand(32), 8, 4, False)], ref=_np_frames, rtol=1e-5,
      atol=1e-5, batch=lambda b: (rand(8 + 4 * b),))
def stft_frames(signal, n_fft=8, hop_length=4, center=True):
    """torchaudio-style framing: reflect padding when `center`, a Hann window, frames stacked
    from a Python list built in a loop over the frame count."""
    if center:
        pad = n_fft // 2
        left = signal[1:pad + 1].flip([0])
        right = signal[-pad - 1:-1].flip([0])
        signal = torch.concat([left, signal, right])
    n_frames = 1 + (signal.shape[0] - n_fft) // hop_length
    window = hann_window(n_fft)
    frames = []
    for i in range(n_frames):
        frames.append(signal[i * hop_length:i * hop_length + n_fft] * window)
    return torch.stack(frames)


MEL_CFG = {"sr": 16000, "n_fft": 16, "n_mels": 4, "fmin": 0.0, "fmax": None, "norm": "slaney"}


def _hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def _mel_to_hz(m):
    return 700.0 * (10 ** (m / 2595.0) - 1.0)


def mel_filterbank(cfg):
    """The filters built from the config dict with Python math (librosa's HTK formula)."""
    fmax = cfg["fmax"] or cfg["sr"] / 2
    n_freqs = cfg["n_fft"] // 2 + 1
    mels = np.linspace(_hz_to_mel(cfg["fmin"]), _hz_to_mel(fmax), cfg["n_mels"] + 2)
    hz = [_mel_to_hz(m) for m in mels]
    freqs = np.linspace(0, cfg["sr"] / 2, n_freqs)
    fb = np.zeros((cfg["n_mels"], n_freqs), np.float32)
    for m in range(cfg["n_mels"]):
        lo, c, hi = hz[m], hz[m + 1], hz[m + 2]
        up = (freqs - lo) / (c - lo)
        down = (hi - freqs) / (hi - c)
        fb[m] = np.maximum(0, np.minimum(up, down))
        if cfg["norm"] == "slaney":
            fb[m] *= 2.0 / (hi - lo)
    return fb


@case(args=[(rand(5, 9, lo=0, hi=2), MEL_CFG, True),
            (rand(5, 9, lo=0, hi=2), dict(MEL_CFG, norm=None, fmax=6000.0), False)],
      rtol=1e-4, atol=1e-6)
def log_mel_spectrogram(power_spec, cfg, log=True):
    """A mel front end: filters built from the config with NumPy, applied with matmul, then
    `log(clamp(x, 1e-10))` when `log`; the top-db clamp is a tensor max."""
    fb = torch.to_tensor(mel_filterbank(cfg))
    mel = torch.matmul(power_spec, fb.t())
    if not log:
        return mel
    logmel = 10.0 * torch.log10(torch.clip(mel, min=1e-10))
    return torch.maximum(logmel, logmel.max() - 80.0)


def _np_vad(energy, thr, hangover):
    out, counter, n_seg, prev = [], 0, 0, False
    for e in energy:
        if e > thr:
            counter = hangover
        elif counter > 0:
            counter -= 1
        active = e > thr or counter > 0
        if active and not prev:
            n_seg += 1
        prev = active
        out.append(active)
    return np.asarray(out), n_seg


@case(args=[(f32([0.1, 0.9, 0.2, 0.1, 0.1, 0.1, 0.8, 0.1]), 0.5, 2),
            (f32([0.1] * 8), 0.5, 2), (f32([0.9, 0.1, 0.1, 0.1, 0.1, 0.9, 0.9, 0.1]), 0.5, 1)],
      ref=_np_vad, batch=lambda b: (rand(b, lo=0, hi=1),))
def vad_with_hangover(frame_energy, threshold=0.5, hangover=2):
    """WebRTC-style VAD smoothing: a hangover counter keeps speech on for a few frames after
    the energy drops; the number of speech segments is a Python int."""
    counter = 0
    flags = []
    n_segments = 0
    prev = False
    for e in frame_energy:
        if e > threshold:
            counter = hangover
        elif counter > 0:
            counter -= 1
        active = e > threshold or counter > 0
        if active and not prev:
            n_segments += 1
        prev = active
        flags.append(active)
    return torch.to_tensor(flags), n_segments


def _np_pitch(x, sr, fmin, fmax, voicing):
    x = x - x.mean()
    ac = np.asarray([np.sum(x[:len(x) - k] * x[k:]) for k in range(len(x))])
    lo, hi = int(sr // fmax), int(sr // fmin)
    lag = lo + int(ac[lo:hi].argmax())
    if ac[lag] / (ac[0] + 1e-9) < voicing:
        return 0.0, False
    return sr / lag, True


SR = 800
T = np.arange(64) / SR


@case(args=[(np.sin(2 * np.pi * 100 * T).astype(np.float32), SR),
            (rand(64) * 0.01, SR), (np.sin(2 * np.pi * 50 * T).astype(np.float32), SR)])
def pitch_by_autocorrelation(frame, sr, fmin=40.0, fmax=200.0, voicing=0.3):
    """A YIN-less pitch tracker: autocorrelation by a Python loop over lags, the best lag in
    the allowed range, unvoiced (0.0, False) when the normalised peak is low."""
    x = frame - frame.mean()
    n = x.shape[0]
    ac = torch.stack([(x[:n - k] * x[k:]).sum() for k in range(n)])
    lo, hi = int(sr // fmax), int(sr // fmin)
    lag = lo + int(ac[lo:hi].argmax())
    if ac[lag] / (ac[0] + 1e-9) < voicing:
        return 0.0, False
    return sr / lag, True


@case(args=[(rand(2, 40), {"preemph": 0.97, "dither": 0.0, "normalize": "per_feature"}),
            (rand(2, 40), {"preemph": None, "dither": 0.0, "normalize": None}),
            (f32(np.zeros((2, 40))), {"preemph": 0.97, "dither": 0.0,
                                      "normalize": "per_feature"})], atol=1e-5)
def nemo_style_preprocess(audio, cfg):
    """NeMo's AudioToMelSpectrogramPreprocessor front: pre-emphasis when configured, then
    per-feature normalisation with a guard for silent input (std 0)."""
    if cfg.get("preemph") is not None:
        audio = torch.concat([audio[:, :1], audio[:, 1:] - cfg["preemph"] * audio[:, :-1]],
                             axis=1)
    if cfg["normalize"] == "per_feature":
        mean = audio.mean(axis=1, keepdim=True)
        std = audio.std(axis=1, keepdim=True)
        if (std < 1e-5).any():
            std = std + 1e-5
        audio = (audio - mean) / std
    return audio


# ---- stereo and optical flow ---------------------------------------------------------------
def _np_cost_volume(left, right, max_disp):
    C, H, W = left.shape
    vol = np.zeros((max_disp, H, W), np.float32)
    for d in range(max_disp):
        if d == 0:
            vol[d] = (left * right).mean(0)
        else:
            vol[d, :, d:] = (left[:, :, d:] * right[:, :, :-d]).mean(0)
    return vol


@case(args=[(rand(3, 4, 6), rand(3, 4, 6), 3), (rand(3, 4, 6), rand(3, 4, 6), 1)],
      ref=_np_cost_volume, batch=None)
def correlation_cost_volume(left, right, max_disp=3):
    """PSMNet/GwcNet's correlation volume: a Python loop over disparities, disparity 0 on its
    own branch, the rest shifted and zero-filled on the left."""
    C, H, W = left.shape
    volume = torch.zeros([max_disp, H, W])
    for d in range(max_disp):
        if d > 0:
            volume[d, :, d:] = (left[:, :, d:] * right[:, :, :-d]).mean(axis=0)
        else:
            volume[d] = (left * right).mean(axis=0)
    return volume


def _np_first_confident(cost, thr):
    for d in range(cost.shape[0]):
        if cost[d].max() > thr:
            return d, True
    return -1, False


@case(args=[(rand(4, 3, lo=0, hi=0.5), 0.9), (f32([[0.1, 0.2], [0.95, 0.1], [0.99, 0]]), 0.9),
            (f32([[0.95, 0.2], [0.1, 0.1]]), 0.9)], ref=_np_first_confident)
def first_confident_disparity(cost, threshold):
    """A search for the first disparity whose best match is confident, written with
    `for ... else` and Python flags, as in hand-rolled stereo matchers."""
    for d in range(cost.shape[0]):
        if cost[d].max() > threshold:
            found = True
            break
    else:
        d = -1
        found = False
    return d, found


class FlowRefiner(nn.Layer):
    """RAFT-style iterative refinement: a small update head applied up to `iters` times,
    stopping early when the mean update magnitude is under `tol`; the iterations used are a
    Python int and every flow estimate is kept in a list (the sequence loss reads them)."""

    def __init__(self, iters=4, tol=1e-3):
        super().__init__()
        self.update = nn.Linear(4, 2)
        self.iters = iters
        self.tol = tol

    def forward(self, feat, flow, tol=None):
        tol = self.tol if tol is None else tol
        predictions = []
        used = 0
        for _ in range(self.iters):
            delta = torch.tanh(self.update(torch.concat([feat, flow], axis=-1))) * 0.1
            flow = flow + delta
            predictions.append(flow)
            used += 1
            if delta.abs().mean() < tol:
                break
        return predictions[-1], used, len(predictions)


case(args=[(rand(3, 2), rand(3, 2)), (rand(3, 2), rand(3, 2), 1.0)],
     batch=lambda b: (rand(b, 2), rand(b, 2)))(FlowRefiner)
