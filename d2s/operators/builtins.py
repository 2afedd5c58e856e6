"""Built-ins whose meaning depends on tensors: `print`, `len`, `range`, casts, `isinstance`,
`assert`, and `x.shape` (unknown dims become tensors); on Python values each is the built-in.
"""
from __future__ import annotations

import builtins

import numpy as np

import runtime as rt
from runtime.core import active_builder
from runtime.ops.array_number_kinds import holds_number_kinds, holds_python_numbers
from runtime.program import zero_division
from runtime.program.debug_ops import raise_error

from .. import report
from ..errors import ConversionError
from . import chosen_text, key_flags, none_or_tensor, number_or_tensor, str_arrays, struct_queries
from .array_queries import array_query
from .array_sums import array_sum
from .container_types import instance_of
from .exceptions import short_name
from .flagged_key_lists import key_list, values_sum
from .distinct_numbers import distinct_count
from .flagged_extremes import flagged_extreme
from .lists import StructArray
from .logical import set_len, set_truth, to_bool
from .loop_initial import is_empty_array
from .loops import TensorEnumerate, TensorRange, TensorZip
from .made_sets import MadeFrozenSet, MadeSet
from .number_pairs import pairs_extreme
from .number_picks import as_tensor_like, number_extreme, python_bool
from .print_values import FString, as_print_arg, eager_int, print_objects
from .sort_values import extreme_by_key, sort_in_place, sorted_items
from .tensor_items import refuse_use
from .text import assert_at_run_time
from .traced_keys import check_decided, check_unique, set_flags
from .variables import is_variable, user_origin, where


def print_(*args, sep=" ", end="\n", file=None, flush=False):
    """`print`: inside a converted function it is an op that prints, every time the program
    runs it (and only on the branch taken), exactly what eager `print` would; Python values
    are formatted now, tensors when the program runs."""
    report.record("print", next((a for a in args if is_variable(a)), None))
    args = [as_print_arg(a) for a in args]
    graph = any(is_variable(a) or type(a) is FString for a in args)
    if not graph and not _building():
        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    if not any(type(a) is FString for a in args):
        rt.static.py_print(*args, sep=sep, end=end, file=file)
        return
    objects = []  # the pieces, with the separators written out
    for i, a in enumerate(args):
        if i:
            objects.append(sep)
        objects.extend(a if type(a) is FString else [a])
    shown, formats = print_objects(objects)
    rt.static.py_print(*shown, sep="", end=end, file=file, formats=formats)


def _building() -> bool:
    """Whether a static program is being built (a converted function being traced)."""
    return active_builder() is not None


def len_(x):
    """`len`: a tensor array's length (also of a list of tuples / dicts, an array per part)
    stands for a Python int; an unknown first dim is an int64 tensor."""
    if chosen_text.is_run_str(x) and getattr(x, "texts", None) is not None:
        return chosen_text.text_op(builtins.len, "len()", x)  # (of each str it may be)
    if isinstance(x, str_arrays.JoinedStr):  # (`len("".join(chars))` of a list a tensor sizes)
        return x.length()
    if isinstance(x, StructArray) or is_variable(x) and x.is_array:
        n = eager_int(x.length() if isinstance(x, StructArray) else rt.static.array_length(x))
        n.python_scalar = True  # a list's length: a Python int when returned
        return n
    if is_variable(x):
        if x.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return x.shape[0] if x.shape[0] >= 0 else eager_int(rt.shape(x)[0])
    if set_flags(x):  # (a set whose items a tensor `if` decides: the run's count)
        return set_len(x)
    if (n := distinct_count(x)) is not None:  # (`len(set(x.tolist()))`: counted by the run)
        return n
    check_unique(x, "len()")
    flags = key_flags.flags_of(x.mapping if type(x) in _VIEWS else x)  # (`len(d.keys())`)
    if flags:  # (keys set by one branch of a tensor `if`: counted where they exist)
        n = builtins.len(x) - builtins.len(flags) + builtins.sum(
            rt.cast(f, "int64") for f in flags.values())
        n.python_scalar = True
        return n
    return builtins.len(x)


def reversed_(seq, /):
    """`reversed`; of a tensor array (a list grown under a tensor condition) the array
    reversed when the program runs (`arr[::-1]`, which keeps the gradient path)."""
    if _is_list_array(seq):
        return seq[::-1]
    _counted("reversed()", seq)
    return builtins.reversed(seq)


