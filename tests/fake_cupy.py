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

CUDA-graph capture (`cuda.Stream.begin_capture` / `end_capture`, `Graph.launch`) is kept as
CUDA keeps it: while a stream captures, every device operation is recorded with the arrays it
reads and writes, and a launch replays those operations on the same arrays and nothing else
(the Python code that issued them does not run again). Reading a device value on the host
(`.get()`, `bool()`, `float()`, `.item()`, printing) and copying host data to the device
(`asarray` of a NumPy array or a Python number) raise during a capture, as a synchronising
call or an upload would invalidate a real one; random draws are recorded as their values
(a captured generator kernel replays one draw).

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
import threading
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


class CaptureError(RuntimeError):
    """What CUDA reports for an operation a capturing stream does not allow."""


class _Capture(threading.local):
    ops = None  # while this thread's current stream captures: the recorded operations
    made: set = set()  # ids of the arrays made by captured operations
    saved: dict = {}  # id -> (array made before the capture and written in it, its contents)


_CAPTURE = _Capture()


def _capturing() -> bool:
    return _CAPTURE.ops is not None


def _refuse(what: str) -> None:
    if _CAPTURE.ops is not None:
        raise CaptureError(f"cudaErrorStreamCaptureUnsupported: {what} is not permitted when "
                           "stream is capturing")


def _has_host_array(obj) -> bool:
    if isinstance(obj, np.ndarray):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_host_array(x) for x in obj)
    if isinstance(obj, dict):
        return any(_has_host_array(x) for x in obj.values())
    return False


def _arrays_of(result) -> list:
    if isinstance(result, np.ndarray):
        return [result]
    if isinstance(result, (tuple, list)):
        return [a for r in result for a in _arrays_of(r)]
    return []


def _run(fn, args, kwargs, *, host_ok=False, replayed=True):
    """`fn` on the NumPy views of `args`; while capturing, also recorded: a launch calls it
    again on the same arrays and writes what it gives into the same result arrays (or, for a
    random draw, `replayed=False`, keeps the values drawn)."""
    ops = _CAPTURE.ops
    if ops is not None and host_ok and (_has_host_array(args) or _has_host_array(kwargs)):
        _refuse("a copy from host memory")
    np_args, np_kwargs = _unwrap(args, host_ok), _unwrap(kwargs, host_ok)
    if ops is not None:
        _keep_before(_written(fn, np_args, np_kwargs))
    result = fn(*np_args, **np_kwargs)
    if ops is not None:
        for made in _arrays_of(result):
            if made.base is None:
                _CAPTURE.made.add(id(made))
        if isinstance(result, np.generic):  # (wrapped as a 0-d device array: that one is kept)
            result = np.asarray(result)
        elif isinstance(result, (bool, int, float, complex)) and \
                getattr(fn, "__name__", "") not in _METADATA:
            _refuse(f"reading a device value on the host ({fn.__name__} gave a "
                    f"{type(result).__name__})")
        if replayed:
            ops.append((fn, np_args, np_kwargs, result))
    return result


# functions of shapes and dtypes only: their Python results read no device memory
_METADATA = frozenset({"ndim", "shape", "size", "result_type", "can_cast", "min_scalar_type",
                       "promote_types", "iscomplexobj", "isrealobj", "isscalar",
                       "broadcast_shapes", "may_share_memory", "shares_memory", "__len__"})


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _written(fn, np_args, np_kwargs) -> list:
    """The arrays an operation writes in place (its `out=`, an item assignment's target)."""
    if fn is _setitem or getattr(fn, "__name__", "") == "at":
        return _arrays_of(np_args[:1])
    return _arrays_of(np_kwargs.get("out"))


def _keep_before(targets) -> None:
    """A capture runs nothing on a real device: arrays made before it and written by captured
    operations get their contents back when it ends (`_Stream.end_capture`)."""
    for t in targets:
        root = _root(t)
        if id(root) not in _CAPTURE.made and id(root) not in _CAPTURE.saved:
            _CAPTURE.saved[id(root)] = (root, root.copy())


def _replay(ops) -> None:
    for fn, args, kwargs, result in ops:
        again = fn(*args, **kwargs)
        if isinstance(again, np.generic):
            again = np.asarray(again)
        for old, new in zip(_arrays_of(result), _arrays_of(again)):
            if old is not new and not np.may_share_memory(old, new):
                old[...] = new


