"""List operations that generated code calls (see `d2s.converters.lists`).

A Python list is changed in place and returned, as `list.append` would change it; inside a
graph loop the list is a tensor array and the new array is returned. A list of tuples / dicts
/ lists of tensors whose length depends on a tensor is a `StructArray`: one tensor array per
leaf of the structure, all of the same length.
"""
from __future__ import annotations

import sys

import runtime as rt
from runtime.core import is_tensor as _is_tensor
from runtime.ops.array_number_kinds import PAIR, holds_number_kinds, needs_pairs
from runtime.ops.arrays import (
    array_inserted,
    array_pop,
    array_popped,
    array_written,
    as_pairs,
    holds_python_numbers,
)
from runtime.pytree import flatten, unflatten

from .. import report
from . import aliases, key_flags, str_arrays, tensor_items
from .computed_keys import check_pop
from .mutation import StateChangeError
from .set_algebra import READING_METHODS, check_items, set_method
from .variables import RunSizedList, is_variable, user_origin, where


def list_append(target, value):
    """`target.append(value)`, returning the (possibly new) list."""
    report.record("list", target)
    _not_a_tuple(target, "append")
    if isinstance(target, StructArray):
        return target.appended(value)
    if is_variable(target) and target.is_array:
        if isinstance(value, (tuple, list, dict)):
            _no_structures(value)
        array, value = _as_held(target, value)
        n = rt.static.array_length(target)
        return rt.static.array_write(value, n, target) if array is target else \
            array_written(value, n, array)
    target.append(value)
    return target


def _as_held(target, value) -> tuple:
    """(the array to write into, the value as it holds it) for `value` appended to the tensor
    array `target`: its pairs (each item's Python type beside it) where the value's type
    differs from the numbers it holds, else `target` and the value in its dtype (a str's id
    in an array of strs: `str_arrays`)."""
    held = str_arrays.held_str(target, value)
    if held is not None:
        return target, held
    mixed = tensor_items.held(target, value)  # (Python numbers and tensors: `tensor_items`)
    if mixed is not None:
        return mixed
    if needs_pairs(target, value):
        return (target if holds_number_kinds(target) else as_pairs(target)), value
    _number_fits(target, value)
    _mark_mixed(target, value)
    return target, _dtype_fits(target, value)


def _written(value, n, array):
    """A new array: the part `value` of an item appended to a list of structures written
    into its array `array` at `n`."""
    array, value = _as_held(array, value)
    return array_written(value, n, array)


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def list_method(target, method, *args):
    """`target.<method>(*args)` for a method that changes a list in place (`extend`,
    `insert`, `clear`, `remove`, `reverse`), returning the (possibly new) list, so the list is state of
    the branch or loop around it (a tensor `if` whose branches leave it with different lengths
    makes it a tensor array). On anything but a tensor array it is the method call itself."""
    report.record("list", target)
    _not_a_tuple(target, method)
    array = isinstance(target, StructArray) or is_variable(target) and target.is_array
    if not array:
        if method == "extend" and args and isinstance(args[0], (dict,) + _VIEWS):
            key_flags.refuse_iteration(args[0], "`.extend()`")  # (keys on some paths only)
        if isinstance(target, (set, frozenset)) and method in READING_METHODS:
            set_method(getattr(target, method))(*args)  # (`seen.remove(p)`: `set_algebra`)
            return target
        try:
            getattr(target, method)(*args)
        except TypeError as e:  # remove(v): a graph value compared with == (bool of it)
            if method != "remove" or not any(is_variable(x) for x in target):
                raise
            _refuse_remove(e)
        return target
    if method == "extend" and len(args) == 1 and isinstance(args[0], (list, tuple)):
        for value in args[0]:
            target = list_append(target, value)
        return target
    if method == "clear" and not args:  # an empty array of the same element type
        return target.empty() if isinstance(target, StructArray) else _in_place(
            target, _empty_like(target))
    if method == "insert" and len(args) == 2 and not isinstance(target, StructArray):
        return _insert(target, *args)
    if method == "reverse" and not args:  # reversed when the program runs
        reversed_array = target[::-1]
        return reversed_array if isinstance(target, StructArray) else _in_place(
            target, reversed_array)
    src = user_origin(2)
    if method == "remove":
        _refuse_remove(None)
    what = ("insert() on a list of tuples/dicts" if method == "insert" else f"{method}()")
    raise StateChangeError(
        f"{what} on a list whose length depends on a tensor ({where(src)}): such a list is "
        "a tensor array, which supports append, extend by a list, insert (of a tensor), "
        "clear, reverse, pop, len, indexing and iteration. Build a new list with those instead.", src)