def list_(*args):
    """`list`; of a tensor array (a list grown under a tensor condition) a copy of the array
    made when the program runs (`arr[:]`, which keeps the gradient path): Python iteration of
    it here cannot know its length."""
    if len(args) == 1 and _is_list_array(args[0]):
        return args[0][:]
    if len(args) == 1 and (keys := key_list(args[0], "list()")) is not None:
        return keys  # (a dict's keys present on this run)
    _counted("list()", *args)
    return builtins.list(*args)


def tuple_(*args):
    """`tuple`; of a tensor array a copy of it (as `list_`) that converted code treats as a
    tuple: `append`, `pop` and the other list methods on it raise AttributeError."""
    if len(args) == 1 and _is_list_array(args[0]):
        out = args[0][:]
        out._d2s_tuple = True
        return out
    if len(args) == 1 and (keys := key_list(args[0], "tuple()")) is not None:
        return tuple_(keys)  # (an array: marked a tuple)
    _counted("tuple()", *args)
    return builtins.tuple(*args)


def sorted_(iterable, /, *, key=None, reverse=False):
    """`sorted` (refused of an undecided set, as every read of it); by graph-value keys, the
    order is decided when the program runs (`sort_values`)."""
    if key is None and (keys := key_list(iterable, "sorted()", sort=True)) is not None:
        return keys[::-1] if reverse else keys  # (a dict's keys present on this run)
    _counted("sorted()", iterable)
    if _is_list_array(iterable):  # (a list the program grows)
        return struct_queries.sorted_keyed(iterable, key, reverse)
    return sorted_items(builtins.list(iterable), key, reverse)


def set_(*args):
    """`set` (of an undecided set: refused, as `sorted_`)."""
    _decided("set()", *args)
    return MadeSet(*args)  # (its algebra refuses computed items: `made_sets`)


def frozenset_(*args):
    """`frozenset` (of an undecided set: refused, as `sorted_`)."""
    _decided("frozenset()", *args)
    return MadeFrozenSet(*args)


def _number_kind(v) -> str:
    return v.dtype.kind if is_variable(v) else "f" if isinstance(v, float) else "i"


def _numbers(items: list) -> bool:
    """Whether `items` are Python numbers, or graph values standing for them."""
    return builtins.all(type(v) in (bool, int, float) or is_variable(v) and getattr(
        v, "python_scalar", False) for v in items)


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _counted(what: str, *args) -> None:
    """Refuse `what`, whose result has an item per item of its argument, reading a set or
    dict that holds a value the converted code computed (`traced_keys.check_unique`: equal
    values would be different items while tracing), or an undecided set (`_decided`)."""
    for x in args:
        if isinstance(x, dict) or type(x) in _VIEWS:  # (keys on some paths only: which
            key_flags.refuse_iteration(x, what)  # keys, the run decides)
        check_unique(x, what)


def _decided(what: str, *args) -> None:
    """Refuse `what` reading a set whose items the branches of a tensor `if` left to the run
    (`traced_keys.check_decided`, a ConversionError at the user's line)."""
    for x in args:
        if isinstance(x, (set, frozenset)):
            check_decided(x, what)
        else:  # (a dict with keys on some paths only: which keys, the run decides)
            key_flags.refuse_iteration(x, what)


def _is_list_array(x) -> bool:
    """A list that is tensor arrays: of tensors, or of structures (`StructArray`)."""
    return isinstance(x, StructArray) or is_variable(x) and x.is_array


def sum_(iterable, /, start=0):
    """`sum`; over a tensor array (a list whose length is decided when the program runs) the
    sum of its elements plus `start`, and where it is empty eager's `start` (`array_sums`)."""
    if (total := values_sum(iterable, start)) is not None:
        return total  # (`sum(d.values())` of a dict with keys on some paths)
    if not (is_variable(iterable) and iterable.is_array):
        _counted("sum()", iterable)
        items = builtins.list(iterable)
        out = builtins.sum(items, start)
        if is_variable(out) and _numbers(items + [start]):
            out.python_scalar = True  # (`sum(p in seen for p in t)`: a Python int when
        return out  # returned)
    return array_sum(iterable, start)


