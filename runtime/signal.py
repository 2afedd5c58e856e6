"""`rt.signal.stft` / `istft` at Paddle's signatures. Both need complex tensors (the STFT is
complex), which this runtime does not have (see `runtime/fft.py`): they raise
`ComplexUnsupported` with the reason; docs/paddle_compat.md lists them."""
from __future__ import annotations

from .fft import ComplexUnsupported, refuse_complex  # noqa: F401


def stft(x, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool = True,
         name=None):
    """Refused: the short-time Fourier transform is complex [..., n_fft // 2 + 1, frames]."""
    raise refuse_complex("rt.signal.stft")


def istft(x, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,
          normalized: bool = False, onesided: bool = True, length=None,
          return_complex: bool = False, name=None):
    """Refused: its input is a complex STFT."""
    raise refuse_complex("rt.signal.istft")