def dict_changed(target, _result):
    """`d.update({...})` / `d.setdefault(k, v)` as a statement (the `lists` pass: `d =
    _d2s.dict_changed(d, d.update(...))`): the dict itself, which the call changed, so a
    graph loop or tensor `if` around it carries the dict as state (a key it adds there gets
    a presence flag: `loop_new_keys`, `branch_keys`)."""
    return target


def _not_a_tuple(target, method):
    """`tuple(arr)` of a tensor array is an array too (`tuple_`); as a tuple it has no list
    methods."""
    if (isinstance(target, StructArray) or is_variable(target)) and getattr(
            target, "_d2s_tuple", False):
        raise AttributeError(f"'tuple' object has no attribute '{method}'")


def _refuse_remove(cause):
    src = user_origin(3)
    raise StateChangeError(
        f"remove() of a tensor from a list of tensors ({where(src)}): remove finds the item "
        "with ==, which on tensors compares element by element (eager code raises on a tensor "
        "of more than one element, and on one element removes by value, a decision only the "
        "run can make). Pop it by its index instead (lst.pop(i)).", src) from cause


def _in_place(target, new):
    """`target` (a tensor array) refers to the array `new` afterwards, as `list.insert` and
    `list.clear` change the list itself: every name bound to the list (an alias, a loop's
    state that is also a changed object) sees the change, as `append` and `pop` do."""
    target._inplace_update(new)
    return target


def _number_fits(array, value) -> None:
    """A Python number put into a tensor array (a list grown by the program) must keep its
    value in the array's dtype: a float into a list of ints (int64) would lose its fraction,
    where Python's list holds both; refused at the user's line."""
    if type(value) not in (int, float) or array.dtype.name not in ("int64", "bool"):
        return
    if type(value) is int and array.dtype.name == "int64":
        return
    src = user_origin(3)
    kind = "ints" if array.dtype.name == "int64" else "bools"
    raise StateChangeError(
        f"a list of Python {kind} that a loop or if whose condition is a tensor grows is a "
        f"tensor array of {array.dtype.name}, and here ({where(src)}) it gets the "
        f"{type(value).__name__} {value!r}, which that dtype cannot hold. Start the list with "
        f"values of that type (for example `[0.0]`, or append float(v)).", src)


def _mark_mixed(array, value) -> None:
    """A Python number put into an array of Python floats: an int or bool beside them makes
    Python's `sum` of the list an int or a float depending on which items the run leaves in
    it (`Variable.mixed_numbers`), unless a float item surely stays (`keeps_float`: one
    appended here, or one the list started with, and no pop since) or the list holds a float
    whenever it is not empty (`float_if_filled`: `[]` grown by `append(0.25); append(2)` in a
    loop; the sum's type is then `float_when` its length > 0); `sum_` refuses the rest with an
    int start."""
    if not (getattr(array, "python_items", False) and array.dtype.is_floating):
        return
    if is_variable(value) and getattr(value, "python_scalar", False) and not value.shape:
        floating = value.dtype.is_floating  # (a loop counter, a number a tensor `if` chose)
    elif type(value) in (bool, int, float):
        floating = type(value) is float
    else:
        return
    if floating:
        array.keeps_float = array.float_if_filled = True
    else:
        array.mixed_numbers = True
        array.float_if_filled = getattr(array, "keeps_float", False)