def range_(*args):
    """`range`; with a graph bound or step it is a TensorRange that `for_loop` runs as a
    while op."""
    if not any(is_variable(a) for a in args):
        return builtins.range(*args)
    # (a one-element bound of shape [1] is the Python int eager's `range` takes: rank 0,
    # as the loop's own test and `break` flag are)
    args = tuple(_scalar(a) if is_variable(a) and a.ndim and _counted_bound(a) else a
                 for a in args)
    start, stop, step = (0, args[0], 1) if builtins.len(args) == 1 else (
        args[0], args[1], args[2] if builtins.len(args) > 2 else 1)
    return TensorRange(start, stop, step)


def _counted_bound(x) -> bool:
    _one_element(x, "int")  # (eager's `range(t)` takes `int(t)`: its error too)
    return not x.is_array


def _unknown_length(x) -> bool:
    return isinstance(x, (StructArray, TensorEnumerate, TensorRange, TensorZip)) or (
        is_variable(x) and (x.is_array or x.ndim > 0 and x.shape[0] < 0))


def enumerate_(iterable, start=0):
    """`enumerate`; over a graph value whose first dim is unknown (a tensor array, a list of
    tuples / dicts as tensor arrays, or a `zip_` of one) it is a TensorEnumerate that
    `for_loop` runs as a while op."""
    if _unknown_length(iterable):
        return TensorEnumerate(iterable, start)
    if is_variable(iterable) and iterable.ndim:
        return builtins.enumerate([iterable[i] for i in builtins.range(iterable.shape[0])],
                                  start)
    _counted("enumerate()", iterable)
    return builtins.enumerate(iterable, start)


def zip_(*iterables, strict=False):
    """`zip`; when a part is a graph value of unknown length it is a TensorZip that
    `for_loop` runs as a while op (over the shortest part, as Python's `zip`)."""
    if any(_unknown_length(x) for x in iterables):
        if strict:
            raise TypeError("zip(..., strict=True) over a tensor whose length is only known "
                            "when the program runs: the check cannot happen while converting; "
                            "compare the lengths with a tensor condition instead")
        return TensorZip(iterables)
    _counted("zip()", *iterables)
    return builtins.zip(*iterables, strict=strict)


def max_(*args, **kwargs):
    """`max`; of values some of which are graph values: an elementwise `maximum`."""
    if (out := flagged_extreme(builtins.max, args, kwargs)) is not None:
        return out  # (`max(d, key=d.get)` of a dict with keys on some paths)
    _decided("max()", *args)
    return _extreme(builtins.max, "maximum", args, kwargs)


def min_(*args, **kwargs):
    """`min`; of values some of which are graph values: an elementwise `minimum`."""
    if (out := flagged_extreme(builtins.min, args, kwargs)) is not None:
        return out
    _decided("min()", *args)
    return _extreme(builtins.min, "minimum", args, kwargs)


def _extreme(py, op, args, kwargs):
    if builtins.len(args) == 1 and _is_array(args[0]):
        return _array_extreme(py, op, args[0], kwargs)
    if builtins.len(args) == 1 and not is_variable(args[0]):
        args = (builtins.list(args[0]),)  # a generator is read once, here
    values = args[0] if builtins.len(args) == 1 and not is_variable(args[0]) else args
    if kwargs or builtins.len(args) == 1 and is_variable(args[0]) or not builtins.any(
            is_variable(v) for v in values):
        return extreme_by_key(py, args, kwargs)
    values = builtins.list(values)
    if _numbers(values):
        return number_extreme(py, op, values)
    out = values[0]
    for v in values[1:]:
        if not is_variable(out) and not is_variable(v):
            out = py(out, v)
            continue
        ref = out if is_variable(out) else v
        out = getattr(rt, op)(as_tensor_like(out, ref), as_tensor_like(v, ref))
    return out


def _is_array(x) -> bool:
    return is_variable(x) and x.is_array and str_arrays.not_strs(x, "max(), min(), any()") is x


def _empty_check(arr, what: str, exc: BaseException, fill):
    """`fill()` where the tensor array `arr` has items, else (when the program runs) a raise
    op of `exc`: Python's result for an empty list (`what`) is not a tensor or is an error."""

    src = user_origin()
    shape = [d if d >= 0 else 1 for d in (arr._static_shape or ())]

    def empty():
        raise_error(exc, at=f"{short_name(src.filename)}:{src.lineno}" if src else "")
        return rt.zeros(shape, arr.dtype)  # never read: the op above raises

    return rt.static.nn.cond(rt.static.array_length(arr) > 0, fill, empty)


