"""`rt.signal.stft` / `istft` with Paddle's signatures: framing by a gather, the window as a
product, the transforms of `rt.fft`, and overlap-add by a summing scatter, so both are
differentiable and work in converted code.

>>> import runtime as rt
>>> spec = rt.signal.stft(rt.randn([2, 64]), n_fft=16, hop_length=4)
>>> spec.shape, spec.dtype
([2, 9, 17], rt.complex64)
>>> rt.signal.istft(spec, n_fft=16, hop_length=4).shape
[2, 64]
"""
from __future__ import annotations

import numpy as np

from . import fft as _fft
from .ops import combine as _combine
from .ops import creation as _creation
from .ops import gather as _gather
from .ops import shape as _shape
from .ops.registry import OpError
from .ops.spectral import real
from .tensor import to_tensor


def _window(window, win_length: int, n_fft: int, dtype, op: str):
    """The window zero-padded on both sides to n_fft (ones if None)."""
    if not 0 < win_length <= n_fft:
        raise OpError(f"{op}: win_length must be in (0, n_fft={n_fft}], got {win_length}")
    if window is None:
        window = _creation.ones([win_length], dtype)
    elif list(window.shape) != [win_length]:
        raise OpError(f"{op}: window has shape {list(window.shape)}; it must be "
                      f"[win_length] = [{win_length}]")
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length - left:
        window = _shape.pad(window, [left, n_fft - win_length - left])
    return window


def _frame_index(n_frames: int, n_fft: int, hop: int):
    """The sample index of every frame's every position, frame-major: [n_frames * n_fft]."""
    starts = np.arange(n_frames)[:, None] * hop
    return to_tensor((starts + np.arange(n_fft)[None, :]).ravel().astype(np.int64))


def stft(x, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool = True,
         name=None):
    """The short-time Fourier transform of real `x` [T] or [B, T]: [..., n_fft // 2 + 1 (or
    n_fft if not onesided), frames], complex. `center` pads n_fft // 2 samples on both sides
    (`pad_mode`); `normalized` scales by 1 / sqrt(n_fft)."""
    hop = hop_length if hop_length is not None else n_fft // 4
    win_length = win_length if win_length is not None else n_fft
    if x.ndim not in (1, 2):
        raise OpError(f"stft: x must be [T] or [B, T], got shape {list(x.shape)}")
    if hop <= 0:
        raise OpError(f"stft: hop_length must be positive, got {hop}")
    if x.dtype.is_complex:
        raise OpError("stft: x must be a real signal (a complex x is not supported)")
    if center:
        x = _shape.pad(x, [n_fft // 2, n_fft // 2], mode=pad_mode)
    length = x.shape[-1]
    if length < 0:
        raise OpError(f"stft: x has shape {list(x.shape)}; the number of samples must be known "
                      "when the program is built (an InputSpec may leave only the batch dim "
                      "None)")
    if length < n_fft:
        raise OpError(f"stft: the signal has {length} samples (after padding), fewer than "
                      f"n_fft={n_fft}")
    n_frames = 1 + (length - n_fft) // hop
    frames = _gather.gather(x, _frame_index(n_frames, n_fft, hop), axis=x.ndim - 1)
    frames = _shape.reshape(frames, list(x.shape[:-1]) + [n_frames, n_fft])
    frames = frames * _window(window, win_length, n_fft, x.dtype, "stft")
    norm = "ortho" if normalized else "backward"
    spec = _fft.rfft(frames, norm=norm) if onesided else _fft.fft(frames, norm=norm)
    perm = list(range(spec.ndim))
    perm[-2:] = perm[-1], perm[-2]
    return _shape.transpose(spec, perm)


def istft(x, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
          normalized: bool = False, onesided: bool = True, length=None,
          return_complex: bool = False, name=None):
    """The signal whose `stft` is `x` [..., freq, frames] (least-squares overlap-add, divided
    by the summed squared window). `length` trims or zero-pads the result."""
    hop = hop_length if hop_length is not None else n_fft // 4
    win_length = win_length if win_length is not None else n_fft
    if return_complex:
        raise OpError("istft: return_complex=True is not supported (a complex signal); "
                      "the real signal is returned with return_complex=False")
    if x.ndim not in (2, 3) or not x.dtype.is_complex:
        raise OpError(f"istft: x must be a complex [freq, frames] or [B, freq, frames], got "
                      f"{x.dtype.name}{list(x.shape)}")
    want = n_fft // 2 + 1 if onesided else n_fft
    if x.shape[-2] != want:
        raise OpError(f"istft: x has {x.shape[-2]} frequency bins; n_fft={n_fft} with "
                      f"onesided={onesided} needs {want}")
    perm = list(range(x.ndim))
    perm[-2:] = perm[-1], perm[-2]
    spec = _shape.transpose(x, perm)  # [..., frames, freq]
    norm = "ortho" if normalized else "backward"
    frames = (_fft.irfft(spec, n=n_fft, norm=norm) if onesided
              else real(_fft.ifft(spec, n=n_fft, norm=norm)))
    w = _window(window, win_length, n_fft, frames.dtype, "istft")
    n_frames = x.shape[-1]
    total = n_fft + hop * (n_frames - 1)
    index = _frame_index(n_frames, n_fft, hop)
    flat = _shape.reshape(frames * w, list(x.shape[:-2]) + [n_frames * n_fft])
    if flat.ndim == 2:  # scatter sums rows: put the samples first
        flat = _shape.transpose(flat, [1, 0])
    signal = _gather.scatter(_creation.zeros([total] + list(flat.shape[1:]), frames.dtype),
                             index, flat, overwrite=False)
    envelope = _gather.scatter(_creation.zeros([total], frames.dtype), index,
                               _shape.reshape(_combine.stack([w * w] * n_frames), [-1]),
                               overwrite=False)
    if signal.ndim == 2:
        signal = _shape.transpose(signal, [1, 0])
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + int(length)
    keep = min(end, total)
    signal = signal[..., start:keep] / envelope[start:keep]
    if end > keep:
        signal = _shape.pad(signal, [0, end - keep])
    return signal
