"""The initial values of a graph loop's state (`graph_while._GraphWhile`): Python lists as tensor
arrays, and for names first bound inside the loop, Python numbers the body makes tensors and
empty lists the body appends to, the types the body gives them (a probe trace of the body,
discarded).
"""
from __future__ import annotations

import runtime as rt
from runtime.core import is_tensor
from runtime.program.builder import current_builder

from . import loop_bound, mutation, tensor_items
from .block_values import (
    as_list,
    check_return_none,
    copy_container,
    fill_placeholder,
    has_tensor,
    mark_python_number,
    zeros_like,
)
from .lists import (
    PYTHON_ITEM_DTYPES,
    StructArray,
    empty_struct_array,
    is_structure,
    number_pairs,
    struct_array,
)
from .str_arrays import all_strs, empty_str_array, is_str, str_array
from .variables import (
    ProbeUndefined,
    Undefined,
    UndefinedNameError,
    is_return_value,
    is_variable,
    where,
)


def to_array(items: list, name: str, src):
    if not items:
        return EmptyArray()
    if is_structure(items[0]):
        return struct_array(items)
    first = items[0]
    if all_strs(items):  # (ids into the table of the strs the trace saw)
        return str_array(items)
    if not hasattr(first, "dtype") and python_item_dtype(first) is None:
        _refuse_objects(name, first, src)
    if hasattr(first, "dtype"):
        array = rt.static.create_array(first.dtype, initialized_list=list(items))
        if all(getattr(v, "python_scalar", False) or python_item_dtype(v) for v in items):
            array.number_sums = True  # (numbers a tensor `if` merged: `sum` of them is one)
        return array
    if python_item_dtype(first) is None:
        return rt.static.create_array("float32", initialized_list=list(items))
    if len({type(v) for v in items}) > 1 and all(python_item_dtype(v) for v in items):
        return number_pairs(items)  # (`[0, 0.5]`: each item keeps its own type)
    dtype, numbers = _numbers_of_one_dtype(items)
    array = python_items(rt.static.create_array(dtype, initialized_list=numbers))
    array.mixed_numbers = dtype in ("float32", "float64") and any(
        type(v) in (bool, int) for v in items)
    array.keeps_float = array.float_if_filled = float in {type(v) for v in items}
    return array


def _numbers_of_one_dtype(items: list) -> tuple:
    """(dtype, items) for a list of Python numbers: the widest kind among them (`[0.25, 2]`
    is a list of floats, `[True, 1]` of ints), each item made that kind, as Python's `sum`
    of them would."""
    kinds = {type(v) for v in items}
    kind = float if float in kinds else int if int in kinds else bool
    return PYTHON_ITEM_DTYPES[kind], [kind(v) if type(v) in (bool, int, float) else v
                                      for v in items]


class EmptyArray(list):
    """An empty Python list used as loop state: its element type is known only after the
    body appended to it once."""


class EmptyTuple(EmptyArray):
    """`()` as loop state: a tensor array marked a tuple where the body rebinds it to one
    (`out = tuple(kept)` of a list the loop grows); `()` again where it does not."""


def grown_tuple(v) -> bool:
    """A non-empty tuple of tensors of one dtype and shape (not values standing for Python
    numbers), which a graph loop's body may grow (`out = out + (x[i],)`): an array marked a
    tuple where it does."""
    return type(v) is tuple and bool(v) and all(
        is_variable(t) and not t.is_array and not getattr(t, "python_scalar", False) and
        getattr(t, "number_when", None) is None and _same_items(t, v[0]) for t in v)


def _same_items(a, b) -> bool:
    return a.dtype == b.dtype and len(a.shape) == len(b.shape)


def _tuple_array(start: tuple, probe: tuple):
    """The array marked a tuple holding `start`'s items (the dims they and the body's items
    share, -1 where they differ or are unknown)."""
    out = rt.static.create_array(start[0].dtype, list(start))
    items = [*start, *probe]
    out._static_shape = tuple(d if all(t.shape[j] == d for t in items) else -1
                              for j, d in enumerate(start[0].shape))
    out._d2s_tuple = True
    return out


def is_empty_array(v) -> bool:
    return isinstance(v, EmptyArray)


def plain_inside_tuples(v):
    """`v` with the empty-list markers of loop state that tuples hold (`_retval = (h, kept)`
    in a loop that may fill `kept`) made plain lists again: the marker means something for a
    name the loop carries, not for a value stored in a tuple, whose other branch holds the
    plain list (`cond` compares the two structures)."""
    if type(v) is not tuple or not any(isinstance(t, (EmptyArray, tuple)) for t in v):
        return v
    return tuple(() if isinstance(t, EmptyTuple) else [] if isinstance(t, EmptyArray) else
                 plain_inside_tuples(t) for t in v)


