"""Data types: one `DType` object per supported type, equal to its name.

`rt.float32 == 'float32'` and `x.dtype == 'float32'` are both true. bfloat16 comes from
`ml_dtypes` because NumPy has none. Promotion follows Paddle: a Python scalar never widens a
tensor (`f16_tensor * 2.0` stays float16), an integer tensor meeting a Python float becomes the
default float type (float32), and two tensors promote like NumPy.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np


class DType:
    """A tensor element type. Compares equal to itself, its name and its NumPy dtype."""

    __slots__ = ("itemsize", "kind", "name", "np", "short")

    def __init__(self, name: str, np_dtype, short: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.short = short  # the printed form in program text: f32, i64, b1, ...
        self.kind = "b" if name == "bool" else ("f" if short.startswith(("f", "bf")) else
                                                "c" if short.startswith("c") else
                                                ("u" if name == "uint8" else "i"))
        self.itemsize = self.np.itemsize

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        """complex64 / complex128: only the ops of `runtime/ops/spectral.py` differentiate
        through them (see `COMPLEX_GRAD_OPS` there)."""
        return self.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self.kind in "iu"

    def __eq__(self, other):
        if isinstance(other, DType):
            return other is self
        try:
            return convert_dtype(other) is self
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"rt.{self.name}"

    __str__ = __repr__


float16 = DType("float16", np.float16, "f16")
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, "bf16")
float32 = DType("float32", np.float32, "f32")
float64 = DType("float64", np.float64, "f64")
int8 = DType("int8", np.int8, "i8")
int16 = DType("int16", np.int16, "i16")
int32 = DType("int32", np.int32, "i32")
int64 = DType("int64", np.int64, "i64")
uint8 = DType("uint8", np.uint8, "u8")
bool_ = DType("bool", np.bool_, "b1")
complex64 = DType("complex64", np.complex64, "c64")
complex128 = DType("complex128", np.complex128, "c128")

ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64,
       complex128)
FLOATS = (float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({d.short: d for d in ALL})
_BY_NP = {d.np: d for d in ALL}
_BY_PY = {bool: bool_, int: int64, float: float32}

DEFAULT_FLOAT = float32


def convert_dtype(d) -> DType:
    """Any dtype spelling (DType, 'float32', np.float32, np.dtype, Python type) -> DType."""
    if isinstance(d, DType):
        return d
    if isinstance(d, str):
        found = _BY_NAME.get(d)
        if found is None:
            raise ValueError(f"unknown dtype {d!r}; expected one of {[x.name for x in ALL]}")
        return found
    if d in _BY_PY:
        return _BY_PY[d]
    try:
        found = _BY_NP.get(np.dtype(d))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"unsupported dtype {d!r}; expected one of {[x.name for x in ALL]}")
    return found


def of_array(a) -> DType:
    """The DType of a NumPy/CuPy array."""
    return _BY_NP[a.dtype]


_RANK = {bool_: 0, uint8: 1, int8: 1, int16: 2, int32: 3, int64: 4,
         float16: 5, bfloat16: 5, float32: 6, float64: 7, complex64: 8, complex128: 9}


def promote(a: DType, b: DType) -> DType:
    """The result type of a binary op between two tensors of types `a` and `b`."""
    if a is b:
        return a
    if {a, b} == {float16, bfloat16}:
        return float32
    if {a, b} == {uint8, int8}:
        return int16
    if {a, b} == {float64, complex64}:
        return complex128
    return a if _RANK[a] >= _RANK[b] else b


def promote_scalar(t: DType, value) -> DType:
    """The result type of `tensor (of type t) <op> python scalar`: the scalar never widens."""
    if isinstance(value, bool) or t.kind in "fc":
        return t
    if isinstance(value, float):
        return DEFAULT_FLOAT
    if isinstance(value, int) and t is bool_:
        return int64
    return t
