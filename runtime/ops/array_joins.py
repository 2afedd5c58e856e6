"""`a + b` on static tensor arrays (Python's list concatenation): a new array with the entries
of `a`, then those of `b`, each item keeping its own stop_gradient flag (`arrays.item_flags`).
"""
from __future__ import annotations

from .. import core
from ..dtypes import convert_dtype
from . import combine, registry
from .array_number_kinds import (
    AS_TENSOR_ITEMS,
    ITEMS_CHECK,
    KINDS,
    PAIR,
    TENSOR_ITEM_DTYPES,
    holds_number_kinds,
    holds_strs,
    holds_tensor_items,
    item_code,
    joinable,
    string_id,
    tensor_pair,
)
from .arrays import (
    Variable,
    _array_meta,
    _bind_array,
    _builder,
    _new_array,
    array_concat,
    array_pack,
    array_stack,
    array_written,
    as_pairs,
    create_array,
    item_flags,
    item_flags_differ,
)
from .registry import OpError


def _join_kernel(xp, a, b):
    return list(a) + list(b)


def _grad_head_kernel(xp, g, a):
    """The gradient of `a` from that of `a + b`: its first len(a) entries."""
    n = len(a)
    return (list(g) + [None] * n)[:n]


def _grad_tail_kernel(xp, g, a, b):
    """The gradient of `b` from that of `a + b`: the entries after the first len(a)."""
    n, m = len(a), len(b)
    return (list(g) + [None] * (n + m))[n:n + m]


GRAD_HEAD = registry.register("array_grad_head", kernel=_grad_head_kernel, infer=_array_meta,
                              nondiff=True, amp="keep",
                              doc="The first len(a) entries of an array gradient.")
GRAD_TAIL = registry.register("array_grad_tail", kernel=_grad_tail_kernel, infer=_array_meta,
                              nondiff=True, amp="keep",
                              doc="The entries of an array gradient after the first len(a).")
JOIN = registry.register(
    "array_join", kernel=_join_kernel, infer=_array_meta, amp="keep",
    grad=lambda ins, outs, gs, a: [_bind_array(GRAD_HEAD, [gs[0], ins[0]], {}, ins[0]),
                                   _bind_array(GRAD_TAIL, [gs[0], ins[0], ins[1]], {}, ins[1])],
    doc="a + b: the entries of array a, then those of array b (list concatenation).")



def array_joined(a, b) -> Variable:
    """`a + b` where one side is a static tensor array and the other an array or a Python
    list / tuple of tensors: a new array with the entries of `a`, then those of `b`, as
    Python's list concatenation gives."""
    a, b = _numbers_beside_tensors(a, b)
    like = next((x for x in (a, b) if _is_array(x) and holds_tensor_items(x)), None)
    if like is not None:  # (Python numbers and tensors: `[value, is_tensor]` items)
        a, b = (x if _is_array(x) else _tensor_items_of(x, like) for x in (a, b))
        if not all(holds_tensor_items(x) and x.dtype == like.dtype for x in (a, b)):
            joinable(like)
    if not _is_array(a):
        a = _array_of(a, b)
    if not _is_array(b):
        b = _array_of(b, a)
    a, b = number_arrays_alike(a, b)
    if a.dtype != b.dtype:
        raise registry.OpTypeError(f"array + array: '{a.name}' holds {a.dtype.name} but "
                                   f"'{b.name}' holds {b.dtype.name}")
    sa, sb = a._static_shape, b._static_shape
    if sa is not None and sb is not None and len(sa) != len(sb):
        raise OpError(f"array + array: '{a.name}' holds elements of rank {len(sa)} but "
                      f"'{b.name}' of rank {len(sb)}")
    out = _bind_array(JOIN, [a, b], {}, a)
    out._static_shape = sb if sa is None else sa if sb is None else tuple(
        x if x == y else -1 for x, y in zip(sa, sb))
    out._stop_gradient = a.stop_gradient and b.stop_gradient
    if item_flags_differ(a, b):
        # (items whose stop_gradient differ: each one's flag, joined as the items are)
        fa, fb = item_flags(a), item_flags(b)
        out.item_stops = _bind_array(JOIN, [fa, fb], {}, fa)
    return out


