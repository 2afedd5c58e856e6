"""Data types: one `DType` object per supported type, equal to its name.

`rt.float32 == 'float32'` and `x.dtype == 'float32'` are both true. bfloat16 comes from
`ml_dtypes` because NumPy has none; ml_dtypes is imported when bfloat16's NumPy dtype is first
needed (`rt.bfloat16.np`, or an array of it met), since importing it costs more than NumPy. Promotion follows Paddle: a Python scalar never widens a
tensor (`f16_tensor * 2.0` stays float16), an integer tensor meeting a Python float becomes the
default float type (float32), and two tensors promote like NumPy.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np

from . import core


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


class _DeferredDType(DType):
    """A DType whose NumPy dtype comes from `module`, imported on first use of `.np` (the
    slot stays empty until then, so reading `.np` of every other DType costs nothing more)."""

    __slots__ = ("attr", "module")

    def __init__(self, name: str, module: str, attr: str, short: str, itemsize: int):
        self.name, self.short, self.kind, self.itemsize = name, short, "f", itemsize
        self.module, self.attr = module, attr

    def __getattr__(self, attr):
        if attr != "np":
            raise AttributeError(attr)
        self.np = np.dtype(getattr(importlib.import_module(self.module), self.attr))
        _register(self)
        return self.np


float16 = DType("float16", np.float16, "f16")
bfloat16 = _DeferredDType("bfloat16", "ml_dtypes", "bfloat16", "bf16", 2)
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
_BY_NP: dict = {}
_BY_PY = {bool: bool_, int: int64, float: float32}
# The NumPy dtypes (and scalar types) of ALL and FLOATS, as far as loaded: sets that grow when a
# deferred dtype loads, which modules keep for membership tests on the hot path.
NP_ALL: set = set()
NP_FLOATS: set = set()
# NumPy scalar types a Tensor may wrap: those of the loaded dtypes and NumPy's other numbers
NP_SCALAR_TYPES: set = {np.dtype(c).type for c in "?bhilqBHILQefdgFD"}


def _register(d: DType) -> None:
    _BY_NP[d.np] = d
    NP_ALL.add(d.np)
    NP_SCALAR_TYPES.add(d.np.type)
    if d in FLOATS:
        NP_FLOATS.add(d.np)


for _d in ALL:
    if not isinstance(_d, _DeferredDType):
        _register(_d)


def _load_deferred() -> bool:
    """Load the deferred dtypes whose module someone imported (an array of one may exist)."""
    found = False
    for d in ALL:
        if isinstance(d, _DeferredDType) and d.module in sys.modules and d not in _BY_NP.values():
            d.np  # noqa: B018  (loads it)
            found = True
    return found

DEFAULT_FLOAT = float32  # the default of a new thread; `default_float()` is the one in force
_MODE = core.mode_state()


def default_float() -> DType:
    """The floating dtype creation ops and new parameters use in this thread."""
    return _BY_NAME[_MODE.default_float]


def set_default_dtype(d) -> None:
    """Make `d` (float16, bfloat16, float32 or float64) the dtype that creation ops, Python
    floats given to `to_tensor` and new Layers' parameters get, in this thread (Paddle's
    `paddle.set_default_dtype`). Converted functions trace again after a change.

    >>> import runtime as rt
    >>> rt.set_default_dtype("float64")
    >>> rt.zeros([2]).dtype, rt.to_tensor(1.5).dtype
    (rt.float64, rt.float64)
    >>> rt.set_default_dtype("float32")
    """
    dt = convert_dtype(d)
    if dt not in FLOATS:
        raise TypeError(f"set_default_dtype: the default dtype must be one of "
                        f"{[f.name for f in FLOATS]}, got {dt.name}")
    _MODE.default_float = dt.name


def get_default_dtype() -> str:
    """The name of this thread's default floating dtype ('float32' unless changed)."""
    return _MODE.default_float


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
        if found is None and _load_deferred():
            found = _BY_NP.get(np.dtype(d))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"unsupported dtype {d!r}; expected one of {[x.name for x in ALL]}")
    return found


def of_array(a) -> DType:
    """The DType of a NumPy/CuPy array."""
    try:
        return _BY_NP[a.dtype]
    except KeyError:
        if not _load_deferred():
            raise
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
