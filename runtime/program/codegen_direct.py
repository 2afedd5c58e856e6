"""Two ops that small programs run once per call (a loop's counter start, a tensor `if`'s
condition), emitted as the array-module calls their kernels end in, without the kernels'
Python frames (used by `codegen.py`; tests/static/test_codegen_direct.py checks each against
its kernel, bit for bit), and whether a direct call's 0-d result can come back as an array
(`array_out`):

- `full` of a literal with a static shape: `xp.full(shape, value, dtype=...)`, what
  `_full_kernel` calls;
- `mean` over all elements of a float32/float64 tensor of static, non-empty shape, on NumPy:
  `numpy.mean` computes it as `dtype.type(add.reduce(x) / intp(count))` (numpy/_core/
  _methods.py, `_mean`), which is what is emitted, without `_mean`'s own checks.
"""
from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..dtypes import convert_dtype


def full(g, op, block) -> str | None:
    """The source line for a `full` op, or None (its kernel is called)."""
    shape = op.attrs.get("shape")
    if len(op.inputs) != 1 or set(op.attrs) != {"shape", "dtype"} or \
            op.inputs[0].__class__ not in (int, float, bool) or shape is None or \
            any(d.__class__ is not int or d < 0 for d in shape):
        return None
    value = op.inputs[0]
    if value.__class__ is float and not math.isfinite(value):
        return None
    dt = g.const(convert_dtype(op.attrs["dtype"]).np, "D")
    return f"{g.const(backend.XP.full, 'F')}({tuple(shape)!r}, {value!r}, dtype={dt})"


def mean(g, op, block) -> str | None:
    """The source of a `mean` over all elements (before the 0-d fix), or None."""
    if backend.XP is not np or op.attrs.get("axis") is not None or \
            op.attrs.get("keepdim") or set(op.attrs) - {"axis", "keepdim"} or \
            op.inputs[0].__class__ is not str:
        return None
    v = block.var(op.inputs[0])
    shape = v._static_shape
    if v.kind != "tensor" or v.dtype.name not in ("float32", "float64") or -1 in shape or \
            math.prod(shape) == 0 or block.var(op.outputs[0]).dtype != v.dtype:
        return None
    count = g.const(np.intp(math.prod(shape)), "C")
    return (f"{g.const(v.dtype.np.type, 'F')}({g.const(np.add.reduce, 'F')}("
            f"{g.ident(op.inputs[0])}, axis=None) / {count})")


def emitter(make, generic, scalar_result: bool):
    """An EMITTERS entry: the line `make` gives (a NumPy scalar made a 0-d array after it
    where `scalar_result`), else the generic emission."""
    def emit(g, op, block, indent):
        call = make(g, op, block)
        if call is None:
            return generic(g, op, block, indent)
        out = g.ident(op.outputs[0])
        entry = ("op", op, block)
        g.emit(indent, f"{out} = {call}", entry)
        if scalar_result:
            g.emit(indent, f"if {out}.__class__ is not ndarray: {out} = asarray({out})", entry)
    return emit


def _ellipsis_out() -> bool:
    """Whether NumPy's ufuncs take `out=...` (return an array also for 0-d results)."""
    try:
        return np.add(np.asarray(1), 1, out=...).__class__ is np.ndarray
    except TypeError:
        return False


_ELLIPSIS_OUT = _ellipsis_out()


def array_out(fn, op, block) -> bool:
    """`out=...` for a NumPy ufunc with a 0-d result: an array without `asarray` after."""
    return _ELLIPSIS_OUT and backend.XP is np and isinstance(fn, np.ufunc) and \
        block.var(op.outputs[0])._static_shape == ()
