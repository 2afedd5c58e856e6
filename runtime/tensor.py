"""The eager `Tensor`: a NumPy/CuPy array plus what autograd needs.

Operators and methods (`x + y`, `x.sum()`, ...) are not written here: `runtime/methods.py`
installs them from each op module's `METHODS` table onto both `Tensor` and the static
`Variable`, so the two can never disagree.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import backend, core, dtypes
from .dtypes import DType, convert_dtype, default_float, of_array
from .ops import registry
from .ops.array_number_kinds import holds_number_kinds
from .ops.arrays import array_pack, holds_python_numbers
from .ops.combine import stack
from .ops.math import assign, cast

_MODE = core.mode_state()


class Tensor(core.TensorBase):
    """An n-dimensional array on the current device with eager autograd.

    >>> import runtime as rt
    >>> x = rt.to_tensor([1.0, 2.0], stop_gradient=False)
    >>> (x * x).sum().backward()
    >>> x.grad.numpy().tolist()
    [2.0, 4.0]
    """

    # What autograd touches on every op is a slot (`wrap` sets all four), so recording a node
    # allocates no instance dict; the rest are class-level defaults that an instance
    # overrides in its `__dict__` when it needs to.
    __slots__ = ("__dict__", "__weakref__", "_data", "_index", "_node", "stop_gradient")
    __array_priority__ = 100  # so ndarray <op> Tensor defers to Tensor's reflected operator
    _grad = None
    name = None
    _hooks = None
    persistable = False
    _version = 0  # bumped by in-place updates; autograd checks it (see autograd.Node)

    def __init__(self, data, dtype=None, stop_gradient: bool = True, name: str | None = None):
        dt = convert_dtype(dtype).np if dtype is not None else None
        if isinstance(data, Tensor):
            data = data._data
        self._data = backend.XP.asarray(data, dtype=dt)
        self.stop_gradient = bool(stop_gradient)
        self._node = None
        self._index = 0
        if name is not None:
            self.name = name

    # ---- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> list:
        return list(self._data.shape)

    @property
    def dtype(self) -> DType:
        return of_array(self._data)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def place(self) -> str:
        return "cpu" if isinstance(self._data, np.ndarray) else backend.get_device()

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    # ---- conversion -----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        self._value_read()
        return backend.to_numpy(self._data)

    def _value_read(self) -> None:
        """This tensor's value is about to be read as Python: tell the hook, if one watches
        (`core.watch_value_reads`)."""
        hook = _MODE.value_read
        if hook is not None:
            hook(self)

    def item(self, *index):
        """The Python number at `index` (Paddle's and NumPy's signature: `x.item(0, 1)`, or
        one flat index); with no index the tensor must have one element."""
        if index:
            return self.numpy().item(*[int(i) for i in index])
        if self._data.size != 1:
            raise ValueError(f"item(): only one-element tensors can be converted to a Python "
                             f"scalar, this one has shape {self.shape}")
        self._value_read()
        return self._data.reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def _scalar(self, kind: str):
        if self._data.size != 1:
            raise ValueError(
                f"{kind}() of a tensor with shape {self.shape} is ambiguous: only one-element "
                f"tensors convert to Python {kind}. Use .any() or .all() for a truth value.")
        self._value_read()
        return self._data.reshape(()).item()

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __int__(self):
        return int(self._scalar("int"))

    def __float__(self):
        return float(self._scalar("float"))

    def __index__(self):
        if self.dtype.is_floating:
            raise TypeError("only integer tensors can be used as an index")
        return int(self._scalar("int"))

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__  # == is elementwise, identity hashing keeps dict/set use working

    # ---- autograd -------------------------------------------------------------------------
    @property
    def grad(self):
        if registry.STATE.builder is not None:  # a converted training step reads it
            return registry.STATE.builder.tensor_grad(self)
        return self._grad

    @grad.setter
    def grad(self, value):
        if registry.STATE.builder is not None:
            registry.STATE.builder.set_tensor_grad(self, value)
            return
        self._grad = value

    def backward(self, grad_tensor=None, retain_graph: bool = False):
        core.backward([self], [grad_tensor], retain_graph=retain_graph)

    def clear_grad(self):
        if registry.STATE.builder is not None:
            registry.STATE.builder.set_tensor_grad(self, None)
            return
        self._grad = None

    clear_gradient = clear_grad

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a non-None return value
        replaces the gradient. Returns a handle with `.remove()`."""
        if self.stop_gradient:
            raise RuntimeError("register_hook on a tensor with stop_gradient=True: it never "
                               "receives a gradient")
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        watchers = self.__dict__.pop("_hook_watchers", None)
        for forget in watchers or ():  # programs that took this tensor's gradient without a
            forget()  # hook: traced again at their next call (`train_step.live_hooks`)
        return _HookHandle(self._hooks, hook)

    def set_value(self, value) -> None:
        """Overwrite this tensor's values without recording a gradient (optimizer updates,
        BatchNorm running statistics, loading weights). While a static program is being built
        this appends an op that writes the persistable variable instead.
        """
        if registry.STATE.builder is not None:
            registry.STATE.builder.write_persistable(self, value)
            return
        arr = value._data if isinstance(value, Tensor) else backend.XP.asarray(value)
        if tuple(arr.shape) != tuple(self._data.shape):
            raise ValueError(f"set_value: value has shape {list(arr.shape)} but the tensor "
                             f"{self.name or ''} has shape {self.shape}")
        self._data = arr.astype(self._data.dtype, copy=False)
        self._version += 1

    def _inplace_update(self, new: Tensor) -> None:
        """Make this object hold `new`'s value and autograd history (setitem on a tensor
        that autograd tracks). Ops that used the old value notice through `_version`."""
        if self._node is None and not self.stop_gradient:
            raise RuntimeError(
                "in-place assignment to a leaf tensor that requires grad (stop_gradient=False) "
                "would lose its gradient; assign to a clone() instead")
        if self._node is not None:  # the old producer must see the value it produced
            self._node.out_refs = _replace_ref(self._node.out_refs, self._index, _dead_ref)
        self._data = new._data
        self._node = new._node
        self._index = new._index
        self.stop_gradient = new.stop_gradient
        self._version += 1
        if new._node is not None:  # the node's output is now this object
            new._node.out_refs = _replace_ref(new._node.out_refs, new._index, weakref.ref(self))

    def _shallow_copy(self) -> Tensor:
        """Another handle on the same value and history (the 'before' of an in-place op)."""
        t = wrap(self._data)
        t._node, t._index, t.stop_gradient = self._node, self._index, self.stop_gradient
        return t

    def detach(self) -> Tensor:
        b = registry.STATE.builder
        if b is not None:  # (converted code: the value when the program runs, not when traced)
            return b.variable_of(self).detach()
        return wrap(self._data)

    def clone(self) -> Tensor:
        return assign(self)

    def __repr__(self):
        data = np.array2string(self.numpy(), separator=", ", prefix=" " * 7)
        return (f"Tensor(shape={self.shape}, dtype={self.dtype.name}, place=Place({self.place}), "
                f"stop_gradient={self.stop_gradient},\n       {data})")

    __str__ = __repr__


