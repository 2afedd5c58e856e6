"""`rt.fft`: the sample frequencies of a discrete Fourier transform (`fftfreq`, `rfftfreq`).

The transforms themselves (`fft`, `ifft`, `rfft`, `irfft`) return or take complex values, and
this runtime has no complex dtype (see `runtime/dtypes.py`): they raise `ComplexUnsupported`
with that reason instead of returning something that is not Paddle's result (a real/imaginary
pair stacked into a real tensor would be silently different). docs/paddle_compat.md lists
them. A real formulation works inside converted code: a power spectrum is
`(x @ cos_basis) ** 2 + (x @ sin_basis) ** 2` with constant DFT bases.

>>> import runtime as rt
>>> rt.fft.fftfreq(4, d=0.5).tolist()
[0.0, 0.5, -1.0, -0.5]
"""
from __future__ import annotations

import numpy as np

from .dtypes import DEFAULT_FLOAT, convert_dtype
from .tensor import to_tensor


class ComplexUnsupported(NotImplementedError):
    """A function whose Paddle result is a complex tensor: this runtime has no complex dtype."""


def refuse_complex(name: str) -> ComplexUnsupported:
    return ComplexUnsupported(
        f"{name}: Paddle's result (or input) is a complex tensor and this runtime has no "
        "complex dtype (complex64/complex128), so it is not computed. Outside converted code "
        "use numpy.fft on x.numpy(); inside it, use a real formulation such as matmuls with "
        "cos/sin DFT bases.")


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


def fft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """Refused: the result is complex (see the module)."""
    raise refuse_complex("rt.fft.fft")


def ifft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """Refused: the result is complex (see the module)."""
    raise refuse_complex("rt.fft.ifft")


def rfft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """Refused: the result is complex (see the module)."""
    raise refuse_complex("rt.fft.rfft")


def irfft(x, n=None, axis: int = -1, norm: str = "backward", name=None):
    """Refused: the input is complex (see the module)."""
    raise refuse_complex("rt.fft.irfft")
