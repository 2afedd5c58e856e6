"""A name that is a Python number on some paths and a tensor on others (issue 33): `b = 1`,
then `if t.mean() > 0: b = b + x * 0.5`. Eager code returns the int 1 where the branch is not
taken and a tensor where it is; one program value holds the tensor (the number cast to its
dtype, `scalar_merge`), so the `if` also gives out, as two more `cond` outputs, a bool saying
whether the value is the Python number on this run (`Variable.number_when`) and the number at
Python's own precision (`Variable.number_value`: bool, int64 or float64, a graph value
standing for the number). The call then gives eager's Python number exactly where the flag
holds (`running.Entry`), for a returned value and a value written back to a place alike.

Arithmetic on such a value with Python numbers only (`b * 2`) is a Python number on the runs
where the value is one: the builder computes the op on `number_value` too and passes the flag
on (`runtime/program/builder.py`, `_number_or_tensor`).

`_GraphIf` keeps the paths of such values in its `kinds` (kind "n": the flag, "v": the
number, whose entry holds the number's dtype): `find` adds them after both branches are traced
(the `if` is traced again with them), `here` gives a branch's value of each.
"""
from __future__ import annotations

import opcode
import sys

import numpy as np

import runtime as rt
from runtime.core import active_builder
from runtime.program.debug_ops import raise_error
from runtime.program.origin import frame_line

from ..errors import ConversionError
from ..pyct import loader
from .exceptions import short_name
from .scalar_merge import WIDE_NUMBER, number_rank
from .trace_state import current
from .variables import Undefined, is_return_value, is_variable, user_origin, where


def number_dtype(v):
    """The dtype (bool, int64, float64) of the Python number `v` stands for on the runs
    where it is one; None where `v` is no number of a type fixed for all runs."""
    if is_variable(v) and getattr(v, "number_when", None) is not None:
        return v.number_value.dtype.name
    if isinstance(v, Undefined) or number_rank(v) < 0:
        return None
    if is_variable(v) and (v.float_when is not None or v.bool_when is not None or
                           getattr(v, "number_type_unknown", False) or v.shape):
        return None
    return WIDE_NUMBER[number_rank(v)]


def _is_tensor_side(v) -> bool:
    return is_variable(v) and not v.is_array and not getattr(v, "python_scalar", False) \
        or is_variable(v) and getattr(v, "number_when", None) is not None


def find(first: list, second: list, names, kinds: dict, src) -> bool:
    """Record (in `kinds`) the paths of the values of `names` that one branch leaves a Python
    number and the other a tensor; True if any new."""
    new = False
    for path, a, b in pairs(first[:len(names)], second[:len(names)], ()):
        dtypes = {number_dtype(v) for v in (a, b) if not isinstance(v, Undefined)} - {None}
        if not dtypes or not any(map(_is_tensor_side, (a, b))) or ("n", path) in kinds:
            continue
        if len(dtypes) > 1:
            dtypes = {_widened(names[path[0]], path[1:], (a, b), dtypes, src)}
        if all(number_dtype(v) is not None and getattr(v, "number_when", None) is None
               for v in (a, b) if not isinstance(v, Undefined)):
            continue  # (numbers on both paths: `scalar_merge`)
        kinds[("n", path)] = True
        kinds[("v", path)] = dtypes.pop()
        new = True
    return new


class _Widened(str):
    """The dtype of a number whose type differs between the paths (`sum(kept) if kept else
    0.0`: an int on the runs where `kept` is empty, which never take that path): the widest,
    and the line to name where a run gives the narrower one (`here` checks it)."""
    src = None
    what = ""


def _widened(name: str, path: tuple, values, dtypes: set, src) -> str:
    """The widest of `dtypes`, where each path whose number is narrower is a number on some
    runs only (`number_when`: a run-time check raises on those runs); else refused."""
    wide = max(dtypes, key=WIDE_NUMBER.index)
    for v in values:
        if number_dtype(v) not in (None, wide) and getattr(v, "number_when", None) is None:
            _refuse_kinds(name, path, dtypes, src)
    out = _Widened(wide)
    out.src, out.what = src, _what(name, path)
    return out