def _numbers_beside_tensors(a, b) -> tuple:
    """`a`, `b` where one is an array of 0-d tensors of a dtype an array of tensor items
    takes and the other a list or tuple holding Python numbers (or graph values standing for
    them: a loop counter) beside such tensors: that array as one of `[value, is_tensor]`
    items (`tensors_as_items`), which `array_joined` joins the numbers to."""
    for x, y in ((a, b), (b, a)):
        if _plain_tensors(x) and isinstance(y, (list, tuple)) and any(
                _number_like(v) for v in y) and all(
                _number_like(v) or _plain_tensor_of(v, x.dtype) for v in y):
            items = tensors_as_items(x)
            return (items, y) if x is a else (y, items)
    return a, b


def _plain_tensors(x) -> bool:
    return _is_array(x) and not getattr(x, "python_items", False) and not getattr(
        x, "number_sums", False) and x._static_shape == () and \
        x.dtype.name in TENSOR_ITEM_DTYPES


def _number_like(v) -> bool:
    return type(v) in KINDS or isinstance(v, Variable) and v.kind != "array" and getattr(
        v, "python_scalar", False) and not tuple(v.shape)


def _plain_tensor_of(v, dtype) -> bool:
    return core.is_tensor(v) and not tuple(v.shape) and v.dtype == dtype and not getattr(
        v, "python_scalar", False)


def _tensor_items_of(items, like: Variable) -> Variable:
    """A Python list of Python numbers and 0-d tensors as an array of tensor items like
    `like`'s (`array_number_kinds.holds_tensor_items`)."""
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"can only concatenate a tensor array with a list, a tuple or another "
                        f"tensor array, not {type(items).__name__}")
    arr = create_array(like.dtype)
    arr.python_items, arr._static_shape = True, PAIR
    for i, x in enumerate(items):
        arr = array_written(tensor_pair(x, like), i, arr)
    return arr


def number_arrays_alike(a, b) -> tuple:
    """Two arrays of Python numbers `a` and `b` (a list of ints joined with one of floats, or
    with `[value, kind]` pairs) held alike: both as pairs where their types differ."""
    if not (getattr(a, "python_items", False) and getattr(b, "python_items", False)) or (
            a.dtype == b.dtype and holds_number_kinds(a) == holds_number_kinds(b)):
        return a, b
    return as_pairs(a), as_pairs(b)


def _is_array(v) -> bool:
    return isinstance(v, Variable) and v.kind == "array"


def _array_of(items, like: Variable) -> Variable:
    """A Python list or tuple of tensors as a static array holding `like`'s dtype."""
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"can only concatenate a tensor array with a list, a tuple or another "
                        f"tensor array, not {type(items).__name__}")
    if holds_strs(like) != any(type(x) is str for x in items) or holds_strs(like) and not \
            all(type(x) is str for x in items):
        raise TypeError(_strs_beside_others(like, items))
    if holds_strs(like) and all(type(x) is str for x in items):  # (ids of strs)
        items = [core.constant(string_id(x), dtype=like.dtype) for x in items]
        arr = create_array(like.dtype)
        arr.python_items = True
        arr._static_shape = ()
        for i, x in enumerate(items):
            arr = array_written(x, i, arr)
        return arr
    numbers = getattr(like, "python_items", False) and all(type(x) in KINDS for x in items)
    held = bool if like.dtype.name == "bool" else float if like.dtype.is_floating else int
    if numbers and (holds_number_kinds(like) or any(type(x) is not held for x in items)):
        arr = create_array("float64")  # (Python numbers of several types: each its own)
        arr._static_shape = PAIR
    else:
        arr = create_array(like.dtype)
    arr.python_items = numbers
    for i, x in enumerate(items):
        arr = array_written(x, i, arr)
    return arr


def _strs_beside_others(like: Variable, items) -> str:
    """The error of `lst + items` (or `+=`) where one side holds Python strs and the other
    other values, and `lst` is a list whose length a tensor decides."""
    if holds_strs(like):
        other = next(x for x in items if type(x) is not str)
        return (f"a list of Python strs whose length a loop or if whose condition is a tensor "
                f"decides is joined (`+`) with a list holding {type(other).__name__} items: "
                "strs cannot be mixed with other values in such a list (it is a tensor array "
                "of the strs' ids, and one array holds one kind of item). Keep strs and other "
                "values in separate lists.")
    text = next(x for x in items if type(x) is str)
    held = "Python numbers" if getattr(like, "python_items", False) else "tensors"
    return (f"strs cannot be added to a list of {held} in a loop or if whose condition is a "
            f"tensor: here `+` joins it with a list holding the str {text!r:.40}. Such a list "
            f"is a tensor array of its {held}, and one array holds one kind of item. Keep strs "
            "and other values in separate lists.")