def _array_extreme(py, op, arr, kwargs):
    """`max(items)` / `min(items)` of a tensor array (a comprehension filtered by a tensor)
    of one-element tensors: the largest / smallest item; empty: Python's ValueError when the
    program runs. Items of more elements are compared by their truth in Python (ambiguous in
    eager code too): a TypeError naming the line."""
    name, shape = py.__name__, list(arr._static_shape or ())
    refuse_use(arr, f"{name}()")
    if holds_number_kinds(arr) and not kwargs:  # (Python numbers of several types)
        return pairs_extreme(name, arr)
    if kwargs or any(d != 1 for d in shape):
        src = user_origin()
        raise TypeError(
            f"{name}() ({where(src)}) of a list whose length is decided when the program runs "
            f"(a comprehension or loop filtered by a tensor), of items of shape {shape}"
            f"{' with ' + ', '.join(kwargs) if kwargs else ''}: d2s takes the {name} of "
            f"one-element items without keywords. Use rt.stack(items).{name}(0) for an "
            "elementwise result, or keep every item and mask it (rt.where).")
    out = _empty_check(arr, name, ValueError(f"{name}() arg is an empty sequence"),
                       lambda: getattr(rt, name)(rt.static.array_stack(arr), axis=0))
    if holds_python_numbers(arr):  # (`max(lengths)` of Python ints: a Python int, as eagerly)
        out.python_scalar = True
        out.number_type_unknown = getattr(arr, "mixed_numbers", False)
    return out


def all_(iterable):
    """`all`; over graph values: a bool tensor (the logical and of their truth values)."""
    _decided("all()", iterable)
    return python_bool(_fold(iterable, True, "logical_and", builtins.all))


def any_(iterable):
    """`any`; over graph values: a bool tensor (the logical or of their truth values)."""
    _decided("any()", iterable)
    return python_bool(_fold(iterable, False, "logical_or", builtins.any))


def _fold(iterable, unit, op, py):
    if _is_array(iterable):  # a comprehension filtered by a tensor: a bool tensor

        arr = iterable

        def fold():
            items = rt.static.array_stack(arr)
            if arr.dtype != rt.bool:
                items = items != 0
            return (rt.all if op == "logical_and" else rt.any)(items)

        if any(d != 1 for d in (arr._static_shape or ())):
            src = user_origin()
            raise TypeError(
                f"{py.__name__}() ({where(src)}) of a list of tensors with more than one "
                "element each: their truth is ambiguous (eager code raises too). Reduce each "
                "item first (`.any()` / `.all()`).")
        return to_bool(rt.static.nn.cond(rt.static.array_length(arr) > 0, fold,
                                         lambda: rt.full([], unit, "bool")))
    items = builtins.list(iterable) if not is_variable(iterable) else None
    if items is None or not builtins.any(is_variable(x) for x in items):
        return py(iterable if items is None else items)

    out = None
    for x in items:
        b = to_bool(x)
        if is_variable(b) and b.ndim:
            b = (rt.all if op == "logical_and" else rt.any)(b)
        if not is_variable(b):
            if b != unit:
                return b
            continue
        out = b if out is None else getattr(rt, op)(out, b)
    return unit if out is None else out


def _one_element(x, kind: str) -> None:
    """Eager's ValueError for `int()`/`float()`/`bool()` of a tensor whose (known) size is
    not 1: the same class and message in converted code."""
    shape = list(x.shape)
    if not x.is_array and all(d >= 0 for d in shape) and _prod(shape) != 1:
        raise ValueError(
            f"{kind}() of a tensor with shape {shape} is ambiguous: only one-element "
            f"tensors convert to Python {kind}. Use .any() or .all() for a truth value.")


def _scalar(x):
    """A one-element graph value as a rank-0 one: the Python number eager code gets has no
    shape (`rt.to_tensor(int(t))` is a 0-d tensor, `[int(t), 2]` stacks)."""
    if x.is_array or not x.ndim:
        return x
    out = rt.reshape(x, [])
    for mark in ("python_scalar", "numpy_array"):
        if getattr(x, mark, False):
            setattr(out, mark, True)
    return out


