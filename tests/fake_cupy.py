"""A CPU stand-in for CuPy that is as strict as CuPy about host arrays (tests only).

`runtime` promises that every kernel runs on CuPy when `rt.set_device('gpu')`. Without a GPU
that promise can still be checked where it usually breaks: a kernel that makes a host array
(`np.zeros`, `np.asarray`, ...) or hands a device array to NumPy. This module computes with
NumPy, but its arrays are `ndarray` objects that are NOT `numpy.ndarray`, and it refuses
mixing the way CuPy does:

- `np.asarray(device_array)` raises TypeError (CuPy: "Implicit conversion to a NumPy array is
  not allowed"); `.get()` / `asnumpy` are the explicit ways to the host.
- every function, ufunc and operator given a `numpy.ndarray` operand raises TypeError (CuPy:
  "Unsupported type <class 'numpy.ndarray'>"); `asarray`/`array` and index arrays accept host
  data, as CuPy's do.
- NumPy functions called on device arrays dispatch here (`__array_function__` /
  `__array_ufunc__`), as they do for CuPy arrays, except the ones CuPy lacks (`MISSING`).
- dtypes CuPy lacks (object, strings, and ml_dtypes bfloat16, which CuPy supports only from
  version 14) raise TypeError on creation.

What it cannot see: CuPy's own numerical differences, kernel launch errors, memory limits and
speed. Those need the real GPU check (benchmarks/gpu_check.sh).

>>> import fake_cupy as cp
>>> a = cp.arange(3)
>>> isinstance(a, cp.ndarray), type(cp.asnumpy(a * 2)).__name__
(True, 'ndarray')
"""
from __future__ import annotations

import contextlib
import functools
import types

import numpy as np

# NumPy callables with no CuPy counterpart that kernel code could plausibly reach for.
MISSING = frozenset({
    "frompyfunc", "nditer", "ndindex", "ndenumerate", "errstate", "seterr", "geterr",
    "iterable", "asfarray", "piecewise", "busday_count", "datetime_as_string", "fromfunction",
    "fromiter", "fromregex", "genfromtxt", "loadtxt", "savetxt", "save", "load", "memmap",
    "sliding_window_view",
})

_HOST_INPUTS_OK = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray"})


def _check_dtype(dtype) -> None:
    if dtype is None:
        return
    dt = np.dtype(dtype)
    if dt.kind not in "biufc":
        raise TypeError(f"Unsupported type {dt} (CuPy has no {dt.name} arrays)")


def _unwrap(obj, host_ok: bool = False):
    """NumPy views of device arrays inside `obj`; host ndarrays refused unless `host_ok`."""
    if isinstance(obj, ndarray):
        return obj._a
    if isinstance(obj, np.ndarray):
        if host_ok:
            return obj
        raise TypeError(f"Unsupported type {type(obj)} (a host numpy array reached a device "
                        f"function; shape {list(obj.shape)}, dtype {obj.dtype})")
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(x, host_ok) for x in obj)
    if isinstance(obj, dict):
        return {k: _unwrap(v, host_ok) for k, v in obj.items()}
    return obj


def _wrap(obj):
    if isinstance(obj, np.ndarray):
        _check_dtype(obj.dtype)
        return ndarray(obj)
    if isinstance(obj, tuple):
        return tuple(_wrap(x) for x in obj)
    if isinstance(obj, list) and obj and all(isinstance(x, np.ndarray) for x in obj):
        return [_wrap(x) for x in obj]
    if isinstance(obj, np.generic) and not isinstance(obj, np.bool_):
        # CuPy reductions return 0-d device arrays, never host scalars
        return ndarray(np.asarray(obj))
    if isinstance(obj, np.bool_):
        return ndarray(np.asarray(obj))
    return obj


def _device_fn(fn, name: str, host_ok: bool = False):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if name in MISSING:
            raise AttributeError(f"module 'cupy' has no attribute '{name}'")
        _check_dtype(kwargs.get("dtype"))
        return _wrap(fn(*_unwrap(args, host_ok), **_unwrap(kwargs, host_ok)))
    return call