def _device_fn(fn, name: str, host_ok: bool = False, replayed: bool = True):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if name in MISSING:
            raise AttributeError(f"module 'cupy' has no attribute '{name}'")
        _check_dtype(kwargs.get("dtype"))
        return _wrap(_run(fn, args, kwargs, host_ok=host_ok, replayed=replayed))
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
        _refuse("a copy to host memory")
        return self._a.copy()

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self._a.shape, "typestr": self._a.dtype.str, "version": 3,
                "data": (self._a.ctypes.data, False), "strides": None}

    # -- NumPy protocols (CuPy implements both) --------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "at":
            _run(getattr(ufunc, method), inputs, kwargs)
            return None
        return _wrap(_run(getattr(ufunc, method), inputs, kwargs))

    def __array_function__(self, func, types_, args, kwargs):
        if func.__name__ in MISSING:
            return NotImplemented
        return _wrap(_run(func, args, kwargs))

    # -- attributes ------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: ndarray(_run(np.transpose, (self,), {})))
    real = property(lambda self: ndarray(_run(np.real, (self,), {})))
    imag = property(lambda self: ndarray(_run(np.imag, (self,), {})))

    def __getattr__(self, name):
        if name.startswith("__"):  # __array_interface__ & co. would hand NumPy the host buffer
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if callable(attr):
            return _device_fn(attr, name)
        return _wrap(attr)

    def astype(self, dtype, *args, **kwargs):
        _check_dtype(dtype)
        return ndarray(_run(np.ndarray.astype, (self, dtype) + args, kwargs))

    def tolist(self):
        _refuse("a copy to host memory")
        return self._a.tolist()

    def item(self, *args):
        _refuse("a copy to host memory")
        return self._a.item(*args)

    # -- indexing: CuPy accepts host index arrays and host values --------------------------
    def __getitem__(self, index):
        return _wrap(_run(_getitem, (self, index), {}, host_ok=True))

    def __setitem__(self, index, value):
        _run(_setitem, (self, index, value), {}, host_ok=True)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(x) for x in self._a)

    def __bool__(self):
        _refuse("a copy to host memory")
        return bool(self._a)

    def __float__(self):
        _refuse("a copy to host memory")
        return float(self._a)

    def __int__(self):
        _refuse("a copy to host memory")
        return int(self._a)

    def __index__(self):
        _refuse("a copy to host memory")
        return self._a.__index__()

    def __complex__(self):
        _refuse("a copy to host memory")
        return complex(self._a)

    def __repr__(self):
        _refuse("a copy to host memory")
        return "fake_cupy." + repr(self._a)

    def __str__(self):
        _refuse("a copy to host memory")
        return str(self._a)

    def __format__(self, spec):
        _refuse("a copy to host memory")
        return format(self._a, spec)

    def __dlpack__(self, *args, **kwargs):
        raise TypeError("fake_cupy arrays do not export DLPack")


def _getitem(a, index):
    return a[index]


def _setitem(a, index, value):
    a[index] = value


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
        return _wrap(_run(self._uf, args, kwargs))

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
        # a random draw: a captured generator kernel replays the state it was captured with
        return _device_fn(attr, name, host_ok=name in _HOST_INPUTS_OK,
                          replayed=not self.__name__.endswith(".random"))


class _Device:
    def __init__(self, index: int = 0):
        self.id = index

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        pass


class _Current(threading.local):
    stream = None  # this thread's current stream (None: the null stream)


_CURRENT = _Current()


class _Event:
    def __init__(self, *args, **kwargs):
        self.recorded = False

    def record(self, stream=None):
        self.recorded = True

    def synchronize(self):
        _refuse("synchronizing with an event")


class _Graph:
    """What `end_capture` gives: the recorded device operations, replayed by `launch`."""

    def __init__(self, ops):
        self.ops = ops
        self.launches = 0

    def launch(self, stream=None):
        self.launches += 1
        _replay(self.ops)


class _Stream:
    """A CUDA stream: `with stream:` makes it current; `begin_capture` records the device
    operations this thread issues until `end_capture`, as CUDA's relaxed capture mode does."""

    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = 0 if null else id(self)
        self.non_blocking = non_blocking
        self._outer = []
        self._ops = None
        self._invalid = None

    def __enter__(self):
        self._outer.append(_CURRENT.stream)
        _CURRENT.stream = self
        if self._ops is not None:
            _CAPTURE.ops = self._ops
        return self

    def __exit__(self, *exc):
        _CURRENT.stream = self._outer.pop()
        if self._ops is not None:
            _CAPTURE.ops = None
        return False

    def record(self, event=None):
        event = event or _Event()
        event.record(self)
        return event

    def wait_event(self, event):
        pass

    def synchronize(self):
        if self._ops is not None:
            raise CaptureError("cudaErrorStreamCaptureUnsupported: synchronizing a capturing "
                               "stream")

    def begin_capture(self, mode=None):
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self._ops is not None:
            raise RuntimeError("the stream is already capturing")
        self._ops = []
        _CAPTURE.made, _CAPTURE.saved = set(), {}
        if _CURRENT.stream is self:
            _CAPTURE.ops = self._ops

    def is_capturing(self):
        return self._ops is not None

    def end_capture(self):
        if self._ops is None:
            raise RuntimeError("the stream is not capturing")
        ops, self._ops = self._ops, None
        if _CURRENT.stream is self:
            _CAPTURE.ops = None
        for root, before in _CAPTURE.saved.values():
            root[...] = before
        _CAPTURE.made, _CAPTURE.saved = set(), {}
        return _Graph(ops)


_Stream.null = _Stream(null=True)


def _get_current_stream():
    return _CURRENT.stream or _Stream.null


class _MemoryPool:
    def __init__(self, allocator=None):
        self.allocations = 0

    def malloc(self, size):
        self.allocations += 1
        return None

    def used_bytes(self):
        return 0

    def free_all_blocks(self):
        pass


@contextlib.contextmanager
def _using_allocator(allocator=None):
    yield


class _Module(_Namespace):
    ndarray = ndarray
    cuda = types.SimpleNamespace(
        Device=_Device, Stream=_Stream, Event=_Event, Graph=_Graph, MemoryPool=_MemoryPool,
        using_allocator=_using_allocator, get_current_stream=_get_current_stream)

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
        if not isinstance(a, ndarray):
            _refuse("a copy from host memory")
        data = _run(np.asarray, (a,), {"dtype": dtype, "order": order}, host_ok=True)
        _check_dtype(data.dtype)
        return ndarray(data)

    def array(self, a, dtype=None, copy=True, order="K", ndmin=0):
        _check_dtype(dtype)
        if not isinstance(a, ndarray):
            _refuse("a copy from host memory")
        data = _run(np.array, (a,), {"dtype": dtype, "copy": copy, "order": order,
                                     "ndmin": ndmin}, host_ok=True)
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
