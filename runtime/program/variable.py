"""`Variable`: a symbolic value of a static program (what ops return while one is built).

It carries what shape/dtype inference knows (`_static_shape` with -1 for unknown dims, and
`dtype`), so `registry.meta_of` treats it like a Tensor. The same operator/method table as
`Tensor` is installed on it (`runtime.methods.install`), so model code runs unchanged.
A Variable has no value until the program runs: `v.numpy()` and `v.item()` keep it in the
graph (as Paddle's converted code does); a Python value (`bool(v)`, `int(v)`, `v.tolist()`,
an index) raises an error that says what to do instead. Methods and properties user code adds
to `Tensor` later (`rt.Tensor.view = my_view`) are found on a Variable too (`__getattr__`).
"""
from __future__ import annotations

from typing import ClassVar

from .. import backend, core
from ..dtypes import DType
from ..ops.array_joins import array_joined
from ..ops.array_number_kinds import holds_tensor_items, number_into_tensors, tensor_pair
from ..ops.array_split import number_list
from ..ops.arrays import (
    array_getitem,
    array_inserted,
    array_length,
    array_pop,
    array_setitem,
    array_write,
    create_array,
)
from ..ops.inplace_methods import set_traced
from ..ops.math import assign, cast
from ..ops.registry import STATE
from ..ops.shape import reshape
from ..tensor import _HookHandle
from . import numpy_functions, numpy_values, origin
from .variable_readers import (  # noqa: F401  (the add_* are imported from here by d2s)
    _NUMBER_ATTRIBUTE_READERS,
    _TENSOR_ATTRIBUTE_READERS,
    _UNKNOWN_SHAPE_READERS,
    _VARYING_STOP_READERS,
    _kept,
    add_kept_observer,
    add_number_attribute_reader,
    add_tensor_attribute_reader,
    add_unknown_shape_reader,
    add_varying_stop_reader,
)

_CONTROL_FLOW_HINT = (
    "Its value is only known when the program runs, so it cannot drive Python logic (a "
    "Python `if` on a value already taken out of the graph, an index into a Python list, a "
    "Python call that needs a number). Keep it a tensor: compare and branch on the tensor "
    "itself (inside a @d2s.to_static function `if`/`while` on a tensor become cond/while "
    "ops; by hand: rt.static.nn.cond / rt.static.nn.while_loop), index tensors with tensors, "
    "or see docs/errors.md, \"A tensor's value used as a Python value\".")

_ABSENT = object()  # (a name not found on a class)

_PYTHON_WIDTH = {"f": "float64", "i": "int64", "u": "int64"}  # item()'s number