def _dead_ref():
    """A weak reference that is always dead: autograd rebuilds that output from its array."""


def _replace_ref(refs: tuple, index: int, ref) -> tuple:
    refs = list(refs)
    refs[index] = ref
    return tuple(refs)


class _HookHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


_new = Tensor.__new__
_ndarray = np.ndarray
_NUMPY_SCALARS = dtypes.NP_SCALAR_TYPES  # (grows when bfloat16 loads)


def wrap(array) -> Tensor:
    """Wrap an array (of the current device) in a Tensor without copying. Hot path."""
    cls = array.__class__
    if cls is not _ndarray and cls in _NUMPY_SCALARS:
        array = np.asarray(array)  # NumPy turns 0-d results into scalars; keep them 0-d
    t = _new(Tensor)
    t._data = array
    t.stop_gradient = True
    t._node = None
    t._index = 0
    return t


def to_tensor(data, dtype=None, place=None, stop_gradient: bool = True) -> Tensor:
    """Make a Tensor from a list, scalar, NumPy array or Tensor (always a copy).

    Python floats become the default dtype (float32 unless `rt.set_default_dtype` changed
    it, as in Paddle), Python ints int64, bools bool.

    >>> import runtime as rt
    >>> rt.to_tensor([[1, 2], [3, 4]]).dtype == 'int64'
    True
    """
    if isinstance(data, core.VariableBase):  # inside a program being built: an assign op (as in Paddle)
        return _assign_variable(data, dtype, stop_gradient)
    if registry.STATE.builder is not None and isinstance(data, (list, tuple)) and (
            _holds_variables(data)):
        return _stack_variables(data, dtype, stop_gradient)
    t = constant(data, dtype, stop_gradient)
    if registry.STATE.builder is not None:
        # inside a program being built: a value of the program (an assign of the constant,
        # as Paddle's converted code does), so `t[i] = traced_value` and in-place updates
        # are ops of the program, not writes into a trace-time constant
        return _assign_variable(t, None, stop_gradient)
    return t


