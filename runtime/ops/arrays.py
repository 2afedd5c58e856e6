"""Tensor arrays: a list of tensors that can grow inside a `while` loop (Paddle's LoDTensorArray).

In a static program an array is a Variable of kind "array" whose `_static_shape` is the shape
of its elements (None until something is written). Array ops are functional (each write makes
a new list, so values saved for backward never change underneath); `array_write` then
re-points the caller's handle at the new array (`Variable._inplace_update`), which gives
Paddle's in-place semantics to user code. In eager mode an array is a Python list.
"""
from __future__ import annotations

import itertools

from .. import core
from ..dtypes import bool_, convert_dtype, int64
from . import array_number_kinds as kinds
from . import combine, math, registry
from .array_number_kinds import (
    AS_PAIRS,
    ITEM_READ,
    KINDS,
    PAIR,
    STR_ITEM,
    holds_number_kinds,
    holds_python_numbers,
    holds_strs,
    needs_pairs,
    number_pair,
    pair_value,
)
from .registry import STATE, Meta, OpError

Variable = core.VariableBase  # (the static Variable is runtime/program's, a layer above)


def _index(i) -> int:
    """An array position from a Python int or a one-element integer tensor/array (Paddle
    passes `[1]`-shaped int64 tensors)."""
    data = getattr(i, "_data", i)
    if hasattr(data, "reshape") and getattr(data, "size", 1) == 1:
        return int(data.reshape(()).item())
    return int(data)


def _write_kernel(xp, x, i, arr):
    i, out = _index(i), list(arr)
    if i == len(out):
        out.append(x)
    elif 0 <= i < len(out):
        out[i] = x
    else:
        raise IndexError(f"index {i} is out of range for an array of length "
                         f"{len(out)} (write at most one past the end)")
    return out


def _read_kernel(xp, arr, i):
    i = _index(i)
    if not -len(arr) <= i < len(arr):  # (`lst[i]` of a list a tensor sized: eager's error)
        raise registry.as_eager(IndexError(
            f"list index out of range (index {i}; the list has {len(arr)} items on this run)"))
    return arr[i]


def _stack_kernel(xp, arr, axis=0):
    if not arr:  # the error eager `rt.stack([])` raises
        raise OpError("stack: x must be a non-empty list of tensors (a tensor array, empty "
                      "at run time)")
    return xp.stack(arr, axis=axis)


def _concat_kernel(xp, arr, axis=0):
    if not arr:
        raise OpError("concat: x must be a non-empty list of tensors (a tensor array, empty "
                      "at run time)")
    return xp.concatenate(arr, axis=axis)


def _elem(op, arr):
    if isinstance(arr, Meta):
        return arr.shape
    if arr._static_shape is None:
        raise OpError(f"{op}: nothing is ever written to tensor array '{arr.name}', so its "
                      "element shape is unknown")
    return arr._static_shape


def _stack_infer(arr, axis=0):
    s = list(_elem("array_stack", arr))
    s.insert(axis % (len(s) + 1), -1)
    return Meta(tuple(s), arr.dtype)


def _concat_infer(arr, axis=0):
    s = list(_elem("array_concat", arr))
    if not s:
        raise OpError("array_concat: elements are 0-d; use array_stack")
    s[axis % len(s)] = -1
    return Meta(tuple(s), arr.dtype)


# ---- gradients -------------------------------------------------------------------------------
# The gradient of an array is an array of the same length whose entries may be None (zero).
# These helper ops exist only in static backward programs (eager arrays are Python lists, and
# eager autograd follows the tensors in them).

def _grad_read_kernel(xp, g, i, x):
    i = _index(i)
    v = g[i] if 0 <= i < len(g) else None
    return v if v is not None else xp.zeros_like(x)


def _grad_drop_kernel(xp, g, i, arr):
    out = (list(g) + [None] * len(arr))[:len(arr)]
    i = _index(i)
    if 0 <= i < len(out):
        out[i] = None
    return out


def _grad_put_kernel(xp, gx, i, arr):
    out = [None] * len(arr)
    out[_index(i)] = gx
    return out


def _grad_add_kernel(xp, a, b):
    n = max(len(a), len(b))
    a, b = list(a) + [None] * (n - len(a)), list(b) + [None] * (n - len(b))
    return [y if x is None else x if y is None else x + y for x, y in zip(a, b)]