def _what(name: str, path: tuple) -> str:
    what = "the returned value" if is_return_value(name) else \
        "the conditional expression's value" if name.startswith("_ifexp") else f"'{name}'"
    return what + "".join(f"[{i}]" for i in path)


def _check_narrower(v, dtype) -> None:
    """Raise when the program runs and `v` (a number on some runs) is its number, of a type
    narrower than the merged `dtype` eager would not give (`_Widened`)."""
    kind = {"bool": "a bool", "int64": "an int"}[v.number_value.dtype.name]
    src = dtype.src
    exc = TypeError(
        f"{dtype.what} is {kind} on this input where another path of the if gives "
        f"{'a float' if dtype == 'float64' else 'an int'} ({where(src)}): one program value "
        "keeps one Python number type. Make the numbers of every path one type (`0.0` for "
        "`0`, `float(...)`).")

    def fail():
        raise_error(exc, at=f"{short_name(src.filename)}:{src.lineno}" if src else "")
        return rt.zeros([], "bool")

    rt.static.nn.cond(v.number_when, fail, lambda: rt.zeros([], "bool"))


def _refuse_kinds(name: str, path: tuple, dtypes: set, src) -> None:
    what = "the returned value" if is_return_value(name) else \
        "the conditional expression's value" if name.startswith("_ifexp") else f"'{name}'"
    kinds = " and ".join(k for d, k in (("bool", "a bool"), ("int64", "an int"),
                                         ("float64", "a float")) if d in dtypes)
    raise ConversionError(
        f"{what}{''.join(f'[{i}]' for i in path)} is {kinds} on the inputs that take "
        f"some paths and a tensor on others of an if whose condition is a tensor "
        f"({where(src)}): eager code keeps each path's type, which one program value cannot "
        "give beside a tensor. Give it numbers of one type on those paths (`2.0` for `2`), or "
        "a tensor on every path (`rt.to_tensor(...)`).", origin=src)