def _dtype_fits(array, value):
    """A value put into a tensor array of another dtype: a Python int or bool, or a graph
    value standing for one (a loop counter), into an array of floats is that float, as
    Python's arithmetic would mix them; any other graph value is refused at the user's line
    (an eager list holds both dtypes, an array one)."""
    if type(value) in (int, bool, float) and array.dtype.is_floating:
        return rt.full([], float(value), array.dtype)  # (a float64 array keeps eager's float)
    if is_variable(value) and not value.is_array and value.dtype == array.dtype and getattr(
            array, "python_items", False) and not getattr(value, "python_scalar", False):
        _refuse_tensor_beside_numbers(array, value)
    if not is_variable(value) or value.dtype == array.dtype or value.is_array:
        return value
    if getattr(value, "python_scalar", False) and array.dtype.is_floating and (
            not value.dtype.is_floating or holds_python_numbers(array)):
        return rt.cast(value, array.dtype)  # (`float(t)` of a float32 t: exact in float64)
    from .mutation import StateChangeError
    from .variables import user_origin, where
    src = user_origin(3)
    held = "Python numbers" if getattr(array, "python_items", False) else "tensors"
    raise StateChangeError(
        f"a list that a loop or if whose condition is a tensor grows is a tensor array of "
        f"{array.dtype.name} (its {held}), and here ({where(src)}) it gets a tensor of "
        f"{value.dtype.name}: an array holds one dtype. " + (
            "Start the list with floats (`[0.0, 1.0]` for `[0, 1]`)." if
            value.dtype.is_floating and not array.dtype.is_floating else
            f"Cast what you append (`v.astype('{array.dtype.name}')`), or start the list "
            "with values of the dtype it collects."), src)


def _refuse_tensor_beside_numbers(array, value) -> None:
    """A tensor appended to a list of Python numbers that the program grows: eager's list
    holds both, the array gives every item back as a Python number (`[bos]` then token
    tensors would come back as ints); refused at the user's line."""
    src = user_origin(4)
    raise StateChangeError(
        f"a list of Python numbers that a loop or if whose condition is a tensor grows is a "
        f"tensor array of {array.dtype.name}, and here ({where(src)}) it gets a tensor of "
        f"{value.dtype.name}: eager's list would hold Python numbers and tensors, an array "
        "holds one kind. Start the list with a tensor (`[rt.to_tensor(0)]` for `[0]`), or "
        "keep the numbers in a separate list.", src)


def _insert(target, index, value):
    """`target.insert(index, value)` on a tensor array: a new array (an `array_insert` op;
    the index is a Python int or an integer tensor, clamped as Python clamps it)."""
    if isinstance(index, bool) or not (isinstance(index, int) or is_variable(index) or hasattr(
            index, "dtype")):
        raise TypeError(f"'{type(index).__name__}' object cannot be interpreted as an integer")
    if isinstance(value, (tuple, list, dict)):
        _no_structures(value, 4)
    held = str_arrays.held_str(target, value)
    if held is not None:  # (a str's id in an array of strs)
        return _in_place(target, array_inserted(target, index, held))
    mixed = tensor_items.held(target, value)
    if mixed is not None:  # (Python numbers and tensors)
        return _in_place(target, array_inserted(mixed[0], index, mixed[1]))
    if needs_pairs(target, value):  # (each item's Python type beside it)
        return _in_place(target, array_inserted(target, index, value)) if holds_number_kinds(
            target) else array_inserted(as_pairs(target), index, value)
    _number_fits(target, value)
    _mark_mixed(target, value)
    v = value if is_variable(value) or hasattr(value, "dtype") else rt.to_tensor(
        value, dtype=target.dtype)
    if v.dtype != target.dtype:
        v = rt.cast(v, target.dtype)
    return _in_place(target, array_inserted(target, index, v))


def _no_structures(value, depth=3):
    src = user_origin(depth)
    raise StateChangeError(
        f"a {type(value).__name__} is appended to a list of tensors whose length depends on a "
        f"tensor ({where(src)}); such a list is a tensor array, which holds tensors of one "
        "type only. Append values of one kind to one list (xs.append(a); pairs.append((a, "
        "b))).", src)