def _prod(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def bool_(x=False):
    if is_variable(x):
        _one_element(x, "bool")
        x = number_or_tensor.exact(_scalar(x), "bool")
        out = to_bool(x)
        out = rt.assign(out) if out is x else out  # (x itself stays a tensor)
        out.python_scalar = True  # a Python bool, as eager `bool(t)` is
        return out
    truth = set_truth(x)  # (a set whose items, a dict whose keys, a tensor decides)
    return builtins.bool(x) if truth is None else truth


def int_(x=0, *base):
    if is_variable(x):
        _one_element(x, "int")
        out = _number(number_or_tensor.exact(_scalar(x), "int64"), "int64")
        if x.dtype.kind == "b":  # (a dict key of two values: `computed_keys._domain`)
            out.known_values = (0, 1)
        return out
    return builtins.int(x, *base)


def float_(x=0.0):
    if is_variable(x):
        _one_element(x, "float")
        return _number(number_or_tensor.exact(_scalar(x), "float64"), "float64")
    return builtins.float(x)


def round_(number, ndigits=None):
    """`round()`; of a graph value: Python's rounding (halves to even) as graph ops, to
    `ndigits` decimals (a number, not a tensor) by scaling first, as NumPy's `round` does.
    `round(x)` stands for the Python int eager code gets, `round(x, n)` keeps `x`'s type."""
    if not is_variable(number):
        return builtins.round(number, ndigits)
    if is_variable(ndigits):
        raise TypeError("round(): ndigits is a tensor computed by the converted code; the "
                        "number of digits must be a Python int")
    if number.dtype.kind in "iub" and (ndigits is None or ndigits >= 0):
        return number
    scale = 10.0 ** (ndigits or 0)
    value = rt.assign(number)
    value.python_scalar = False  # (a Python number's stand-in takes the others' dtype)
    scaled = value * scale if ndigits else value
    low = rt.floor(scaled)
    rest = scaled - low
    # a half goes to the even neighbour: `low` when it is even, `low + 1` when odd
    half = rt.full_like(rest, 0.5)
    up = rt.where(rt.equal(rest, half), rt.remainder(low, rt.full_like(low, 2)),
                  rt.greater_than(rest, half).astype(low.dtype))
    out = low + up
    if ndigits is None:
        return int_(out)
    out = out / scale if ndigits else out
    # a zero keeps the number's sign, as Python's rounding of a float does (-0.0 for -1e-5)
    out = rt.where(rt.equal(out, rt.zeros_like(out)), value * 0.0, out)
    out.python_scalar = getattr(number, "python_scalar", False)
    return out


def divmod_(a, b):
    """`divmod()`; of values standing for Python numbers (`int(t)`, `float(t)`): Python's
    `(a // b, a % b)` as graph ops (floored, the remainder with the divisor's sign). A tensor
    has no `divmod`, as eagerly."""
    if not (is_variable(a) or is_variable(b)):
        return builtins.divmod(a, b)
    for v in (a, b):
        if is_variable(v) and not v.python_scalar:
            raise TypeError("unsupported operand type(s) for divmod(): "
                            f"{_type_name(a)!r} and {_type_name(b)!r}")
    error = zero_division.error_of("floor_divide", (a, b))
    if is_variable(b) and "float" in str(error):  # (Python's message for divmod of floats)
        b = zero_division.CHECK[0](b, ZeroDivisionError("float divmod()"))
    return a // b, a % b


def _type_name(v) -> str:
    return ("Tensor" if not v.python_scalar else v.dtype.kind == "f" and "float" or "int") \
        if is_variable(v) else type(v).__name__


# list method -> how it compares items, and what to write instead with tensors
_COMPARING = {
    "index": ("finds the item with ==",
              ("keep the positions you need as Python ints, or compare as tensors: "
               "`rt.nonzero(rt.stack(lst) == v)`")),
    "count": ("counts the items equal to it by ==",
              "compare as tensors: `(rt.stack(lst) == v).sum()`"),
    "sort": ("orders the items with <",
             ("sort them as a tensor: `rt.sort(rt.stack(lst))`, or `rt.argsort` to reorder "
              "other values")),
}


def list_query(obj, method: str):
    """`obj.<method>` for `index`, `count`, `sort`: on a Python list or tuple compared with
    graph values, the comparison's truth exists only when the program runs, so the `bool()`
    of it that the method takes becomes an error saying so (at the user's line)."""
    if isinstance(obj, StructArray) or is_variable(obj) and obj.is_array:
        return struct_queries.query(obj, method)  # (a list the program grows)
    if is_empty_array(obj) and method != "sort" and obj and all(map(is_variable, obj)):
        # (a graph loop's first look at its body: the list is an array when it runs)
        return array_query(rt.static.create_array(obj[0].dtype, list(obj)), method)
    bound = getattr(obj, method)
    if method == "sort" and isinstance(obj, list):
        return sort_in_place(obj)
    if not isinstance(obj, (list, tuple)):
        return bound

    def call(*args, **kwargs):
        try:
            return bound(*args, **kwargs)
        except TypeError:
            if not any(is_variable(v) for v in (*obj, *args)):
                raise
        if method != "sort" and obj and args and _numbers([*obj, args[0]]):
            # (Python numbers the program computes: compared when it runs, as in an array)
            kind = "float64" if any(_number_kind(v) == "f" for v in obj) else "int64"
            items = [rt.cast(v, kind) if is_variable(v) else rt.to_tensor(v, kind) for v in obj]
            return array_query(rt.static.create_array(kind, items), method)(*args, **kwargs)
        how, advice = _COMPARING[method]
        raise ConversionError(
            f"{type(obj).__name__}.{method}() with tensors computed by the converted code: it "
            f"{how}, and the truth of a comparison of such tensors is known only when the "
            f"program runs (eager code decides it value by value). Instead, {advice}.")
    return call


def _number(x, dtype: str):
    """The graph value standing for the Python number `int(x)` / `float(x)`: an int64 or a
    float64 (Python's int and float hold what those hold: Paddle's converted int32 and float32
    wrap 3e9 and round 2**24 + 1), combined with a tensor as a Python number is (it takes the
    tensor's dtype: `Variable.python_scalar`). A number has no gradient path back to `x` in
    eager mode, so neither has this (Paddle's converted `float()` keeps one, and its
    gradients differ from its eager mode's)."""
    out = rt.cast(x, dtype)
    if out is x or not out.stop_gradient:
        # (a cast to its own dtype is the value itself: a copy is the number)
        out = rt.assign(x) if out is x else out
        out.stop_gradient = True
    out.python_scalar = True
    return out


def isinstance_(obj, cls):
    """`isinstance`; a graph value is a `rt.Tensor`, a tensor array a list (`container_types`)."""
    classes = cls if isinstance(cls, tuple) else (cls,)
    if (found := instance_of(obj, classes)) is not None:  # (a tensor array: list or tuple)
        return found
    if is_variable(obj) and obj.numpy_array and obj.number_when is None:  # (`x.numpy()`:
        # eager's NumPy array, or a NumPy scalar; on some runs only: `none_or_tensor`)
        kind = np.dtype(obj.dtype.name).type if obj.numpy_scalar else np.ndarray
        return any(isinstance(c, type) and issubclass(kind, c) for c in classes)
    if is_variable(obj):
        found = none_or_tensor.instance_of(obj, classes)  # (None, a number on some runs)
        if found is not None or any(c is rt.Tensor for c in classes):
            return True if found is None else found
    return builtins.isinstance(obj, cls)


def assert_(test, message=None):
    """`assert test, message()`; a graph test is checked when the program runs."""
    report.record("assert", test)
    if is_variable(test):
        return assert_at_run_time(test, message)
    if not test:
        raise AssertionError(message()) if message is not None else AssertionError()


def shape(x):
    """`x.shape`; on a graph value the unknown (-1) dims are int64 tensors read at run time,
    so Python arithmetic on shapes keeps working for any batch size."""
    s = number_or_tensor.read_by_user(x, "shape")  # (a number on some runs: checked)
    if not is_variable(x) or all(d >= 0 for d in s):
        return s
    dynamic = rt.shape(x)
    return [d if d >= 0 else eager_int(dynamic[i]) for i, d in enumerate(s)]


def size(x):
    """`x.size`; on a graph value with unknown (-1) dims it is an int64 tensor computed at run
    time (the product of the static shape would be a negative constant)."""
    s = number_or_tensor.read_by_user(x, "size")  # (a number on some runs: checked)
    if not is_variable(x) or all(d >= 0 for d in x.shape):
        return s
    return eager_int(rt.numel(x))