def pairs(a, b, path):
    """(path, item of a, item of b) of two structures of lists and tuples, leaf by leaf."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from pairs(x, y, (*path, i))
    elif isinstance(a, (list, tuple)) and isinstance(b, Undefined):  # (a returned tuple
        for i, x in enumerate(a):  # beside the placeholder of a branch that does not
            yield from pairs(x, b, (*path, i))  # return: zeros, never read there)
    elif isinstance(b, (list, tuple)) and isinstance(a, Undefined):
        for i, y in enumerate(b):
            yield from pairs(a, y, (*path, i))
    else:
        yield path, a, b


def here(kind: str, v, dtype):
    """A branch's value of the flag ("n") or number ("v") of `v` (a placeholder's where `v`
    is a tensor on this path: False, and 1 of the number's dtype, which no division by it
    turns into an error)."""
    mixed = is_variable(v) and getattr(v, "number_when", None) is not None
    if kind == "n":
        if mixed:
            return v.number_when
        return rt.full([], number_dtype(v) is not None and not _is_tensor_side(v), "bool")
    if mixed:
        number = v.number_value
        if isinstance(dtype, _Widened) and number.dtype.name != dtype:
            _check_narrower(v, dtype)
    elif number_dtype(v) is not None:
        number = v if is_variable(v) else rt.full([], v, dtype)
    else:
        number = rt.full([], 1, dtype)
    if number.dtype.name != dtype:
        number = rt.cast(number, dtype)
    number.python_scalar = True
    return number


def mark(r, kinds: dict, at: tuple) -> None:
    """Give the `if`'s output `r` its flag and number (`cond`'s outputs for path `at`)."""
    if ("n", at) in kinds and is_variable(r):
        r.number_when = kinds[("n", at)]
        r.number_value = kinds[("v", at)]
        r.number_value.python_scalar = True


def exact(x, dtype: str):
    """`x` as the graph value of `dtype` that `int()`/`float()`/`bool()` of it gives: on
    the runs where `x` is a Python number, of that number at its own precision (`float(b)`
    of `b = 0.1` is 0.1, not the float32 the merged value holds); `x` where it is no such
    value."""
    if getattr(x, "number_when", None) is None:
        return x
    number = rt.cast(rt.assign(x.number_value), dtype)  # (a real tensor: `where` keeps it)
    return rt.where(x.number_when, number, rt.cast(x, dtype))


def instance_of(obj, classes: tuple):
    """`isinstance(obj, classes)` of a value that is a Python number on some runs only, or
    of a graph value standing for a Python number (`float(t)`, whose type the run may
    decide): the truth on each run, a graph value standing for a Python bool where it
    differs between runs (None where `obj` is no such value)."""
    if getattr(obj, "number_when", None) is None:
        return _number_instance(obj, classes)
    number = {"bool": bool, "int64": int}.get(obj.number_value.dtype.name, float)
    as_number = isinstance(number(), classes)
    other = other_type(obj)  # (a tensor, or a NumPy value: `total += a[i].sum()`)
    as_tensor = any(isinstance(c, type) and issubclass(other, c) for c in classes)
    if as_number == as_tensor:
        return as_number
    out = rt.assign(obj.number_when) if as_number else rt.logical_not(obj.number_when)
    out.python_scalar = True
    return out


def other_type(obj) -> type:
    """The type eager code has on the runs where `obj` (a number on some runs only) is no
    Python number: a Tensor, or where it stands for a NumPy value, NumPy's scalar type or
    ndarray."""
    if not obj.numpy_array:
        return rt.Tensor
    return np.dtype(obj.dtype.name).type if obj.numpy_scalar else np.ndarray


def mark_all(values: list, kinds: dict, offset: int) -> None:
    """`mark` each output of `values` (and their items), the first at path `(offset,)`: the
    objects a branch changed (`d["loss"] = x.sum()` where it held 0)."""
    for path, r, _ in pairs(values, values, ()):
        if path:
            mark(r, kinds, (path[0] + offset, *path[1:]))


def _number_instance(obj, classes: tuple):
    if not obj.python_scalar or obj.is_array or obj.shape or obj.number_type_unknown:
        return None
    hits = {t: isinstance(t(), classes) for t in (bool, int, float)}
    base = {"b": bool, "f": float}.get(obj.dtype.kind, int)
    out = hits[int if obj.float_when is not None else base]
    for flag, t in ((obj.float_when, float), (obj.bool_when, bool)):  # (a bool's wins)
        if flag is None or isinstance(out, bool) and hits[t] == out:
            continue
        other = rt.full([], out, "bool") if isinstance(out, bool) else out
        out = rt.where(flag, rt.full([], hits[t], "bool"), other)
    if not isinstance(out, bool):
        out.python_scalar = True
    return out


def attribute_read(value, name: str) -> None:
    """Converted user code reads `value.name` of a value that is a Python number on some runs
    (`runtime.program.variable.NumberOrTensor`; reads by d2s itself pass). An attribute of
    tensors that the number lacks (`b.item()`, `b.shape`, `b.astype`) raises eager's
    `AttributeError` when the program runs, on the runs where `value` is the number (an
    `except AttributeError` of an open `try` body catches it); one of the number that tensors
    lack (`b.is_integer()`) is a ConversionError at the line: the program cannot compute it
    on the number's runs and raise on the others."""
    f = sys._getframe(2)  # (the code that read the attribute)
    src = loader.lookup(f.f_code.co_filename, frame_line(f))
    if src is None:
        return
    if object.__getattribute__(value, "number_when") is None:  # (a number on every run)
        python_number_read(value, name)
        return
    if f.f_code.co_code[f.f_lasti] not in _ATTRIBUTE_READS:
        looked_up(value, name, src)
    check_attribute(value, name, src)


def looked_up(value, name: str, src) -> None:
    """`hasattr(value, name)` / `getattr(value, name)` by user code at `src`: refused where
    the number and tensors differ in having it (the answer would differ between runs)."""
    if _differs(value, name):
        raise ConversionError(  # (`hasattr(b, 'item')`: False on the number's runs only)
            f"hasattr()/getattr() of {name!r} ({where(src)}) of a value that is a Python "
            "number on some runs and a tensor on others (decided by a tensor condition): "
            "eager code finds it on one of them only, and the answer would differ between "
            f"runs, which one program cannot give. Read `.{name}` directly, or make the value "
            "a tensor (or a number) on every path.", origin=src)