def list_pop(target, *index):
    """`target.pop(*index)`, returning `(list, item)`; on a tensor array (a list whose length
    depends on a tensor) the item is read and the array shrinks by one, as in Python. The
    index is a Python int (negative from the end) or an integer tensor; popping an empty
    array raises IndexError when the program runs."""
    _not_a_tuple(target, "pop")
    array = isinstance(target, StructArray) or is_variable(target) and target.is_array
    if array:
        if len(index) > 1:
            raise TypeError(f"pop expected at most 1 argument, got {len(index)}")
        i = index[0] if index else -1
        if isinstance(i, bool) or not (isinstance(i, int) or is_variable(i) or hasattr(
                i, "dtype")):
            raise TypeError(f"'{type(i).__name__}' object cannot be interpreted as an integer")
        if isinstance(target, StructArray):
            return target.popped(i)
        target.keeps_float = target.float_if_filled = False  # (the popped item may be the
        # float `sum` relied on)
        return target, array_pop(target, i)
    check_pop(target, index)  # (a dict's key computed by the program: `computed_keys`)
    if type(target) is list and len(index) == 1 and _computed_int(index[0]):
        array = _array_to_pop(target)
        return array, array_pop(array, index[0])
    if type(target) is dict:  # (a key on some paths: its value, or the default, by its flag)
        return target, key_flags.dict_pop(target)(*index)
    if isinstance(target, set):  # (an item of a set holding computed values: `set_algebra`)
        check_items("`.pop()`", "pop", target)
    return target, target.pop(*index)


def _computed_int(i) -> bool:
    return is_variable(i) and not i.is_array and not tuple(i.shape) and not i.dtype.is_floating \
        and i.dtype.name != "bool"


def _array_to_pop(target: list):
    """A Python list of tensors of one dtype and shape popped at an index the program
    computes (`cache.pop(int(scores.argmin()))`, a KV cache evicting its least useful
    entry): which items stay only the run decides, so the list becomes a tensor array (the
    name rebound to it; `len`, indexing, `for` and `stack` then follow the run). Refused at
    the user's line where its items cannot be one array, or another reference holds the
    list (it would keep every item, where eager's loses one)."""
    src = user_origin()
    items = [rt.to_tensor(x) if _is_tensor(x) and not is_variable(x) else x for x in target]
    if not items or not all(is_variable(x) or _is_tensor(x) for x in items) or len(
            {(tuple(x.shape), str(x.dtype)) for x in items}) != 1:
        raise StateChangeError(
            f"list.pop() ({where(src)}) at an index the converted code computes, of a list "
            "that is not tensors of one shape and dtype: which items stay only the run "
            "decides, and a program keeps such a list as one tensor array. Keep the items in "
            "a tensor and drop the row with a mask or `rt.concat` of the two slices.", src)
    frame = sys._getframe(2)
    names = [k for k, v in frame.f_locals.items() if v is target]
    others = aliases.other_references(target, names[0]) if len(names) == 1 else names
    if others:
        raise StateChangeError(
            f"list.pop() ({where(src)}) at an index the converted code computes: the list "
            "becomes a tensor array (which items stay only the run decides), but "
            f"{', '.join(others)} also holds it and would keep every item. Pop from a list "
            "only one name holds (`cache = list(cache)` first).", src)
    return rt.static.create_array(items[0].dtype, initialized_list=items)


# ---- lists of structures ----------------------------------------------------------------------

