"""`rt.fft`: discrete Fourier transforms with Paddle's signatures (`fft`, `ifft`, `rfft`,
`irfft`, `fftfreq`, `rfftfreq`), differentiable, eager and in converted code.

`norm` scales the forward transform by 1 ('backward', the default), 1/n ('forward') or
1/sqrt(n) ('ortho'); the inverse takes the other factor. `n` pads the input with zeros or cuts
it along `axis` first. The ops and their gradients are in `runtime/ops/spectral.py`.

>>> import runtime as rt
>>> rt.fft.fftfreq(4, d=0.5).tolist()
[0.0, 0.5, -1.0, -0.5]
>>> rt.real(rt.fft.rfft(rt.to_tensor([1.0, 2.0, 3.0, 4.0]))).tolist()
[10.0, -2.0, -2.0]
"""
from __future__ import annotations

import numpy as np

from .dtypes import DEFAULT_FLOAT, convert_dtype
from .ops.creation import zeros_like
from .ops.registry import OpError
from .ops.spectral import NORMS, complex, fft_c2c, fft_c2r, fft_r2c
from .tensor import to_tensor


def _check(name: str, n, norm: str) -> None:
    if norm not in NORMS:
        raise OpError(f"rt.fft.{name}: norm must be one of {NORMS}, got {norm!r}")
    if n is not None and int(n) < 1:
        raise OpError(f"rt.fft.{name}: n must be at least 1, got {n}")


def _as_complex(x):
    return x if x.dtype.is_complex else complex(x, zeros_like(x))


def fft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """The discrete Fourier transform of `x` (real or complex) along `axis`: complex."""
    _check("fft", n, norm)
    return fft_c2c(_as_complex(x), n, axis, norm, forward=True)


def ifft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """The inverse transform of `x` along `axis`: complex."""
    _check("ifft", n, norm)
    return fft_c2c(_as_complex(x), n, axis, norm, forward=False)


def rfft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """The transform of real `x`: its n // 2 + 1 non-negative frequency bins (complex)."""
    _check("rfft", n, norm)
    if x.dtype.is_complex:
        raise OpError(f"rt.fft.rfft: x must be real, got {x.dtype.name} (use rt.fft.fft)")
    return fft_r2c(x, n, axis, norm)


def irfft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """The real signal of `n` samples (default 2 * (bins - 1)) whose rfft is `x`."""
    _check("irfft", n, norm)
    return fft_c2r(_as_complex(x), n, axis, norm)


def _frequencies(values: np.ndarray, dtype):
    return to_tensor(values, dtype=convert_dtype(dtype) if dtype is not None else DEFAULT_FLOAT)


def fftfreq(n: int, d: float = 1.0, dtype=None, name=None):
    """The frequencies of the `n` bins of `fft`: [0, 1, ..., -(n // 2), ..., -1] / (d * n)."""
    return _frequencies(np.fft.fftfreq(int(n), d), dtype)


def rfftfreq(n: int, d: float = 1.0, dtype=None, name=None):
    """The frequencies of the n // 2 + 1 bins of `rfft`: [0, 1, ..., n // 2] / (d * n).

    >>> import runtime as rt
    >>> rt.fft.rfftfreq(5).tolist()
    [0.0, 0.20000000298023224, 0.4000000059604645]
    """
    return _frequencies(np.fft.rfftfreq(int(n), d), dtype)