_ATTRIBUTE_READS = {opcode.opmap[n] for n in ("LOAD_ATTR", "LOAD_METHOD") if n in opcode.opmap}


def _number_type(value) -> type:
    dtype = object.__getattribute__(value, "number_value").dtype.name
    return {"bool": bool, "int64": int}.get(dtype, float)


# Names a Python number and a Tensor both have, asking other questions: `3.0.is_integer()`
# whether the value is whole, Paddle's `Tensor.is_integer()` whether the dtype is an integer
# type. One program cannot answer each run's question, so they count as differing.
_OTHER_MEANING = frozenset({"is_integer"})


def _differs(value, name: str) -> bool:
    return name in _OTHER_MEANING or hasattr(rt.Tensor, name) != hasattr(
        _number_type(value), name)


def read_by_user(value, name: str):
    """`value.name` read by converted user code through d2s (`x.shape` is `_d2s.shape(x)`)."""
    if getattr(value, "number_when", None) is not None:
        check_attribute(value, name, user_origin())
    elif is_variable(value):
        python_number_read(value, name)
    return getattr(value, name)


def python_number_read(value, name: str) -> None:
    """Converted user code reads `value.name` of a value standing for a Python number on
    every run (`python_scalar`: `float(t)`, `t.item()`, `int(t)`, a loop's counter): eager's
    AttributeError where no number of its type has it (`float(x.sum()).sum()`, `.numpy()`,
    `.shape`, `.astype`), raised at the line (every run of eager code raises it)."""
    get = object.__getattribute__
    if not get(value, "python_scalar") or get(value, "numpy_array") or get(
            value, "kind") == "array" or get(value, "_static_shape"):
        return
    base = {"b": bool, "f": float}.get(get(value, "dtype").kind, int)
    decided = get(value, "float_when") is None and get(value, "bool_when") is None and \
        not get(value, "number_type_unknown")
    types = (base,) if decided else (bool, int, float)
    if not any(hasattr(t, name) for t in types):
        raise AttributeError(f"'{base.__name__}' object has no attribute '{name}'" if decided
                             else f"a Python number has no attribute '{name}'")


def check_attribute(value, name: str, src) -> None:
    """User code at `src` reads `value.name` (see `attribute_read`; `x.shape` and `x.size`
    come here through `builtins`)."""
    get = object.__getattribute__
    if not _differs(value, name):
        return
    number = _number_type(value)
    if name in _OTHER_MEANING:
        raise ConversionError(
            f"'.{name}' ({where(src)}) of a value that is a Python {number.__name__} on some "
            "runs and a tensor on others (decided by a tensor condition): the number's and "
            "the tensor's answer different questions (the value, the dtype), and one program "
            f"cannot give each run's. Make it a number on every path (`{number.__name__}(v)`) "
            "or a tensor on every path before reading it.", origin=src)
    if hasattr(number, name):
        raise ConversionError(
            f"'.{name}' ({where(src)}) of a value that is a Python {number.__name__} on some "
            "runs and a tensor on others (decided by a tensor condition): eager code has it "
            "on the number only and raises AttributeError on the tensor, which one program "
            f"cannot give. Make it a number on every path (`{number.__name__}(v)`) before "
            "reading it.", origin=src)
    checked = get(value, "__dict__").setdefault("_d2s_attributes_checked", set())
    b = active_builder()
    key = (id(b.block), name)
    if key in checked:
        return
    exc = AttributeError(f"'{number.__name__}' object has no attribute '{name}'")
    flag = get(value, "number_when")
    trys = current().trys
    if trys and trys[-1].take_read_error(exc, flag, value):
        return  # (the `try`'s clause catches it)
    checked.add(key)
    at = f"{short_name(src.filename)}:{src.lineno}"

    def fail():
        raise_error(exc, at=at)

    rt.static.nn.cond(flag, fail, lambda: None)
