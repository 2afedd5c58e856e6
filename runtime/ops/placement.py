"""`Tensor.to` and `Tensor.cpu` (Paddle's methods): a differentiable copy, cast when a dtype is
asked for, and placed on the device asked for. Methods of both Tensor and the static Variable
(in converted code the program runs on the device it is run on: the copy stays a copy)."""
from __future__ import annotations

import numpy as np

from .. import backend, core
from ..dtypes import DType, convert_dtype
from .math import assign, cast

_DEVICE_PREFIXES = ("cpu", "gpu", "cuda")


def _is_device(arg) -> bool:
    return isinstance(arg, str) and arg.lower().split(":")[0] in _DEVICE_PREFIXES


def _parse(args, kwargs) -> tuple:
    """(device or None, dtype or None) from Paddle's spellings: `to('gpu')`,
    `to('float64')`, `to('cpu', 'float64')`, `to(other_tensor)`, `to(device=, dtype=)`."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("blocking", None)  # (copies here are synchronous)
    if kwargs:
        raise TypeError(f"Tensor.to: unexpected keyword argument(s) {sorted(kwargs)}")
    for arg in args:
        if core.is_tensor(arg):
            dtype = arg.dtype
        elif _is_device(arg):
            device = arg
        elif isinstance(arg, (str, DType, type)):
            dtype = arg
        elif isinstance(arg, bool) or arg is None:
            continue  # Paddle's positional `blocking`
        else:
            raise TypeError(f"Tensor.to: cannot read {arg!r} as a device or a dtype; pass "
                            "'cpu', 'gpu', 'gpu:N', a dtype or a tensor")
    return device, None if dtype is None else convert_dtype(dtype)


def to(x, *args, **kwargs):
    """A copy of `x` with the dtype and on the device asked for (gradients flow through it).

    >>> import runtime as rt
    >>> x = rt.to_tensor([1.5, 2.5])
    >>> x.to("float64").dtype, x.to("cpu", "int64").tolist()
    (rt.float64, [1, 2])
    """
    device, dtype = _parse(args, dict(kwargs))
    if device is not None:
        _check_device(device)
    out = cast(x, dtype) if dtype is not None and dtype != x.dtype else assign(x)
    if device is not None and device.lower() == "cpu":
        _to_host(out)
    return out


def cpu(x):
    """A copy of `x` on the CPU (gradients flow through it).

    >>> import runtime as rt
    >>> rt.to_tensor([1.0]).cpu().place
    'cpu'
    """
    out = assign(x)
    _to_host(out)
    return out


def _check_device(device: str) -> None:
    name = device.lower()
    if name != "cpu" and not backend.is_compiled_with_cuda():
        raise RuntimeError(f"Tensor.to({device!r}): no usable CUDA device (CuPy is not "
                           "installed or sees no GPU); use 'cpu'")


def _to_host(t) -> None:
    """An eager tensor's array moved to host memory (a traced value stays where it runs)."""
    if core.is_eager_tensor(t) and not isinstance(t._data, np.ndarray):
        t._data = backend.to_numpy(t._data)


METHODS = {"to": to, "cpu": cpu}

__all__: list = []