def _unstack_kernel(xp, g, arr, axis=0):
    return list(xp.moveaxis(g, axis, 0))


def _split_like_kernel(xp, g, arr, axis=0):
    bounds = list(itertools.accumulate(a.shape[axis] for a in arr))[:-1]
    return xp.split(g, bounds, axis=axis)


def _array_meta(*args, **attrs):
    return None  # array outputs are created by _bind_array, not from a Meta


GRAD_READ = registry.register(
    "array_grad_read", kernel=_grad_read_kernel,
    infer=lambda g, i, x: Meta(x.shape, x.dtype), nondiff=True, amp="keep",
    doc="Entry i of an array gradient, zeros like x where there is none.")
GRAD_DROP = registry.register("array_grad_drop", kernel=_grad_drop_kernel, infer=_array_meta,
                              nondiff=True, amp="keep",
                              doc="An array gradient cut to len(arr) with entry i cleared.")
GRAD_PUT = registry.register("array_grad_put", kernel=_grad_put_kernel, infer=_array_meta,
                             nondiff=True, amp="keep",
                             doc="An array gradient of len(arr) holding gx at i only.")
GRAD_ADD = registry.register("array_grad_add", kernel=_grad_add_kernel, infer=_array_meta,
                             nondiff=True, amp="keep", doc="The sum of two array gradients.")
UNSTACK = registry.register("array_unstack", kernel=_unstack_kernel, infer=_array_meta,
                            nondiff=True, amp="keep", doc="Slices of g along axis, as an array.")
SPLIT_LIKE = registry.register("array_split_like", kernel=_split_like_kernel,
                               infer=_array_meta, nondiff=True, amp="keep",
                               doc="g split along axis into pieces the sizes of arr's entries.")


def _bind_array(op, inputs: list, attrs: dict, like: Variable) -> Variable:
    """Append an array-valued op; its output is an array with `like`'s element type."""
    b = _builder()
    out = _new_array(b, like.dtype, like._static_shape, stop=False)
    b.append(op.name, [b.ref(x) for x in inputs], [out.name], attrs)
    for mark in ("python_items", "row_lists"):  # (still Python numbers, `x.tolist()`'s rows)
        setattr(out, mark, getattr(like, mark, False) or getattr(out, mark, False))
    return out


def add_array_grads(a: Variable, b: Variable) -> Variable:
    return _bind_array(GRAD_ADD, [a, b], {}, a)


def zero_array_grad(like: Variable) -> Variable:
    b = _builder()
    out = _new_array(b, like.dtype, like._static_shape, stop=False)
    b.append("create_array", [], [out.name], {"dtype": like.dtype.name})
    return out


def _write_grad(ins, outs, gs, attrs):
    x, i, arr = ins
    g = gs[0]
    return [registry.bind(GRAD_READ, (g, i, x), {}), None, _bind_array(GRAD_DROP, [g, i, arr],
                                                                       {}, arr)]


def _read_grad(ins, outs, gs, attrs):
    arr, i = ins
    return [_bind_array(GRAD_PUT, [gs[0], i, arr], {}, arr), None]


def _slice_kernel(xp, arr, start=None, stop=None, step=None):
    return arr[start:stop:step]


def _slice_grad(ins, outs, gs, a):
    return [_bind_array(SLICE_GRAD, [gs[0], ins[0]], dict(a), ins[0])]


def _slice_grad_kernel(xp, g, arr, start=None, stop=None, step=None):
    out = [None] * len(arr)
    for k, v in zip(range(len(arr))[start:stop:step], g):
        out[k] = v
    return out


SLICE_GRAD = registry.register("array_slice_grad", kernel=_slice_grad_kernel,
                               infer=_array_meta, nondiff=True, amp="keep",
                               doc="Scatter the gradient of an array slice back to len(arr).")
SLICE = registry.register("array_slice", kernel=_slice_kernel, infer=_array_meta,
                          grad=_slice_grad, amp="keep", doc="arr[start:stop:step].")
def _position(i, n: int, what: str) -> int:
    """`i` (negative from the end) as a position in an array of length n."""
    i = _index(i)
    if not -n <= i < n:
        raise IndexError(f"{what} from an empty array" if not n else
                         f"{what} index {i} is out of range for an array of length {n}")
    return i + n if i < 0 else i