def _tensors_as_items_kernel(xp, arr):
    return [xp.stack([xp.asarray(a), xp.ones((), xp.asarray(a).dtype)]) for a in arr]


def _items_grad_kernel(xp, g):
    return [None if x is None else x[0] for x in g]


ITEMS_GRAD = registry.register(
    "array_tensor_items_grad", kernel=_items_grad_kernel, infer=_array_meta, nondiff=True,
    amp="keep", doc="The gradient of each tensor of an array from its item's gradient.")
# an array of 0-d tensors as `[value, True]` items (d2s: a list of tensors that gets Python
# numbers where a tensor decides its length)
TENSORS_AS_ITEMS = registry.register(
    "array_tensors_as_items", kernel=_tensors_as_items_kernel, infer=lambda *a, **k: None,
    amp="keep", grad=lambda ins, outs, gs, a: [_bind_array(ITEMS_GRAD, [gs[0]], {}, ins[0])],
    doc="The items of arr (0-d tensors) as [value, is_tensor=1] items.")


def tensors_as_items(array: Variable) -> Variable:
    """A new static tensor array: the 0-d tensors of `array` as the `[value, is_tensor=1]`
    items of an array of Python numbers and tensors of their dtype (gradients flow back to
    them)."""
    b = _builder()
    out = _new_array(b, array.dtype, PAIR, stop=array.stop_gradient)
    b.append(TENSORS_AS_ITEMS.name, [b.ref(array)], [out.name], {})
    out.python_items = True
    out._d2s_tuple = getattr(array, "_d2s_tuple", False)
    return out


def as_tensor_items(array: Variable, dtype) -> Variable:
    """A new static tensor array: the items of `array` (Python numbers of one type, exact in
    `dtype`, which the run checks) as the `[value, is_tensor=0]` items of an array of Python
    numbers and 0-d tensors of `dtype` (`array_number_kinds.holds_tensor_items`); `array`
    itself if it is one."""
    if holds_tensor_items(array):
        return array
    b = _builder()
    out = _new_array(b, convert_dtype(dtype), PAIR, stop=True)
    attrs = {"dtype": out.dtype.name}
    codes = number_codes(array, out.dtype)
    if codes is None:
        raise TypeError(f"an array of {array.dtype.name} cannot become one of Python numbers "
                        f"and tensors of {out.dtype.name}")
    attrs.update(codes)
    b.append(AS_TENSOR_ITEMS.name, [b.ref(array)], [out.name], attrs)
    out.python_items = True
    out._d2s_tuple = getattr(array, "_d2s_tuple", False)
    return out


def number_codes(array, dtype):
    """The attributes of `AS_TENSOR_ITEMS` that give the Python numbers of `array` (of one
    type, or `[value, kind]` pairs) their codes among tensors of `dtype`
    (`array_number_kinds.item_code`); None where such an array cannot hold one of them (a
    float beside int64 tensors)."""
    if holds_number_kinds(array):
        codes = [item_code(k, dtype) for k in sorted(KINDS, key=KINDS.get)]
        return None if None in codes else {"codes": codes}
    kind = bool if array.dtype.name == "bool" else float if array.dtype.is_floating else int
    code = item_code(kind, dtype)
    return None if code is None else {"code": code}


def _items_joined(how: str):
    """`rt.stack` / `rt.concat` of a static tensor array; of one holding Python numbers and
    0-d tensors, the tensors stacked (`stack` along its only axis), with a check, when the
    program runs, that no item is a Python number there (eager's stack raises)."""
    plain = {"stack": array_stack, "concat": array_concat}[how]

    def run(array, axis: int = 0):
        if not holds_tensor_items(array):
            return plain(array, axis)
        if how != "stack" or axis not in (0, -1) or ITEMS_CHECK[0] is None:
            joinable(array)  # (refused)
        items = array_pack(array, items=True)
        ITEMS_CHECK[0](items[:, 1], f"{how}()")
        return items[:, 0]

    return run


combine.ARRAY_JOINS.update(stack=_items_joined("stack"), concat=_items_joined("concat"))