class Variable(core.VariableBase):
    """A value in a static `Program`: name, static shape (-1 unknown), dtype, and flags.

    >>> import runtime as rt
    >>> with rt.static.program_guard(rt.static.Program()):
    ...     x = rt.static.data('x', [None, 3], 'float32')
    ...     (x * 2).shape
    [-1, 3]
    """

    # NumPy's functions of `numpy()` values; `ndarray <op> Variable` is Variable's operator
    __array_ufunc__ = numpy_functions.array_ufunc
    __array_function__ = numpy_functions.array_function

    numpy_array = False  # made by `numpy()`: a returned one comes back as a NumPy array
    numpy_scalar = False  # a NumPy scalar computed from one (`numpy_values`)
    # Why a value standing for a Python number is a graph value, and what to write so that
    # it stays a number (d2s sets it on the counter of a graph loop; ops on it pass it on):
    # a Python use of its value (`int()`, an index) says it instead of the general hint.
    python_number_note = None
    # A value standing for a Python number read from a list that holds ints beside floats
    # (kept as floats): whether eager code has an int there only the run decides (d2s refuses
    # to return it as a number)
    number_type_unknown = False
    # For a value standing for a Python number whose type the run decides (d2s: `sum()` of
    # a list of floats that may be empty is the int start): a bool value, True for a float.
    float_when = None
    # ... and the tensor arrays whose being non-empty makes it a float (`float_when` is the
    # `or` of theirs: rebuilt from them where the flag itself is not visible)
    float_arrays = ()
    # ... and, for one that is a Python bool on some runs only (`keep = bool(t)`, then `keep =
    # 3` under a tensor condition; held as the wider number): a bool value, True for a bool
    bool_when = None
    # For a value that is a Python number on some runs and a tensor on others (d2s: `b = 1`,
    # then `b = b + x` under a tensor `if`): a bool value, True on the runs where it is the
    # number, and that number at Python's precision (bool, int64, float64; a graph value)
    number_value = None
    # For a value that is None on some runs and a tensor on others (d2s: `bias = None`, then
    # `bias = x * 2` under a tensor `if`): a bool value, True on the runs where it is None
    none_when = None
    # A callable the builder runs before an op reads this value (`Builder.bind`): d2s checks
    # there, when the program runs, that a name bound on some paths only was bound.
    on_read = None
    # Where only the run decides whether a value has a gradient path (a branch's output,
    # one taken branch detached; a loop's, zero trips from a detached start): a 0-d bool
    # value, True on the runs where it has none (`stop_flags.py`) ...
    stop_when = None
    # ... and for a tensor array whose items' flags differ, a bool array of them
    item_stops = None
    # For a gradient that eager code has on some runs only (given by one branch of a tensor
    # `if`): a 0-d bool value, True on those runs (`backward._masked`)
    grad_present_when = None
    # A tensor array known to hold no items (its stop_gradient says nothing about items)
    no_items = False
    # `y = x.detach()` shares x's memory in eager code, so a write into either shows in both:
    # the handles that share values with this one (each write updates the others)
    shares = ()

    # The eager Tensor class and what it held once runtime was imported (`mirror_tensor`):
    # anything else found on it later was added by user code, and is found here too.
    _tensor_class = None
    _tensor_own: ClassVar[dict] = {}

    def __init__(self, block, name: str, shape: tuple, dtype: DType, *, kind: str = "tensor",
                 persistable: bool = False, stop_gradient: bool = True):
        self.block = block
        self.name = name
        self._static_shape = None if shape is None else tuple(shape)
        self.dtype = dtype
        self.kind = kind  # "tensor" or "array" (a tensor array: a list of tensors)
        self.persistable = persistable
        self._stop_gradient = stop_gradient
        # Set when user code sets stop_gradient = True (or calls detach()): backward then
        # treats the value as a constant, as Paddle does.
        self._user_stop = False

    @property
    def number_when(self):
        return self.__dict__.get("_number_when")

    @number_when.setter
    def number_when(self, flag) -> None:
        self.__dict__["_number_when"] = flag
        if flag is not None and type(self) is Variable:
            self.__class__ = NumberOrTensor  # (its attribute reads are checked)

    @property
    def python_scalar(self) -> bool:
        """True for a value standing for a Python number (d2s carries them through graph loops
        and branches as tensors): as eager's, it takes the dtype of a tensor it meets (`bind`)."""
        return self.__dict__.get("_python_scalar", False)

    @python_scalar.setter
    def python_scalar(self, flag: bool) -> None:
        self.__dict__["_python_scalar"] = flag
        if flag and type(self) is Variable:
            self.__class__ = NumberOrTensor  # (eager's number has no tensor attributes)

    # ---- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> list:  # (of a `numpy()` result a tuple, as NumPy's)
        dims = self._static_shape or ()
        if _UNKNOWN_SHAPE_READERS and -1 in dims:
            for fn in _UNKNOWN_SHAPE_READERS:
                out = fn(self)
                if out is not NotImplemented:
                    return out
        return (tuple if self.numpy_array else list)(dims)

    @property
    def ndim(self) -> int:
        return len(self._static_shape or ())

    @property
    def size(self) -> int:
        n = 1
        for d in self._static_shape or (-1,):
            if d < 0:
                return -1
            n *= d
        return n

    # True on a graph loop's body parameter that does not require a gradient at the loop's
    # entry and does from a later trip on (control_flow._graph_while)
    stop_varies = False
    # True on what `detach()` made: a leaf, with no graph behind it, also once user code
    # sets its stop_gradient False (`freed_graph.value_graph`)
    detached = False
    # stop_gradient before code first set it (None: never set): whether eager's tensor got an
    # autograd node when made (`is_leaf`), which setting the flag later does not change
    made_stop = None

    @property
    def stop_gradient(self) -> bool:
        if self.stop_varies or self.stop_when is not None:
            for fn in _VARYING_STOP_READERS:  # (a reader may give the flag of the run)
                flag = fn(self)
                if flag is not None:
                    return flag
        return self._stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, value: bool) -> None:
        if self.made_stop is None:
            self.made_stop = self._stop_gradient
        self._stop_gradient = bool(value)
        self._user_stop = bool(value)

    @property
    def user_stop(self) -> bool:
        """True once user code set `stop_gradient = True` (or detached it): backward treats
        the value as a constant, as Paddle does."""
        return self._user_stop

    @user_stop.setter
    def user_stop(self, value: bool) -> None:
        self._user_stop = bool(value)

    @property
    def static_shape(self) -> tuple | None:
        """The shape as inference knows it (-1: unknown dim), or None for a tensor array
        with no element yet."""
        return self._static_shape

    @property
    def program(self):
        return self.block.program

    @property
    def place(self) -> str:
        """Where the program runs, as eager `Tensor.place` says: 'cpu' or the current
        device."""
        return backend.get_device()

    @property
    def is_array(self) -> bool:
        return self.kind == "array"

    def type_str(self) -> str:
        """The printed type: `f32[-1,10]`, or `array<f32[3]>` for a tensor array."""
        if self._static_shape is None:  # a tensor array nothing was written to yet
            return f"array<{self.dtype.short}>"
        t = f"{self.dtype.short}[{','.join(str(d) for d in self._static_shape)}]"
        return f"array<{t}>" if self.kind == "array" else t

    # ---- no value at build time -----------------------------------------------------------
    def _no_value(self, what: str) -> TypeError:
        return TypeError(f"{what} of static Variable '{self.name}' ({self.type_str()}). "
                        + (self.python_number_note or _CONTROL_FLOW_HINT))

    def __bool__(self):
        raise self._no_value("bool()")

    def __int__(self):
        raise self._no_value("int()")

    def __float__(self):
        raise self._no_value("float()")

    def __index__(self):
        raise self._no_value("Using as a Python index")

    def __len__(self):
        if self.kind == "array":
            raise self._no_value("len()")  # (the type says array<...>)
        if not self._static_shape:
            note = f". {self.python_number_note}" if self.python_number_note else ""
            raise TypeError(f"len() of a 0-d static Variable '{self.name}'{note}")
        n = self._static_shape[0]
        if n < 0:
            raise self._no_value("len() (the first dimension is unknown)")
        return n

    def __iter__(self):
        return (self[i] for i in range(len(self)))  # (len() raises here, not at next())

    def numpy(self):
        """The value stays in the graph, as in Paddle's converted code (so `if
        rt.mean(x).numpy() > 5`, `x.numpy()[0]` and `range(n.numpy()[0])` build ops); where
        the result is then used as a Python value, that use raises. Eager `numpy()` is an
        array, which has no gradient path: while a program is built the result is `v`
        detached (a view of it with no gradient); returned from a converted function, it
        comes back as a NumPy array (`numpy_array`)."""
        _kept(self, "numpy")
        if STATE.builder is None:
            return self
        out = self.detach()
        out.numpy_array = True
        return out

    def item(self, *index):
        """The element at `index` (one flat index, or one per dim, as eager's `x.item(0, 1)`)
        or the one element, kept in the graph as a 0-d tensor with no gradient path that
        stands for a Python number (eager `item()` is one: combined with a tensor, it takes
        the tensor's dtype), held as float64 / int64 as Python's float and int are. A tensor
        known to hold more than one element raises without an index; an index known to be
        out of range raises eager's IndexError."""
        _kept(self, "item")
        if index:
            out = self._item_at(index)
        else:
            n = self.size
            if n not in (-1, 1):
                raise ValueError(
                    f"item() of a tensor of {n} elements ({self.type_str()}): only a "
                    "one-element tensor converts to a scalar; index it first (v[0].item(), "
                    "or v.item(i))")
            out = reshape(self, [])
        wide = _PYTHON_WIDTH.get(out.dtype.kind)
        if wide is not None and out.dtype.name != wide:
            # eager's number is a Python float / int: arithmetic on it is float64 / int64
            out = cast(out, wide)
        if out is self or not out.stop_gradient:
            # (a 0-d value reshaped to 0-d is itself: a copy is the number)
            out = assign(self) if out is self else out
            out.stop_gradient = True
        out.python_scalar = True
        return out

    def _item_at(self, index: tuple):
        shape = self._static_shape
        if len(index) == 1:  # a flat index, as NumPy's item(i)
            flat = reshape(self, [-1])
            i, = index
            n = self.size
            if isinstance(i, int) and n >= 0 and not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for size {n}")
            return flat[i]
        if len(index) != len(shape):
            raise ValueError("incorrect number of indices for array")
        for k, (i, d) in enumerate(zip(index, shape)):
            if isinstance(i, int) and d >= 0 and not -d <= i < d:
                raise IndexError(f"index {i} is out of bounds for axis {k} with size {d}")
        return self[tuple(index)]

    __array__ = numpy_functions.array_of  # (raises: the program has no array while built)

    def tolist(self):
        """Nested lists of the elements, each kept as `item()` keeps one (a 0-d value standing
        for a Python number, no gradient path); of a 1-D value whose length only the run
        knows, a tensor array of such numbers (`number_list`)."""
        shape = self.shape
        if self.is_array:
            raise self._no_value("tolist()")
        _kept(self, "tolist")
        if not shape:
            return self.item()
        if shape[0] == -1 or len(shape) == 1 and -1 in shape:
            return number_list(self)  # (of rank 2 or more: an array of rows, `row_lists`)
        return [self[i].tolist() for i in range(shape[0])]

    def backward(self, grad_tensor=None, retain_graph: bool = False):
        """`loss.backward()` while the program is being built (a converted training step):
        the backward of the program so far is appended and the gradients go into `.grad` of
        every trainable tensor the loss depends on when the program runs
        (`Builder.backward`, built by `program/train_step.py`)."""
        if STATE.builder is None:
            raise RuntimeError(
                f"backward() on static Variable '{self.name}' outside the program being "
                "built; a program built by hand gets its gradients from "
                "rt.static.append_backward(loss)")
        STATE.builder.backward(self, grad_tensor, retain_graph)

    def register_hook(self, hook):
        """`hook(grad)` on a value computed in converted code: the backward built from the
        program calls it with this value's gradient (a Variable, so the hook's tensor ops
        become backward ops that run at every backward) and uses the Variable it returns as
        the gradient, as eager hooks replace it. A hook must return the gradient: one that
        returns None only looks at it, which its Python would do once, when the backward is
        built, not at each backward: that raises. Returns a handle with `.remove()`."""
        if STATE.builder is None:
            raise RuntimeError(f"register_hook on static Variable '{self.name}' outside the "
                               "program being built")
        if self.stop_gradient:
            raise RuntimeError("register_hook on a tensor with stop_gradient=True: it never "
                               "receives a gradient")
        if self.block is not self.program.global_block():
            raise NotImplementedError(
                f"register_hook on '{self.name}', a value computed inside a branch or loop "
                "that depends on a tensor (a cond/while op): register the hook on a value "
                "computed outside it")
        hooks = self.program.grad_hooks.setdefault(self.name, [])
        entry = (hook, origin.capture())
        hooks.append(entry)
        return _HookHandle(hooks, entry)

    __hash__ = object.__hash__  # == builds an elementwise op; identity keeps dict/set use

    # ---- methods --------------------------------------------------------------------------
    @classmethod
    def install_methods(cls, table: dict) -> None:
        """Install the Tensor operator/method table; indexing a tensor array reads it."""
        numpy_values.keep_regular(table)
        for name, fn in table.items():  # (NumPy's semantics for values from `numpy()`)
            setattr(cls, name, numpy_functions.wrap(name, fn) if name in numpy_functions.NAMES
                    else fn)
        tensor_getitem = numpy_values.wrap("__getitem__", table["__getitem__"])

        def __getitem__(self, index):
            if self.kind == "array":
                return array_getitem(self, index)
            return tensor_getitem(self, index)

        cls.__getitem__ = __getitem__
        tensor_setitem = table.get("__setitem__")

        def __setitem__(self, index, value):
            if self.kind == "array":  # `lst[i] = x` on a list that became a tensor array
                array_setitem(self, index, value)
                return
            tensor_setitem(self, index, value)

        if tensor_setitem is not None:
            cls.__setitem__ = __setitem__
        tensor_add = numpy_values.wrap("__add__", table["__add__"])
        tensor_radd = numpy_values.wrap("__radd__", table["__radd__"])

        def __add__(self, other):  # `lst + [x]` on a list that became a tensor array
            if self.kind == "array" or (isinstance(other, Variable) and other.kind == "array"):
                return array_joined(self, other)
            return tensor_add(self, other)

        def __radd__(self, other):  # `[x] + lst`
            if self.kind == "array":
                return array_joined(other, self)
            return tensor_radd(self, other)

        cls.__add__, cls.__radd__ = __add__, __radd__

    @classmethod
    def mirror_tensor(cls, tensor_class: type) -> None:
        """Remember `tensor_class`'s attributes now: the ones user code adds to it later
        (speech toolkits add `masked_fill`, `view`, `eq` to the tensor class at import) are
        found on Variables too, bound to the Variable, so converted code can call them. What
        Variable defines itself (the shared method table) wins over them."""
        cls._tensor_class = tensor_class
        cls._tensor_own = {name: value for klass in reversed(tensor_class.__mro__)
                           for name, value in vars(klass).items()}

    def __getattr__(self, name: str):
        if name == "copy" and self.numpy_array:  # (a NumPy array's `a.copy()`)
            return lambda: numpy_values.copy(self)
        tensor_class = type(self)._tensor_class
        if tensor_class is None or name.startswith("__"):
            raise AttributeError(f"'Variable' object has no attribute {name!r}")
        for klass in tensor_class.__mro__:
            found = vars(klass).get(name, _ABSENT)
            if found is not _ABSENT:
                break
        own = type(self)._tensor_own.get(name, _ABSENT)
        if found is not _ABSENT and found is not own:  # added by user code
            get = getattr(found, "__get__", None)
            return get(self, type(self)) if get is not None else found
        where = f"static Variable '{self.__dict__.get('name')}', a Tensor's traced form"
        for fn in _TENSOR_ATTRIBUTE_READERS if own is not _ABSENT else ():
            got = fn(self, name)
            if got is not NotImplemented:
                return got
        if own is not _ABSENT:
            raise AttributeError(
                f"Tensor.{name} has no static form: {where} inside converted code has no "
                f"{name!r}; use it on eager tensors (outside @d2s.to_static)")
        raise AttributeError(f"'Tensor' object has no attribute {name!r} ({where})")

    def append(self, x) -> None:
        """`arr.append(x)` on a tensor array: write `x` at the end."""
        if self.kind != "array":
            raise AttributeError("'Tensor' object has no attribute 'append'")  # (as eager's)
        number_into_tensors(self, x)  # (a Python number beside tensors: tensor items)
        if holds_tensor_items(self):  # (Python numbers and 0-d tensors: `tensor_pair`)
            x = tensor_pair(x, self)
        array_write(x, array_length(self), self)

    def pop(self, index=-1):
        """`arr.pop(i)` on a tensor array: the element at `i` (negative from the end); this
        handle refers to the shorter array afterwards."""
        if self.kind != "array":
            raise AttributeError("'Tensor' object has no attribute 'pop'")  # (as eager's)
        return array_pop(self, index)

    def insert(self, index, x) -> None:
        """`arr.insert(i, x)` on a tensor array: `x` before position `i` (clamped, negative
        from the end, as `list.insert`); this handle refers to the longer array afterwards."""
        if self.kind != "array":
            raise AttributeError("'Tensor' object has no attribute 'insert'")  # (as eager's)
        self._inplace_update(array_inserted(self, index, x))

    def clear(self) -> None:
        """`arr.clear()` on a tensor array: this handle refers to an empty array of the same
        element type afterwards."""
        if self.kind != "array":
            raise AttributeError("'Tensor' object has no attribute 'clear'")  # (as eager's)
        empty = create_array(self.dtype)
        empty._static_shape = self._static_shape
        self._inplace_update(empty)

    def remove(self, value) -> None:
        raise TypeError(
            f"remove() on static Variable '{self.name}': a tensor array cannot remove an item "
            "by value (remove compares tensors with ==, element by element, which only the run "
            "can decide); pop it by its index instead (arr.pop(i))")

    # ---- graph helpers --------------------------------------------------------------------
    def detach(self) -> Variable:
        out = assign(self)
        out.stop_gradient = True
        out.detached = True
        out.stop_when = None  # (a leaf: no run-decided path, also if user code sets it False)
        group = [v for v in self.shares if v is not self] + [self, out]
        for v in group:  # eager's detach() is a view: writes through either show in both
            v.shares = group
        return out

    def clone(self) -> Variable:
        return assign(self)

    set_value = set_traced  # (`t.set_value(v)` of a tensor the program computes)

    def _inplace_update(self, new: Variable) -> None:
        """Make this Python handle refer to `new`'s value (`x[i] = v`, `array_write`).

        The two records swap contents: ops that read the old value keep its name (now held
        by the other object), and later uses of this handle read the new value.
        """
        if not isinstance(new, Variable):
            raise TypeError(f"_inplace_update: expected a Variable, got {type(new).__name__}")
        fields = ("block", "name", "_static_shape", "dtype", "kind", "persistable",
                  "_stop_gradient", "_user_stop", "stop_when", "item_stops", "no_items",
                  "detached", "made_stop")
        mine = [getattr(self, f) for f in fields]
        for f in fields:
            setattr(self, f, getattr(new, f))
        for f, v in zip(fields, mine):
            setattr(new, f, v)
        self.block.vars[self.name] = self
        new.block.vars[new.name] = new
        self.block.program.touch()
        if self.shares:
            self._write_shared()

    def _write_shared(self) -> None:
        """After a write into this handle: the handles sharing its memory in eager code
        (`detach()`) take the new values too, without a gradient path, as eager's write into
        the shared array does. A handle that needs a gradient cannot follow it."""
        group, self.shares = self.shares, ()  # (no write back into this one)
        try:
            for other in group:
                if other is self:
                    continue
                if not other.stop_gradient:
                    raise TypeError(
                        f"an in-place write into a tensor that shares memory through "
                        f"detach() with a tensor that needs a gradient: in eager code the "
                        "write changes that tensor's values but not its gradient path, which "
                        "a program cannot express. Write into a copy "
                        "(`y = x.detach().clone()`), or call detach() after the write.")
                copy = assign(self)
                copy.stop_gradient = True
                other.shares = ()
                try:
                    other._inplace_update(copy)
                finally:
                    other.shares = group
        finally:
            self.shares = group

    def __repr__(self):
        flags = " persistable" if self.persistable else ""
        return f"Variable(%{self.name}: {self.type_str()}{flags})"

    __str__ = __repr__


class NumberOrTensor(Variable):
    """A Variable that is a Python number on some runs (`number_when`) or all (`python_scalar`):
    reads of its public attributes go to the readers first (`add_number_attribute_reader`)."""

    def __getattribute__(self, name: str):
        if name[0] != "_" and name != "number_when" and name != "python_scalar":
            for fn in _NUMBER_ATTRIBUTE_READERS:
                fn(self, name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str):  # (after a reader's AttributeError: raised again)
        for fn in _NUMBER_ATTRIBUTE_READERS if name[0] != "_" else ():
            fn(self, name)
        return Variable.__getattr__(self, name)