def settled_initial_values(body, state: list, names: tuple, src, log) -> list:
    """`_initial_values`, traced again while a name stays unbound (or an empty list's items
    unseen) and the probe turned a Python number into a tensor: a branch that binds it may be
    settled by that number on the first probe (`k = 0` ... `if k > 5: return y`; `i = 0` ...
    `a.append(x)`, `if i % 2 == 1: a.pop()`, which leaves `a` empty) and a tensor `if` only
    with the tensor the loop really carries."""
    out = state
    for _ in range(len(names)):
        try:
            out = _initial_values(body, state, names, src)
        except UndefinedNameError as e:
            _explain_read_before_bound(e, state, names, src)
            raise
        log.scratch_end()
        if not any(isinstance(v, Undefined) or is_empty_array(v) for v in out) or all(
                a is b for a, b in zip(out, state)):
            break
        state = out
    # an empty list whose items no probe saw (the body appends under a branch the probe did
    # not take) stays a Python list
    return [(() if isinstance(v, EmptyTuple) else []) if is_empty_array(v) else v for v in out]


def _explain_read_before_bound(e: UndefinedNameError, state: list, names: tuple, src) -> None:
    """Say so where the body reads a name that the loop first binds, on a path of a trip
    before the one that binds it (`if i == 0: level = 1` / `else: level = level + 1`): eager
    code finds it bound from the earlier trip; the program cannot carry it unbound."""
    name = getattr(e, "d2s_name", None)
    if name not in names or not isinstance(state[names.index(name)], Undefined):
        return
    e.args = ((f"'{name}' is first bound inside a loop whose condition is a tensor "
               f"({where(src)}) and read in the body on a path that does not bind it first: "
               "eager code finds it bound by an earlier trip, but one program cannot carry "
               f"a name that is unbound when the loop starts. Bind '{name}' before the loop "
               f"(a value of the type the loop gives it, `{name} = 0`)."),)


def _probe_arg(v):
    """A state value as the probe trace passes it to the body (names first bound in the loop
    as `ProbeUndefined`: a branch reading one is not eager's run-time error)."""
    if isinstance(v, EmptyTuple):
        return ()
    return ProbeUndefined(v.name, v.error) if type(v) is Undefined else copy_container(v)


def _entry_copy(v):
    """A dict of the state as it is before the probe trace, which may change a dict nested
    in it in place (the log undoes that after the trace)."""
    return mutation.freeze(v) if type(v) is dict else v