class StructArray(tuple, RunSizedList):
    """A list of structures (tuples, lists, dicts; nested) of tensors whose length depends
    on a tensor: one tensor array per leaf (the tuple's items), all of one length. A class
    per structure (`tree`), so `cond` / `while` (which carry it as a tuple of arrays) rebuild
    it with its structure.

    In converted code it acts as the list: `len`, `lst[i]` (a structure of tensors; negative
    too), `lst[a:b]`, `for`, `enumerate`, `append` and `pop` as statements. Python iteration
    of it outside d2s (a comprehension, `zip`, unpacking) raises TypeError: its length is
    known only when the program runs (`list(lst)` and `tuple(lst)` copy the array;
    `zip(*lst)` is `struct_columns.zip_star`)."""

    tree = None

    def __new__(cls, leaves=()):
        leaves = tuple(leaves)
        if leaves and all(type(x) is list for x in leaves):
            # a program's result (each array comes back as a list of Tensors): the list of
            # structures eager code returns
            return [unflatten(cls.tree, col) for col in zip(*leaves)]
        return tuple.__new__(cls, leaves)

    # ---- the list, as user code sees it ----
    def length(self):
        return rt.static.array_length(tuple.__getitem__(self, 0))

    def __getitem__(self, i):
        leaves = tuple.__iter__(self)
        if isinstance(i, slice):
            return type(self)(a[i] for a in leaves)
        return unflatten(self.tree, [a[i] for a in leaves])

    def appended(self, value) -> StructArray:
        leaves = _leaves_of(value, self.tree)
        n = self.length()
        return type(self)(_written(x, n, a) for x, a in zip(leaves, tuple.__iter__(self)))

    def popped(self, i) -> tuple:
        pairs = [array_popped(a, i) for a in tuple.__iter__(self)]
        return type(self)(p[0] for p in pairs), unflatten(self.tree, [p[1] for p in pairs])

    def empty(self) -> StructArray:
        """An empty array of the same structure and element types."""
        return type(self)(_empty_like(a) for a in tuple.__iter__(self))

    def __iter__(self):
        if _internal(sys._getframe(1).f_globals.get("__name__", "")):
            return tuple.__iter__(self)
        raise TypeError(_ITER)

    def __bool__(self):
        if sys._getframe(1).f_code.co_name in _STRUCTURAL_TRUTH:
            return tuple.__len__(self) > 0  # (d2s asks whether a tuple has items)
        raise TypeError("the truth value of a list whose length depends on a tensor is known "
                        "only when the program runs; test len(lst) > 0 instead")

    def __copy__(self):
        return self

    def __add__(self, other):
        raise TypeError("+ on a list whose length depends on a tensor (a tensor array of "
                        "structures) is not supported; append the items one by one")

    __radd__ = __mul__ = __rmul__ = __add__

    def append(self, value):
        raise TypeError(_METHOD.format("append"))

    def pop(self, *index):
        raise TypeError(_METHOD.format("pop"))

    def __repr__(self):
        return f"<list of structures as {tuple.__len__(self)} tensor arrays>"


_ITER = ("a list of tuples/dicts of tensors whose length depends on a tensor (a tensor array "
         "per part) cannot be iterated by Python here (a comprehension, zip(), unpacking): "
         "its length is known only when the program runs. Use a for statement (for item in "
         "lst: parts.append(item[0])), a comprehension, len(lst), lst[i], and `a, b = "
         "zip(*lst)` for its parts.")
_METHOD = ("lst.{0}() on a list of tuples/dicts whose length depends on a tensor, called "
           "through another name than the list's own (a helper, a closure, an alias): write "
           "lst.{0}(...) as its own statement in the function that owns lst")
_STRUCTURAL_TRUTH = {"_carried"}  # d2s functions that test a tuple for items
_CLASSES: dict = {}
_OWN = ("runtime.program", "runtime.pytree", "copy", "d2s.")


def _internal(name: str) -> bool:
    """Module `name` is d2s's / the runtime's structural code (which sees the leaf arrays),
    not user code or d2s's builtins (which act for user code)."""
    return (name or "").startswith(_OWN) and name != "d2s.operators.builtins"


def _struct_class(tree):
    cls = _CLASSES.get(tree)
    if cls is None:
        cls = _CLASSES[tree] = type("StructArray", (StructArray,), {"tree": tree})
    return cls


def is_structure(value) -> bool:
    return isinstance(value, (tuple, list, dict)) and not isinstance(value, StructArray)


