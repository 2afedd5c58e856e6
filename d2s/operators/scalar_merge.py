"""Branches of a tensor `if` that leave a name as a value standing for a Python number on one
side and a real tensor on the other (`k = acc` after a graph loop, `k = y.sum()`): in eager
mode the name is a Python float on one path and a float32 tensor on the other, and anything
computed from it takes the tensor's dtype. The merged graph value is therefore of the dtype
eager mode gives `tensor <op> python_number`: the Python-number side is cast inside its
branch (a float64 standing for a Python float meeting a float32 tensor becomes float32)."""
from __future__ import annotations

import functools

import runtime as rt
from runtime.dtypes import promote_scalar
from runtime.program.builder import current_builder

from ..errors import ConversionError
from .variables import Undefined, is_variable, where


def _is_scalar(v) -> bool:
    return (is_variable(v) and getattr(v, "python_scalar", False)) or (
        isinstance(v, (int, float)) and not isinstance(v, bool) and not hasattr(v, "dtype"))


def _is_real_tensor(v) -> bool:
    return is_variable(v) and not getattr(v, "python_scalar", False)


def _target(a, b):
    """The dtype the Python-number side takes (None: nothing to cast), or a structure."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        inner = [_target(x, y) for x, y in zip(a, b)]
        return inner if any(t is not None for t in inner) else None
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        inner = {k: _target(a[k], b[k]) for k in a}
        return inner if any(t is not None for t in inner.values()) else None
    if min(number_rank(a), number_rank(b)) >= 0 and number_rank(a) != number_rank(b):
        return _wider_target(a, b)
    if min(number_rank(a), number_rank(b)) >= 0 and is_variable(a) and is_variable(b) and \
            a.dtype != b.dtype:
        # one Python type held at two widths (`loss.item()` as float32 on one path, a float
        # kept as program state, float64, on the other): the wider holds both exactly
        return max(a.dtype, b.dtype, key=lambda d: d.itemsize).name
    for scalar, tensor in ((a, b), (b, a)):
        if _is_scalar(scalar) and _is_real_tensor(tensor) and is_variable(scalar):
            sample = 0.0 if scalar.dtype.kind == "f" else 0
            target = promote_scalar(tensor.dtype, sample)
            if target != scalar.dtype:
                return target.name
    return None


def _wider_target(a, b):
    """Numbers of two types (an int on one path, a float on the other; a bool and an int): the
    merged value holds both as the wider one's dtype (float64 for a Python float), a
    `float_when` flag saying which type a run gives; None where the narrower side is no graph
    value (`cond` makes a Python number a constant of the other side's dtype)."""
    low, high = sorted((a, b), key=number_rank)
    if not is_variable(low):
        return None
    return high.dtype.name if is_variable(high) else WIDE_NUMBER[number_rank(high)]


WIDE_NUMBER = ("bool", "int64", "float64")  # (a Python bool, int, float as a graph value)


def number_rank(v) -> int:
    """0, 1, 2 for a Python bool, int, float (or a graph value standing for one); -1 for
    anything else."""
    if is_variable(v) and not getattr(v, "python_scalar", False) or not (
            is_variable(v) or isinstance(v, (int, float)) and not hasattr(v, "dtype")):
        return -1
    return "bif".index(_number_kind(v))


def scalar_casts(outs: list) -> dict:
    """Output index -> dtype (or structure of dtypes) for the two traced branches `outs`."""
    if len(outs) < 2:
        return {}
    casts = {}
    for i, (a, b) in enumerate(zip(outs[0], outs[1])):
        if isinstance(a, Undefined) or isinstance(b, Undefined):
            continue
        t = _target(a, b)
        if t is not None:
            casts[i] = t
    return casts


def cast_scalar(v, target):
    """`v` with its Python-number parts cast as `target` says (see `scalar_casts`)."""
    if target is None:
        return v
    if isinstance(target, list) and isinstance(v, (list, tuple)):
        return type(v)(cast_scalar(x, t) for x, t in zip(v, target))
    if isinstance(target, dict) and isinstance(v, dict):
        return {k: cast_scalar(x, target.get(k)) for k, x in v.items()}
    if isinstance(target, str) and _is_scalar(v) and is_variable(v) and v.dtype.name != target:
        return rt.cast(v, target)
    return v


def mixed_number_types(a, b) -> bool:
    """Whether the two branches give Python numbers of different types (an int on one path,
    a float on the other): which one a run gives is not known to the program, so a converted
    call returns the merged value as a tensor (`running.Entry.python_out`)."""
    kinds = {_number_kind(v) for v in (a, b) if not isinstance(v, Undefined)}
    return len(kinds) > 1


def merged_float_flag(a, b, pred, src):
    """The bool graph value saying whether the merge of the Python numbers `a` (the branch
    taken where `pred` holds) and `b` is a float when the program runs
    (`Variable.float_when`): the branches' own flags, or their types where those decide; None
    where the type is one for all runs (or a bool is involved: the dtype says which)."""
    sides = [v for v in (a, b) if not isinstance(v, Undefined)]
    if not any(is_variable(v) and v.float_when is not None for v in sides) and \
            not mixed_number_types(a, b):
        return None
    if not any(_number_kind(v) == "f" for v in sides):  # (a bool and an int: `bool_when`)
        return None
    flags = [_float_flag(v, src) for v in (a, b)]
    if len(sides) == 1:  # (the other side is a placeholder never read)
        return flags[0] if sides[0] is a else flags[1]
    return rt.where(pred, *flags)


def merged_bool_flag(a, b, pred):
    """The bool graph value saying whether the merge of the Python numbers `a` (the branch
    taken where `pred` holds) and `b` is a bool when the program runs (`Variable.bool_when`:
    `keep = bool(t)`, then `keep = 3` under a tensor condition); None where no side is a bool
    beside a number of another type."""
    sides = [v for v in (a, b) if not isinstance(v, Undefined)]
    if not any(is_variable(v) and v.bool_when is not None for v in sides) and not (
            mixed_number_types(a, b) and any(_number_kind(v) == "b" for v in sides)):
        return None
    flags = [bool_flag_here(v) for v in (a, b)]
    if len(sides) == 1:  # (the other side is a placeholder never read)
        return flags[0] if sides[0] is a else flags[1]
    return rt.where(pred, *flags)


def _float_flag(v, src):
    if isinstance(v, Undefined):
        return None
    flag = getattr(v, "float_when", None) if is_variable(v) else None
    if flag is None:
        return rt.full([], _number_kind(v) == "f", "bool")
    if _visible(flag):
        return flag
    arrays = v.float_arrays  # (`sum()` of lists the branch did not change)
    if arrays and all(_visible(a) for a in arrays):
        flags = [rt.static.array_length(a) > 0 for a in arrays]
        return functools.reduce(rt.logical_or, flags)
    raise ConversionError(
        f"a Python number computed {_decided_at(src)} ({where(src)}) is an int on some "
        "inputs and a float on others (an int that `+= 0.5` makes a float on some paths of a "
        "nested `if` only, or the sum() of a list of floats that may be empty, which is the "
        "int 0), which a value leaving the branch cannot say. Start it as a float (`0.0`, "
        "`sum(items, 0.0)`), or compute it before the `if`.", origin=src)


def _decided_at(src) -> str:
    """Where a tensor condition chose the path: the user's `if`, a loop that a tensor `break`
    or `return` may end early, or the code after a `return` (d2s's own `if` names it)."""
    line = src.source_line.lstrip() if src is not None else "if"
    if line.startswith(("if ", "elif ", "if(")):
        return "inside a branch of an `if` whose condition is a tensor"
    if line.startswith(("for ", "while ", "async for ")):
        return "in a loop that a tensor `break` or `return` may end early"
    return "on a path that a tensor condition decides"


def _visible(v, block=None) -> bool:
    block = block or current_builder().block
    return v.block is block or v.block.idx == 0 or v.block in block.ancestors()


def number_kind_flags(values: list, n: int, kinds: dict, outer, other=None) -> list:
    """A traced branch's extra `cond` outputs: for each `(kind, path)` in `kinds` (path: state
    index, then item indices), the bool saying whether the number there is a float (kind
    "f") or a bool ("b") when the program runs (`other(kind, value, kinds[...])` gives the
    other kinds' values: `number_or_tensor.here`).
    Numbers of this branch whose flag (`Variable.float_when`) lives in a block that code after
    the `if` (in block `outer`) cannot read are added (the `if` is traced again): only an
    output carries such a flag out, as a `return` inside nested tensor `if`s needs."""
    for path, v in _number_leaves(values[:n], ()):
        for kind, flag in (("b", v.bool_when), ("f", v.float_when)):
            if (kind, path) not in kinds and flag is not None and not _visible(flag, outer):
                kinds[(kind, path)] = True
    return [(bool_flag_here if kind == "b" else float_flag_here)(_at(values, path))
            if kind in "bf" else other(kind, _at(values, path), kinds[(kind, path)])
            for kind, path in sorted(kinds)]


def _number_leaves(v, path):
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            yield from _number_leaves(x, (*path, i))
    elif is_variable(v) and getattr(v, "python_scalar", False):
        yield path, v


def _at(v, path):
    for i in path:
        if isinstance(v, dict):  # (a dict's item: `none_or_tensor`'s paths)
            v = v.get(i)
            continue
        if not isinstance(v, (list, tuple)) or i >= len(v):
            return None
        v = v[i]
    return v


def float_flag_here(v):
    """The float flag of `v` in the block being traced (a placeholder's: False)."""
    flag = getattr(v, "float_when", None) if is_variable(v) else None
    if flag is not None:
        return flag
    number = number_rank(v) >= 0 and not isinstance(v, Undefined)
    return rt.full([], number and _number_kind(v) == "f", "bool")


def bool_flag_here(v):
    """The bool flag of `v` in the block being traced (a placeholder's: False)."""
    flag = getattr(v, "bool_when", None) if is_variable(v) else None
    if flag is not None:
        return flag
    number = number_rank(v) >= 0 and not isinstance(v, Undefined)
    return rt.full([], number and _number_kind(v) == "b", "bool")


def _number_kind(v) -> str:
    """'b', 'i' or 'f': the Python type a number (or a value standing for one) has."""
    if is_variable(v):
        return "i" if v.dtype.kind in "iu" else v.dtype.kind
    return "b" if isinstance(v, bool) else "i" if isinstance(v, int) else "f"