def _delete_kernel(xp, arr, i):
    out = list(arr)
    del out[_position(i, len(arr), "pop")]
    return out


def _grad_insert_kernel(xp, g, i, arr):
    """The gradient of `arr` from that of `arr` with entry i deleted: None (zero) at i."""
    n = len(arr)
    i = _position(i, n, "pop")
    g = (list(g) + [None] * n)[:n - 1]
    return g[:i] + [None] + g[i:]


GRAD_INSERT = registry.register("array_grad_insert", kernel=_grad_insert_kernel,
                                infer=_array_meta, nondiff=True, amp="keep",
                                doc="An array gradient of len(arr) with no entry at i.")
DELETE = registry.register(
    "array_delete", kernel=_delete_kernel, infer=_array_meta, amp="keep",
    grad=lambda ins, outs, gs, a: [_bind_array(GRAD_INSERT, [gs[0], ins[1], ins[0]], {},
                                               ins[0]), None],
    doc="arr without entry i (negative from the end): what list.pop(i) leaves.")
def _insert_position(i, n: int) -> int:
    """Where `list.insert(i, x)` puts x in a list of length n (clamped, as Python does)."""
    i = _index(i)
    return min(max(i + n, 0) if i < 0 else i, n)


def _insert_kernel(xp, arr, i, x):
    out = list(arr)
    out.insert(_insert_position(i, len(arr)), x)
    return out


def _grad_remove_kernel(xp, g, i, arr):
    """The gradient of `arr` from that of `arr` with an entry inserted at i: g without it."""
    n = len(arr)
    p = _insert_position(i, n)
    g = (list(g) + [None] * (n + 1))[:n + 1]
    return g[:p] + g[p + 1:]


def _grad_inserted_kernel(xp, g, i, arr, x):
    """The gradient of the inserted entry: entry i (clamped) of g."""
    p = _insert_position(i, len(arr))
    v = g[p] if p < len(g) else None
    return v if v is not None else xp.zeros_like(x)


GRAD_REMOVE = registry.register("array_grad_remove", kernel=_grad_remove_kernel,
                                infer=_array_meta, nondiff=True, amp="keep",
                                doc="An array gradient without the entry inserted at i.")
GRAD_INSERTED = registry.register(
    "array_grad_inserted", kernel=_grad_inserted_kernel, nondiff=True, amp="keep",
    infer=lambda g, i, arr, x: Meta(x.shape, x.dtype),
    doc="The gradient of the entry inserted at i.")
INSERT = registry.register(
    "array_insert", kernel=_insert_kernel, infer=_array_meta, amp="keep",
    grad=lambda ins, outs, gs, a: [
        _bind_array(GRAD_REMOVE, [gs[0], ins[1], ins[0]], {}, ins[0]), None,
        registry.bind(GRAD_INSERTED, (gs[0], ins[1], ins[0], ins[2]), {})],
    doc="arr with x inserted before position i (clamped, negative from the end): what "
        "list.insert(i, x) leaves.")
CREATE = registry.register("create_array", kernel=lambda xp, dtype=None: [],
                           infer=lambda dtype=None: None, nondiff=True, amp="keep")
WRITE = registry.register("array_write", kernel=_write_kernel, infer=lambda *a: None,
                          grad=_write_grad, amp="keep")
READ = registry.register("array_read", kernel=_read_kernel,
                         infer=lambda arr, i: Meta(_elem("array_read", arr), arr.dtype),
                         grad=_read_grad, amp="keep")
FILL_LIKE = registry.register(
    "array_fill_like", kernel=lambda xp, arr, value=False: [xp.asarray(value)] * len(arr),
    infer=_array_meta, nondiff=True, amp="keep",
    doc="A bool array as long as arr, each entry `value` (its items' flags: `item_flags`).")
LENGTH = registry.register("array_length", kernel=lambda xp, arr: xp.asarray(len(arr), "int64"),
                           infer=lambda arr: Meta((), int64), nondiff=True, amp="keep")
STACK = registry.register(
    "array_stack", kernel=_stack_kernel, infer=_stack_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [_bind_array(UNSTACK, [gs[0], ins[0]], dict(a), ins[0])])
def _pack_kernel(xp, arr, shape=(), dtype="float32"):
    return xp.stack(arr) if arr else xp.zeros((0, *shape), dtype)