def constant(data, dtype=None, stop_gradient: bool = True) -> Tensor:
    """An eager Tensor copy of `data` (what `to_tensor` makes outside a program; inside one,
    the constant a program captures)."""
    if isinstance(data, Tensor):
        data = data._data
    if dtype is None:
        arr = backend.to_numpy(data) if hasattr(data, "__cuda_array_interface__") else data
        arr = np.asarray(arr)
        if arr.dtype == np.float64 and not isinstance(data, (np.ndarray, np.generic)):
            arr = arr.astype(default_float().np)
        dtype = arr.dtype
        data = arr
    t = wrap(backend.XP.array(data, dtype=convert_dtype(dtype).np))
    t.stop_gradient = stop_gradient
    return t


def _holds_variables(data) -> bool:
    return any(isinstance(x, core.VariableBase) or isinstance(x, (list, tuple)) and
               _holds_variables(x) for x in data)


def _stack_variables(data, dtype, stop_gradient: bool):
    """`to_tensor([a, b, ...])` of program values (`[loss.item(), n]`, `x.tolist()`), nested
    lists of one shape: the items stacked in the program, of the dtype eager code's copy of
    their values has (float64: the default float dtype, as `constant` makes it)."""
    leaves = []

    def collect(d):
        for x in d:
            (collect if isinstance(x, (list, tuple)) else leaves.append)(x)
    collect(data)
    if dtype is None:
        kinds = [(x.dtype.np if isinstance(x, core.VariableBase) else np.asarray(x).dtype)
                 for x in leaves]
        dtype = convert_dtype(np.result_type(*kinds))
        if dtype.name == "float64":  # (as eager's copy of a list: `constant`)
            dtype = default_float()

    def build(d):
        items = [build(x) if isinstance(x, (list, tuple)) else
                 _assign_variable(x, dtype, True) if isinstance(x, core.VariableBase) else
                 to_tensor(x, dtype) for x in d]
        return stack(items)
    out = build(data)
    out.stop_gradient = stop_gradient
    return out


def _assign_variable(v, dtype, stop_gradient: bool):
    """`to_tensor(v)` of a static Variable: a copy of it in the program (cast to `dtype`)."""
    if getattr(v, "row_lists", False):  # (`x.tolist()` whose first dim the run decides)
        raise TypeError(
            "to_tensor() of `x.tolist()` of a tensor whose first dim only the run decides: "
            "eager's tensor of an empty list is float32 of shape [0], whatever `x` holds, "
            "which one program cannot give beside the rows. Use the tensor itself "
            "(`x.astype('int64')`, `x.astype('float32')`, `x.clone()`)")
    if holds_number_kinds(v):
        v = _values_of_numbers(v, dtype)
    if dtype is None and v.dtype.name == "float64" and (
            getattr(v, "python_scalar", False) or holds_python_numbers(v)):
        dtype = default_float()  # (Python floats, kept in float64: eager's default dtype)
    out = assign(v)
    if dtype is not None and convert_dtype(dtype) != v.dtype:
        out = cast(out, dtype)
    out.stop_gradient = stop_gradient
    out.detached = True  # (eager's copy has no history: a leaf, also with stop_gradient False)
    return out


def _values_of_numbers(array, dtype):
    """The values of a list of Python numbers of several types that a program grows (a tensor
    array of `[value, kind]` pairs): eager's dtype depends on which items the run leaves."""
    if dtype is None:
        raise TypeError(
            "to_tensor() of a list of Python numbers that the converted code grows, holding "
            "ints beside floats or bools: eager code gives float32 where a float is left in it "
            "and int64 otherwise, which only the run decides. Give the dtype: "
            "rt.to_tensor(items, dtype='float32')")
    return array_pack(array)[:, 0]


registry.register_tensor_class(Tensor)
core.install(wrap=wrap, to_tensor=to_tensor, constant=constant)