def _leaves_of(value, tree=None) -> list:
    """The leaves of a structure appended to a list that is a tensor array; its structure
    must be `tree` (when given) and hashable, and its leaves tensors or Python numbers (an
    array of Python numbers per such part)."""
    leaves, t = flatten(value)
    src = user_origin(3)
    if tree is not None and t != tree:
        raise StateChangeError(
            f"a {type(value).__name__} of another structure is appended to a list whose "
            f"length depends on a tensor ({where(src)}); all its items must have one structure "
            "(the same tuple length / dict keys, tensors at the same places).", src)
    other = next((x for x in leaves if not (_is_tensor(x) or type(x) in _NUMBERS)), None)
    if not leaves or other is not None:
        raise StateChangeError(
            f"a {type(value).__name__} holding "
            f"{'nothing' if not leaves else 'a ' + type(other).__name__} is appended to a list "
            f"whose length depends on a tensor ({where(src)}); such a list is a tensor array "
            "per part, which holds tensors and Python numbers only. Keep a number or a tensor "
            "per part (an index into a tuple of the texts, read after the call).", src)
    try:
        hash(t)
    except TypeError:
        raise StateChangeError(
            f"a {type(value).__name__} is appended to a list whose length depends on a tensor "
            f"({where(src)}); only tuples, lists and dicts (with hashable keys) of tensors can "
            "be items of such a list.", src) from None
    return leaves


_NUMBERS = (bool, int, float)
# the dtype of a tensor array holding Python numbers (a list of them grown by the program)
PYTHON_ITEM_DTYPES = {bool: "bool", int: "int64", float: "float64"}


def _stands_for_number(x) -> bool:
    """A Python number, or a 0-d graph value standing for one (a loop counter, `int(t)`)."""
    return type(x) in _NUMBERS or (is_variable(x) and getattr(x, "python_scalar", False)
                                   and not x.is_array and not tuple(x.shape))


def number_pairs(items: list):
    """A tensor array of the Python numbers `items` (and values standing for them) as
    `[value, kind]` pairs."""
    array = rt.static.create_array("float64")
    array.python_items = True
    array._static_shape = PAIR
    for k, x in enumerate(items):
        array = rt.static.array_write(x, k, array)
    return array


def _column(items: list):
    """The tensor array of one part of a list of structures: its tensors, or its Python
    numbers (each keeping its type, as a list of them grown by the program does)."""
    if not all(_stands_for_number(x) for x in items) or all(is_variable(x) for x in items):
        return _numbers_marked(rt.static.create_array(_dtype(items[0]), initialized_list=list(
            items)), items)
    kinds = {type(x) if type(x) in _NUMBERS else None for x in items}
    if len(kinds) > 1 or None in kinds:  # (several types, or graph values beside numbers)
        return number_pairs(items)
    kind = kinds.pop()
    array = rt.static.create_array(PYTHON_ITEM_DTYPES[kind], initialized_list=list(items))
    array.python_items = True
    array.keeps_float = array.float_if_filled = kind is float
    return array


def _numbers_marked(array, items: list):
    """`array` marked as a list of Python numbers where every item stands for one."""
    if all(_stands_for_number(x) for x in items):
        array.python_items = True
    return array


def struct_array(items: list) -> StructArray:
    """The tensor arrays (one per leaf) of a Python list of structures of tensors and Python
    numbers."""
    tree = flatten(items[0])[1]
    columns = list(zip(*[_leaves_of(v, tree) for v in items]))
    return _struct_class(tree)(_column(list(col)) for col in columns)


def empty_struct_array(like) -> StructArray:
    """An empty array of structures like `like` (one item: element types and shapes)."""
    leaves = _leaves_of(like)
    return _struct_class(flatten(like)[1])(_empty_like(x) for x in leaves)


def _dtype(x):
    return x.dtype


def _empty_like(x):
    """An empty tensor array for elements like `x` (a tensor, an array, or a Python number:
    an array of Python numbers of its type)."""
    if type(x) in _NUMBERS:
        out = rt.static.create_array(PYTHON_ITEM_DTYPES[type(x)])
        out.python_items = out.float_if_filled = True  # (empty: no int without a float)
        out._static_shape = ()
        return out
    out = rt.static.create_array(x.dtype)
    out._static_shape = x.static_shape if getattr(x, "is_array", False) else tuple(x.shape)
    if getattr(x, "python_items", False) or getattr(x, "python_scalar", False):
        out.python_items = True  # (still a list of Python numbers)
    return out