# `array_stack` that gives a [0, ...] tensor for an empty array: how a program returns a list
# grown by a tensor condition with its gradient path (d2s un-stacks it with eager ops)
PACK = registry.register(
    "array_pack", kernel=_pack_kernel, amp="keep",
    infer=lambda arr, shape=(), dtype=None: Meta((-1, *_elem("array_pack", arr)), arr.dtype),
    grad=lambda ins, outs, gs, a: [_bind_array(UNSTACK, [gs[0], ins[0]], {}, ins[0])])
CONCAT = registry.register(
    "array_concat", kernel=_concat_kernel, infer=_concat_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [_bind_array(SPLIT_LIKE, [gs[0], ins[0]], dict(a), ins[0])])


def _builder():
    return STATE.builder


def _new_array(b, dtype, elem_shape, stop=True) -> Variable:
    v = b.block.new_var(b.program.fresh_name(), (), dtype, kind="array", stop_gradient=stop)
    v._static_shape = elem_shape
    return v


def array_getitem(array: Variable, index):
    """`arr[i]` (array_read) or `arr[a:b:c]` (a new array) on a static tensor array."""
    if isinstance(index, slice):
        for part in (index.start, index.stop, index.step):
            if part is not None and not isinstance(part, int):
                raise TypeError("slicing a tensor array needs Python int bounds, got "
                                f"{index!r}; read single elements with a tensor index")
        attrs = {k: v for k, v in (("start", index.start), ("stop", index.stop),
                                   ("step", index.step)) if v is not None}
        out = _bind_array(SLICE, [array], attrs, array)
        out._stop_gradient = array.stop_gradient
        flags = getattr(array, "item_stops", None)
        if flags is not None:  # (each item keeps its own flag)
            out.item_stops = _bind_array(SLICE, [flags], attrs, flags)
        return out
    return array_read(array, index) if ITEM_READ[0] is None else ITEM_READ[0](
        array, index, array_read)


def create_array(dtype="float32", initialized_list=None):
    """An empty tensor array (or one holding `initialized_list`).

    >>> import runtime as rt
    >>> arr = rt.static.create_array('float32')
    >>> arr = rt.static.array_write(rt.ones([2]), 0, arr)
    >>> int(rt.static.array_length(arr))
    1
    """
    dt, b = convert_dtype(dtype), _builder()
    if b is None:
        return list(initialized_list or [])
    arr = _new_array(b, dt, None)
    arr.no_items = True  # (its stop_gradient says nothing of items: it has none)
    b.append("create_array", [], [arr.name], {"dtype": dt.name})
    for i, x in enumerate(initialized_list or []):
        if type(x) in (bool, int, float):  # (a Python number: in the array's dtype)
            x = core.constant(x, dtype=dt)
        array_write(x, i, arr)
    return arr


def array_write(x, i, array=None):
    """Write `x` at position `i` (at most one past the end) and return the array; `array`
    itself is updated too (Paddle semantics)."""
    b = _builder()
    if b is None:
        if array is None:
            array = []
        _write_kernel(None, x, int(i), array)  # validates the index
        i = _index(i)
        if i == len(array):
            array.append(x)
        else:
            array[i] = x
        return array
    if array is None:
        array = create_array(b.variable_of(x).dtype)
    array._inplace_update(array_written(x, i, array))
    return array


def _element_shape(op: str, array, x: Variable) -> tuple:
    """The element shape of `array` once `x` is put in it (dims that differ become -1),
    after checking that `x` fits: same dtype and rank."""
    if not isinstance(array, Variable) or array.kind != "array":
        raise TypeError(f"{op}: array must be a tensor array, got {array!r}")
    if x.dtype != array.dtype:
        raise registry.OpTypeError(f"{op}: x is {x.type_str()} but array "
                                   f"'{array.name}' holds {array.dtype.name}")
    old = array._static_shape
    if old is not None and len(old) != len(x._static_shape):
        raise OpError(f"{op}: x is {x.type_str()} but array '{array.name}' holds "
                      f"elements of rank {len(old)}")
    return x._static_shape if old is None else tuple(
        a if a == c else -1 for a, c in zip(old, x._static_shape))