def _initial_values(body, state: list, names: tuple, src) -> list:
    """Trace the body once in a scratch block to learn the types that names first bound in
    the loop (or Python numbers that the body turns into tensors) take."""
    b, entry = current_builder(), list(map(_entry_copy, state))
    with b.scratch():
        probe = as_list(body(*map(_probe_arg, state)), len(names))
        loop_bound.note_probe(names, probe)  # (unbound on some paths: the loop flags them)
    out = list(state)
    for i, (v, p) in enumerate(zip(state, probe)):
        if isinstance(v, EmptyTuple):
            if is_variable(p) and p.is_array and getattr(p, "_d2s_tuple", False):
                out[i] = rt.static.create_array(p.dtype)  # (`tuple(kept)`: a tuple again)
                out[i]._static_shape, out[i]._d2s_tuple = p.static_shape, True
                if getattr(p, "python_items", False):
                    python_items(out[i])
            elif type(p) is tuple and p and all(is_variable(t) and not t.is_array and
                                                t.dtype == p[0].dtype for t in p):
                out[i] = rt.static.create_array(p[0].dtype)  # (`out = out + (t,)`)
                out[i]._static_shape, out[i]._d2s_tuple = tuple(p[0].shape), True
            continue
        if grown_tuple(v) and grown_tuple(p) and len(p) != len(v) and _same_items(v[0], p[0]):
            out[i] = _tuple_array(v, p)  # (`out = out + (t,)`)
            continue
        if isinstance(v, EmptyArray):
            elem = p[0] if isinstance(p, list) and p else p if is_variable(p) and \
                p.is_array else None  # (an array: a tensor `if` in the body appended)
            if isinstance(p, StructArray):  # (a tensor `if` in the body appended)
                out[i] = p.empty()
                continue
            if is_structure(elem):  # a list of tuples / dicts of tensors
                out[i] = empty_struct_array(elem)
                continue
            if is_str(elem) and all_strs(p if isinstance(p, list) else [elem]):
                out[i] = empty_str_array()  # (strs: an array of their ids)
                continue
            numbers = _empty_numbers_array(elem)
            if numbers is not None:  # (Python numbers, or a number on some runs only)
                out[i] = numbers
                continue
            if not hasattr(elem, "dtype"):
                if isinstance(p, list) and p:  # (a string, None, an object)
                    _refuse_objects(names[i], elem, src)
                continue  # (items not seen yet: `settled_initial_values` probes again)
            out[i] = rt.static.create_array(elem.dtype)
            if getattr(elem, "python_scalar", False) or getattr(elem, "python_items", False):
                python_items(out[i])  # (`out.append(i * 2)`, `i` from range; an inner loop's)
            # the element type the body writes (a pop reads it)
            out[i]._static_shape = elem.static_shape if getattr(
                elem, "is_array", False) else tuple(elem.shape)
        elif isinstance(v, (int, float)) and isinstance(p, (int, float)):
            out[i] = _python_number(v, p)
        elif type(v) is dict and type(p) is dict:
            out[i] = number_items(v, p, entry[i])
        elif isinstance(v, Undefined) or (v is None and is_return_value(names[i])) or (
                isinstance(v, (int, float)) and (is_variable(p) or is_tensor(p))):
            if isinstance(p, Undefined):
                continue
            if isinstance(v, Undefined) and isinstance(p, (list, tuple, dict)) and has_tensor(p):
                out[i] = zeros_like(p)  # a structure returned from inside the loop
                continue
            if v is None and is_return_value(names[i]) and _none_on_some_runs(p):
                check_return_none([names[i]], [[None, p]], src)  # (None where it falls
                # through the loop: zeros would stand in for it)
            if v is None and is_return_value(names[i]) and mutation.tensor_tree(p):
                out[i] = fill_placeholder(None, p)  # a returned tuple: zeros of each part
                continue
            if not (is_variable(p) or is_tensor(p)):
                out[i] = p if isinstance(v, Undefined) else v
                continue
            if v is None:
                check_return_none([names[i]], [[None, p]], src)
            if any(d < 0 for d in p.shape) and not is_return_value(names[i]):
                raise UndefinedNameError(
                    f"'{names[i]}' is first bound inside a loop whose condition is a tensor "
                    f"and has a shape unknown before the loop ({p.shape}) ({where(src)}); "
                    f"bind '{names[i]}' before the loop")
            fill = v if isinstance(v, (int, float)) else 0
            out[i] = rt.full([d if d >= 0 else 1 for d in p.shape], fill, p.dtype)
            _kind_of_body(out[i], p)
    return out


def _kind_of_body(initial, p) -> None:
    """The loop's initial value for a name the body binds to `p` stands for what `p` does."""
    if getattr(p, "python_scalar", False):
        mark_python_number(initial)  # the body keeps it a Python number (a tensor `if` in it)
    elif getattr(p, "numpy_array", False):  # (a NumPy value after a trip: `total +=
        initial.numpy_array, initial.numpy_scalar = True, p.numpy_scalar  # a[i].sum()`)


def _none_on_some_runs(v) -> bool:
    """Whether `v` (a structure) holds a value a tensor `if` left None on some runs
    (`none_or_tensor`)."""
    if isinstance(v, (list, tuple)):
        return any(map(_none_on_some_runs, v))
    if isinstance(v, dict):
        return any(map(_none_on_some_runs, v.values()))
    return is_variable(v) and v.none_when is not None


def _empty_numbers_array(elem):
    """The empty array a graph loop's body appends `elem` to: of Python numbers of its type
    (a tensor array of their dtype), or of Python numbers and tensors where `elem` is a number
    on some runs only (`tensor_items`); None for anything else."""
    if tensor_items.is_either(elem):
        return tensor_items.tensor_items_array([], elem.dtype)
    dtype = python_item_dtype(elem)
    if dtype is None:
        return None
    array = python_items(rt.static.create_array(dtype))
    array.float_if_filled = True  # (empty: no int without a float in it)
    array._static_shape = ()
    return array


