"""The array module for the current device.

NumPy always works. CuPy is used only when it imports *and* a CUDA device answers: without a
GPU `import cupy` succeeds but the first allocation raises `CUDARuntimeError`, so availability
is probed once, never assumed. Every other module asks this one for `xp`; none imports
numpy-vs-cupy by itself for computation.
"""
from __future__ import annotations

import numpy as np

_cupy = None
_cupy_probed = False
# The hot paths (eager op dispatch, executor compilation) read these two module globals directly.
XP = np
DEVICE = "cpu"


def _probe_cupy():
    """Return the cupy module if it imports and a device is usable, else None (never raises)."""
    global _cupy, _cupy_probed
    if not _cupy_probed:
        _cupy_probed = True
        try:
            import cupy

            if cupy.is_available():
                cupy.zeros(1)  # the first allocation is what fails on a machine without a GPU
                _cupy = cupy
        except Exception:  # noqa: BLE001  (import, CUDA and driver errors all mean "no GPU")
            _cupy = None
    return _cupy


def is_compiled_with_cuda() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    return _probe_cupy() is not None


def set_device(device: str) -> str:
    """Select 'cpu', 'gpu' or 'gpu:N'. Returns the device now in force.

    >>> import runtime as rt
    >>> rt.set_device('cpu')
    'cpu'
    """
    global XP, DEVICE
    name = str(device).lower()
    if name == "cpu":
        XP, DEVICE = np, "cpu"
        return DEVICE
    if name == "gpu" or name.startswith(("gpu:", "cuda")):
        cp = _probe_cupy()
        if cp is None:
            raise RuntimeError(
                f"set_device({device!r}): no usable CUDA device (CuPy is not installed or sees "
                "no GPU). Install the 'gpu' extra on a machine with a GPU, or use 'cpu'."
            )
        index = int(name.split(":")[1]) if ":" in name else 0
        cp.cuda.Device(index).use()
        XP, DEVICE = cp, f"gpu:{index}"
        return DEVICE
    raise ValueError(f"set_device: unknown device {device!r}; expected 'cpu', 'gpu' or 'gpu:N'")


def get_device() -> str:
    return DEVICE


def xp():
    """The array module (numpy or cupy) for the current device."""
    return XP


def to_numpy(a) -> np.ndarray:
    """A NumPy copy-or-view of any array (cupy arrays are copied to the host)."""
    if _cupy is not None and isinstance(a, _cupy.ndarray):
        return _cupy.asnumpy(a)
    return np.asarray(a)


def asarray(data, dtype=None):
    """`data` as an array of the current device (no copy when it already is one)."""
    return XP.asarray(data, dtype=dtype)


def default_device() -> str:
    """'gpu' when CuPy imports and sees a device, else 'cpu' (API.md)."""
    return set_device("gpu" if is_compiled_with_cuda() else "cpu")