def array_written(x, i, array: Variable) -> Variable:
    """A new static tensor array: `array` with `x` written at `i` (at most one past the
    end); `array` itself is left as it is."""
    b = _builder()
    x = number_pair(b, x) if holds_number_kinds(array) else b.variable_of(x)
    shape = _element_shape("array_write", array, x)
    out = _new_array(b, x.dtype, shape, stop=array.stop_gradient and x.stop_gradient)
    b.append("array_write", [b.ref(x), b.ref(i), b.ref(array)], [out.name], {})
    if getattr(array, "python_items", False):  # (still a list of Python numbers)
        out.python_items = True
    if item_flags_differ(array, x):  # (items whose stop_gradient differ: each one's flag
        out.item_stops = array_written(_stop_flag(x), i, item_flags(array))  # beside it)
    return out


def item_flags_differ(a: Variable, x) -> bool:
    """Whether an array of `a`'s items and `x` (an item, or an array of them) needs each
    item's stop_gradient flag beside it: one of them has a flag the run decides, or their
    static flags differ (an array with no items has none to differ)."""
    return any(getattr(v, "item_stops", None) is not None or getattr(v, "stop_when", None)
               is not None for v in (a, x)) or (a.stop_gradient != x.stop_gradient and not any(
                   getattr(v, "no_items", False) for v in (a, x)))


def _stop_flag(x: Variable):
    """The item `x`'s stop_gradient as a 0-d bool value: the run's (`stop_when`) or its
    static one."""
    flag = getattr(x, "stop_when", None)
    return _builder().variable_of(x.stop_gradient) if flag is None else flag


def item_flags(array: Variable) -> Variable:
    """The stop_gradient flags of the items of a static tensor array, as a bool array of the
    same length: its own (`Variable.item_stops`, where its items' flags differ), else its
    static flag for every item."""
    flags = getattr(array, "item_stops", None)
    if flags is not None:
        return flags
    b = _builder()
    out = _new_array(b, bool_, (), stop=True)
    b.append("array_fill_like", [b.ref(array)], [out.name], {"value": array.stop_gradient})
    return out


def array_setitem(array: Variable, index, value) -> None:
    """`arr[i] = x` on a static tensor array (a Python list turned array): an `array_write`
    at `i` (an int, negative from the end, or an integer tensor); `array` becomes the new one."""
    if isinstance(index, slice):
        raise TypeError("assigning to a slice of a tensor array is not supported; assign "
                        "single elements (arr[i] = x)")
    b = _builder()
    if isinstance(index, int) and index < 0:  # from the end, as in a Python list
        index = math.add(array_length(array), index)
    if needs_pairs(array, value) and not holds_number_kinds(array):  # (`ints[0] = 2.5`:
        array._inplace_update(as_pairs(array))  # each item's Python type beside it)
    kinds.number_into_tensors(array, value)  # (eager's list keeps a Python number there)
    if kinds.holds_tensor_items(array):  # (a Python number or a tensor: `[value, is_tensor]`)
        value = kinds.tensor_pair(value, array)
    value = b.variable_of(value) if not isinstance(value, Variable) else value
    value = number_pair(b, value) if holds_number_kinds(array) else value
    if value.dtype != array.dtype:
        value = math.cast(value, array.dtype)
    array_write(value, index, array)


def array_pop(array, i=-1):
    """`array.pop(i)`: the element at `i` (a Python int, negative from the end, or an integer
    tensor) and the array without it; `array` itself refers to the shorter array afterwards
    (as `array_write` updates it). In eager mode `array` is a Python list, popped in place.

    >>> import runtime as rt
    >>> from runtime.ops.arrays import array_pop
    >>> arr = rt.static.create_array('float32', [rt.ones([2]), rt.zeros([2])])
    >>> array_pop(arr).tolist(), len(arr)
    ([0.0, 0.0], 1)
    """
    if _builder() is None:
        return array.pop(_index(i))
    out, item = array_popped(array, i)
    array._inplace_update(out)
    return item


def array_popped(array: Variable, i=-1) -> tuple:
    """(a new static tensor array: `array` without entry `i`, the entry); `array` itself is
    left as it is."""
    if not isinstance(array, Variable) or array.kind != "array":
        raise TypeError(f"array_pop: array must be a tensor array, got {array!r}")
    out = _bind_array(DELETE, [array, i], {}, array)  # (first: it says "pop from empty")
    item = array_read(array, i)
    out._stop_gradient = array.stop_gradient
    flags = getattr(array, "item_stops", None)
    if flags is not None:
        out.item_stops = _bind_array(DELETE, [flags, i], {}, flags)
    return out, item