def _refuse_objects(name: str, item, src):
    """A list that a graph loop grows is a tensor array, which holds numbers only: a string
    (or any other Python object) in it has no tensor form, and a Python list would have the
    length of one trip."""
    grown = _growing_line(name, src)
    raise mutation.StateChangeError(
        f"'{name}' holds {type(item).__name__} items ({item!r:.40}) and a loop whose condition "
        f"is a tensor ({where(src)}) appends to it{grown}: a list such a loop grows is a "
        "tensor array, which holds tensors and Python numbers only. Keep a number per item "
        "(an index into a tuple of the texts, read after the call), or loop over a Python "
        "range.", src)


def _growing_line(name: str, src) -> str:
    """' (File ..., line N: names.append(...))': the first line of the loop's body at `src`
    that grows the list `name` (its source, indented under the loop's line); '' if none."""
    import linecache
    import re
    if src is None:
        return ""
    grows = re.compile(rf"(?<![\w.]){re.escape(name)}\s*(\.\s*(append|insert|extend)\s*\(|\+=)")
    lines = linecache.getlines(src.filename)
    head = lines[src.lineno - 1] if 0 < src.lineno <= len(lines) else ""
    indent = len(head) - len(head.lstrip())
    for k in range(src.lineno, len(lines)):
        line = lines[k]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break  # (past the loop's body)
        if grows.search(line):
            return f' (File "{src.filename}", line {k + 1}: {line.strip()})'
    return ""


def python_items(array):
    """Mark a tensor array as a list of Python numbers (`sum` of it when empty is the start
    value, as Python's; a loop's result array keeps the mark)."""
    array.python_items = True
    return array


def python_item_dtype(v):
    """The dtype of a tensor array holding Python numbers like `v` (a list of them that a
    graph loop or a tensor `if` grows): bool, int64 for ints, float32 for floats; None for
    anything else."""
    return PYTHON_ITEM_DTYPES.get(v.__class__)


def changes_number_items(v, body_may_change: bool) -> bool:
    """Whether `v` is a dict holding Python numbers (also in dicts nested in it) that the
    body may change (a probe trace tells which: `number_items`)."""
    return body_may_change and type(v) is dict and any(
        type(x) in (bool, int, float) or changes_number_items(x, True) for x in v.values())


def number_items(v: dict, p: dict, entry: dict | None = None) -> dict:
    """A dict the loop carries whose Python-number items the body changes (`stats["total"]
    += loss.item()`, `stats["steps"] += 1`; `p`: the dict after the probe trace of the body,
    `entry`: a copy of `v` from before it, where the probe changed dicts nested in `v` in
    place): its Python-number items (also those of dicts nested in it, as a new dict) as
    tensors of Python's precision (bool, int64, float64) standing for Python numbers, as a
    name's number is (`_python_number`; the loop carries every item, so one it leaves alone
    keeps its digits too), of the wider type where the body changes it (`d["n"] = 0`, then
    `d["n"] += 0.5`: `loop_number_items` carries its type flags). Where the body stores at a
    computed key (`votes[int(t)] = v`: every item a number on some runs, held as one dtype),
    the dict as it is."""
    entry = v if entry is None else entry
    out = dict(v)
    for k, x in v.items():
        if k not in p:
            continue
        if type(x) is dict and type(p[k]) is dict and type(entry.get(k)) is dict:
            nested = number_items(entry[k], p[k])
            if any(a is not b for a, b in zip(nested.values(), entry[k].values())):
                out[k] = nested
            continue
        if type(x) not in (bool, int, float):
            continue
        if is_variable(p[k]):
            if p[k].shape or not getattr(p[k], "python_scalar", False):
                continue
            if p[k].number_when is not None:
                return v
            if p[k].dtype.name != _PYTHON_DTYPES[type(x)]:
                out[k] = _python_number(x, _SAMPLES.get(p[k].dtype.name, x))
                continue
        elif type(p[k]) not in (bool, int, float):
            continue
        out[k] = _python_number(x, x)
    return out


_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float64"}
_SAMPLES = {"bool": False, "int64": 0, "float64": 0.0}  # (a number of a probe's type)


def _python_number(v, p):
    """A Python number carried through a graph loop: a tensor of Python's precision (bool,
    int64, float64), of the wider type when the body changes it (`1` -> `1 / 2`). Anything
    else stays as it is."""
    if not (isinstance(v, (int, float)) and isinstance(p, (int, float))):
        return v
    if isinstance(v, bool) and isinstance(p, bool):
        return mark_python_number(rt.full([], v, "bool"))
    dtype = "float64" if isinstance(v, float) or isinstance(p, float) else "int64"
    return mark_python_number(rt.full([], v, dtype))
