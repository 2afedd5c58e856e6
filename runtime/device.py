"""`rt.device`: Paddle's `paddle.device` namespace. One device is in force at a time
(`runtime/backend.py` holds it): 'cpu' runs NumPy, 'gpu' / 'gpu:N' runs CuPy.

>>> import runtime as rt
>>> rt.device.set_device("cpu")
'cpu'
>>> rt.device.get_device()
'cpu'
"""
from __future__ import annotations

from .backend import _probe_cupy, get_device, is_compiled_with_cuda, set_device


def device_count() -> int:
    """How many CUDA devices CuPy sees (0 without CuPy or a GPU)."""
    cupy = _probe_cupy()
    return 0 if cupy is None else int(cupy.cuda.runtime.getDeviceCount())


__all__ = ["device_count", "get_device", "is_compiled_with_cuda", "set_device"]