class ndarray:
    """A device array: NumPy storage, CuPy's rules about the host."""

    __slots__ = ("_a",)
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, a: np.ndarray):
        object.__setattr__(self, "_a", a)

    # -- the host boundary -----------------------------------------------------------------
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def get(self, *args, **kwargs) -> np.ndarray:
        return self._a.copy()

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self._a.shape, "typestr": self._a.dtype.str, "version": 3,
                "data": (self._a.ctypes.data, False), "strides": None}

    # -- NumPy protocols (CuPy implements both) --------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at":
            getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
            return None
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types_, args, kwargs):
        if func.__name__ in MISSING:
            return NotImplemented
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    # -- attributes ------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: ndarray(self._a.T))
    real = property(lambda self: ndarray(self._a.real))
    imag = property(lambda self: ndarray(self._a.imag))

    def __getattr__(self, name):
        if name.startswith("__"):  # __array_interface__ & co. would hand NumPy the host buffer
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if callable(attr):
            return _device_fn(attr, name)
        return _wrap(attr)

    def astype(self, dtype, *args, **kwargs):
        _check_dtype(dtype)
        return ndarray(self._a.astype(dtype, *args, **kwargs))

    def tolist(self):
        return self._a.tolist()

    def item(self, *args):
        return self._a.item(*args)

    # -- indexing: CuPy accepts host index arrays and host values --------------------------
    def __getitem__(self, index):
        return _wrap(self._a[_unwrap(index, host_ok=True)])

    def __setitem__(self, index, value):
        self._a[_unwrap(index, host_ok=True)] = _unwrap(value, host_ok=True)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(x) for x in self._a)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __index__(self):
        return self._a.__index__()

    def __complex__(self):
        return complex(self._a)

    def __repr__(self):
        return "fake_cupy." + repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __dlpack__(self, *args, **kwargs):
        raise TypeError("fake_cupy arrays do not export DLPack")


def _operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace(ufunc):
    def op(self, other):
        ufunc(self, other, out=(self,))
        return self
    return op


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                   ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
                   ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor),
                   ("lshift", np.left_shift), ("rshift", np.right_shift)]:
    setattr(ndarray, f"__{_name}__", _operator(_uf))
    setattr(ndarray, f"__r{_name}__", _operator(_uf, reflected=True))
    setattr(ndarray, f"__i{_name}__", _inplace(_uf))
for _name, _uf in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    setattr(ndarray, f"__{_name}__", _operator(_uf))
for _name, _uf in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert)]:
    setattr(ndarray, f"__{_name}__", lambda self, _uf=_uf: _uf(self))
ndarray.__divmod__ = lambda self, other: np.divmod(self, other)


class _Ufunc:
    """`cupy.<ufunc>`: device results even from scalar inputs, host arrays refused."""

    def __init__(self, ufunc: np.ufunc):
        self._uf = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        _check_dtype(kwargs.get("dtype"))
        return _wrap(self._uf(*_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, name):
        attr = getattr(self._uf, name)
        return _device_fn(attr, name) if callable(attr) else attr


class _Namespace(types.ModuleType):
    """`numpy.<sub>` with CuPy's rules: `cupy.linalg`, `cupy.lib.stride_tricks`, ..."""

    def __init__(self, name: str, source):
        super().__init__(name)
        self._source = source

    def __getattr__(self, name):
        if name.startswith("__") or name in MISSING:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")
        attr = getattr(self._source, name)
        if isinstance(attr, types.ModuleType):
            return _Namespace(f"{self.__name__}.{name}", attr)
        if isinstance(attr, type) or not callable(attr):
            return attr  # dtypes, constants
        if isinstance(attr, np.ufunc):
            return _Ufunc(attr)
        return _device_fn(attr, name, host_ok=name in _HOST_INPUTS_OK)


class _Device:
    def __init__(self, index: int = 0):
        self.id = index

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        pass


class _Module(_Namespace):
    ndarray = ndarray
    cuda = types.SimpleNamespace(Device=_Device)

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def asnumpy(a) -> np.ndarray:
        return a.get() if isinstance(a, ndarray) else np.asarray(a)

    @staticmethod
    def get_array_module(*arrays):
        return FAKE if any(isinstance(a, ndarray) for a in arrays) else np

    def asarray(self, a, dtype=None, order=None):
        _check_dtype(dtype)
        if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        data = np.asarray(_unwrap(a, host_ok=True), dtype=dtype, order=order)
        _check_dtype(data.dtype)
        return ndarray(data)

    def array(self, a, dtype=None, copy=True, order="K", ndmin=0):
        _check_dtype(dtype)
        data = np.array(_unwrap(a, host_ok=True), dtype=dtype, copy=copy, order=order,
                        ndmin=ndmin)
        _check_dtype(data.dtype)
        return ndarray(data)


FAKE = _Module("fake_cupy", np)


@contextlib.contextmanager
def installed(monkeypatch=None):
    """Make `runtime.backend` see FAKE as an available CuPy, and select 'gpu' inside."""
    from runtime import backend

    saved = (backend._cupy, backend._cupy_probed, backend.XP, backend.DEVICE)
    backend._cupy, backend._cupy_probed = FAKE, True
    try:
        backend.set_device("gpu")
        yield FAKE
    finally:
        backend._cupy, backend._cupy_probed, backend.XP, backend.DEVICE = saved


def __getattr__(name):
    return getattr(FAKE, name)