def array_inserted(array: Variable, i, x) -> Variable:
    """A new static tensor array: `array` with `x` inserted before position `i` (a Python
    int or an integer tensor; clamped and negative from the end, as `list.insert`); `array`
    itself is left as it is."""
    x = number_pair(_builder(), x) if holds_number_kinds(array) else _builder().variable_of(x)
    shape = _element_shape("array_insert", array, x)
    out = _bind_array(INSERT, [array, i, x], {}, array)
    out._static_shape = shape
    out._stop_gradient = array.stop_gradient and x.stop_gradient
    if item_flags_differ(array, x):  # (each item's flag, `x`'s inserted beside it)
        flags = item_flags(array)
        out.item_stops = _bind_array(INSERT, [flags, i, _stop_flag(x)], {}, flags)
    return out


def array_read(array, i):
    """The element at position `i` (of an array of Python numbers: a value standing for a
    Python number, as the list's item is eagerly)."""
    if _builder() is None:
        return array[_index(i)]
    if holds_strs(array) and STR_ITEM[0] is None:  # (which str only the run knows)
        raise TypeError("an item of a list of str whose length depends on a tensor is read: "
                        "which str it is only the run decides. Return the list, or keep an "
                        "index per item into a tuple of the texts")
    out = registry.bind(READ, (array, i), {})
    if holds_strs(array):  # (a value standing for the str: its id, `STRINGS`)
        return STR_ITEM[0](out)
    if holds_number_kinds(array):  # (a number whose type the run decides)
        return pair_value(out)
    if kinds.holds_tensor_items(array) or getattr(array, "row_lists", False):  # (a tensor or
        # a Python number on some runs; a row of `x.tolist()`: the row's list)
        return kinds.tensor_item(out) if kinds.holds_tensor_items(array) else out.tolist()
    flags = getattr(array, "item_stops", None)
    if flags is not None:  # (the item's own stop_gradient, when the run decides it)
        out.stop_when = registry.bind(READ, (flags, i), {})
    if holds_python_numbers(array):
        out.python_scalar = True
        # (ints kept as floats beside floats: whether this item is an int only the run knows)
        out.number_type_unknown = getattr(array, "mixed_numbers", False)
    return out


def as_number_pairs(array: Variable, kind: int) -> Variable:
    """A new array: the items of `array` (numbers of one type, `KINDS`) as `[value, kind]`."""
    b = _builder()
    out = _new_array(b, convert_dtype("float64"), PAIR, stop=True)
    b.append(AS_PAIRS.name, [b.ref(array)], [out.name], {"kind": kind})
    out.python_items = True
    return out


def as_pairs(array: Variable) -> Variable:
    """An array of Python numbers as `[value, kind]` pairs (itself, if it holds them)."""
    if holds_number_kinds(array):
        return array
    kind = bool if array.dtype.name == "bool" else float if array.dtype.is_floating else int
    out = as_number_pairs(array, KINDS[kind])
    out.mixed_numbers = getattr(array, "mixed_numbers", False)  # (ints kept as floats: the
    return out  # kinds say float, and returning it stays refused)


def array_length(array):
    """The number of elements, as an int64 tensor."""
    if _builder() is None:
        return core.to_tensor(len(array), dtype="int64")
    return registry.bind(LENGTH, (array,), {})


def array_pack(array, items: bool = False):
    """The elements stacked along a new first axis (an empty array: a [0, ...] tensor)."""
    if not items:  # (`items`: of tensor items too)
        kinds.joinable(array)
    return registry.bind(PACK, (array,), {"shape": tuple(array._static_shape),
                                          "dtype": array.dtype.name})


def array_stack(array, axis: int = 0):
    """Stack the elements along a new axis."""
    if _builder() is None:
        return _eager_join(array, "stack", axis)
    kinds.joinable(array)
    return registry.bind(STACK, (array,), {"axis": axis})


def array_concat(array, axis: int = 0):
    """Concatenate the elements along an existing axis."""
    if _builder() is None:
        return _eager_join(array, "concat", axis)
    kinds.joinable(array)
    return registry.bind(CONCAT, (array,), {"axis": axis})


def _eager_join(array, how, axis):
    return getattr(combine, how)(list(array), axis=axis)


combine.ARRAY_JOINS.update(stack=array_stack, concat=array_concat)
