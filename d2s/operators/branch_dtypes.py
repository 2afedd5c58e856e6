"""A value whose dtype a tensor `if` decides (issue 35): `y = x.astype("int64") if x.sum() > 0
else x * 0.5`, `return t.argmax()` on one path and `return t.max()` on the other. One program
value has one dtype, so the `if` gives out both: the value of the if branch's dtype (zeros of
it where the else branch ran), and, as two more `cond` outputs, a bool saying whether the run
took the other dtype's path (`dtype_when`) and the value of that dtype (`dtype_alt`, zeros
where the if branch ran). The call then gives the run's value (`running.Entry`), with eager's
dtype, `stop_gradient` and gradient path (only the taken branch computes the value it gives).

That holds for a value the function returns (also inside returned tuples, lists and dicts, and
through enclosing tensor `if`s). Any other use (an op, `.dtype`, a loop carrying it) would
compute with one dtype for every run: it raises `ConversionError` at the user's line.

`_GraphIf` keeps their paths in its `kinds` (kind "d": the flag, "e": the other dtype's value;
the entry holds the two dtype names), `find` adds them after both branches are traced (the
`if` is traced again with them), `here` gives a branch's flag and value, `fill` the branch's
value of the first dtype, `mark_all` the outputs' attributes and read refusal.
"""
from __future__ import annotations

import runtime as rt

from ..errors import ConversionError
from . import none_or_tensor, number_or_tensor
from . import unbound as unbound_mod
from .block_values import same_kind
from .variables import Undefined, is_return_value, is_variable, user_origin, where


def flag_of(v):
    """The bool graph value saying the run gives `v.dtype_alt`; None where `v` is no such
    value."""
    return getattr(v, "dtype_when", None) if is_variable(v) else None


def _plain(v) -> bool:
    """A tensor leaf that may carry a run-decided dtype: no array, no value standing for a
    Python number, no other run-decided kind (None, a number, unbound on some paths)."""
    return is_variable(v) and not v.is_array and not getattr(v, "python_scalar", False) and \
        v.none_when is None and getattr(v, "number_when", None) is None and \
        v.on_read is None or flag_of(v) is not None and isinstance(v.on_read, _Refused)


def _dtypes(v) -> list:
    dtypes = [v.dtype.name]
    if flag_of(v) is not None:
        dtypes.append(v.dtype_alt.dtype.name)
    return dtypes


def find(first: list, second: list, names, kinds: dict) -> bool:
    """Record (in `kinds`) the paths of the values of `names` whose dtype differs between the
    branches (or one is already run-decided), for values that may carry it; True if new."""
    new = False
    for path, a, b in none_or_tensor.pairs(first[:len(names)], second[:len(names)], ()):
        if ("d", path) in kinds or isinstance(a, Undefined) or isinstance(b, Undefined):
            continue
        if not (_plain(a) and _plain(b)) or len(a.shape) != len(b.shape):
            continue
        dtypes = list(dict.fromkeys(_dtypes(a) + _dtypes(b)))
        if len(dtypes) == 2:  # (more than two: the dtype error at the `if` stays)
            kinds[("d", path)] = tuple(dtypes)
            kinds[("e", path)] = tuple(dtypes)
            new = True
    return new


def _sides(v, dtypes: tuple):
    """(the value of the first dtype, of the second, the flag: the second's is the run's) of
    a branch's value `v`."""
    first, second = dtypes
    flag = flag_of(v)
    if flag is not None:
        alt = v.dtype_alt
        return (v, alt, flag) if v.dtype.name == first else (alt, v, rt.logical_not(flag))
    if v.dtype.name == first:
        return v, rt.zeros_like(v, dtype=second), rt.full([], False, "bool")
    return rt.zeros_like(v, dtype=first), v, rt.full([], True, "bool")


def here(kind: str, v, entry):
    """A branch's value of the flag ("d") or the second dtype's value ("e") of `v`; other
    kinds: `none_or_tensor` / `number_or_tensor`'s."""
    if kind == "d":
        return _sides(v, entry)[2]
    if kind == "e":
        return _sides(v, entry)[1]
    return none_or_tensor.here(v) if kind == "z" else number_or_tensor.here(kind, v, entry)


def fill(values: list, kinds: dict) -> list:
    """`values` (a branch's, as given to `cond`) with the first dtype's value at each path
    recorded in `kinds`."""
    for kind, path in kinds:
        if kind == "d":
            values = _replace(values, path, kinds[(kind, path)])
    return values


def _replace(v, path: tuple, dtypes):
    if not path:
        return _sides(v, dtypes)[0] if is_variable(v) else v
    if isinstance(v, dict) and path[0] in v:
        return {**v, path[0]: _replace(v[path[0]], path[1:], dtypes)}
    if not isinstance(v, (list, tuple)) or not isinstance(path[0], int) or path[0] >= len(v):
        return v
    items = list(v)
    items[path[0]] = _replace(items[path[0]], path[1:], dtypes)
    return same_kind(v, items)


class _Refused:
    """The read check of such a value (`Variable.on_read`): any op reading it is refused."""

    def __init__(self, what: str, dtypes: tuple, src):
        self.what, self.dtypes, self.src = what, dtypes, src

    def __call__(self):
        raise refusal(self.what, self.dtypes, self.src)


def refusal(what: str, dtypes: tuple, src, use: str = "used in an op",
            origin=None) -> ConversionError:
    first, second = dtypes
    return ConversionError(
        f"{what} is {_a(first)} tensor on some runs and {_a(second)} tensor on others (an if "
        f"whose condition is a tensor decides which: {where(src)}), and is {use} here: one "
        "program value has one dtype. Converted code can return such a value, not compute "
        "with it; cast one side in the if (`rt.cast(v, ...)`) so both paths give one dtype.",
        origin=origin or user_origin() or src)


def _a(dtype: str) -> str:
    return ("an " if dtype[:1] in "aeiou" else "a ") + dtype


def mark_all(result: list, kinds: dict, names, src) -> None:
    """Give the `if`'s outputs their flag and other value (`kinds`: (kind, path) -> what
    `cond` gave out) and the refusal of any other use; then `none_or_tensor`'s marks."""
    for (kind, path), flag in kinds.items():
        if kind != "d":
            continue
        r = none_or_tensor.at(result, path)
        if not is_variable(r):
            continue
        r.dtype_when, r.dtype_alt = flag, kinds[("e", path)]
        name = names[path[0]] if path[0] < len(names) else None
        r.on_read = _Refused(_what(name, path[1:]), (r.dtype.name, r.dtype_alt.dtype.name), src)
    none_or_tensor.mark_all(result, kinds, names, src)


def _what(name, path: tuple) -> str:
    items = "".join(f"[{i!r}]" for i in path)
    if name is None or is_return_value(name):
        return "the returned value" + items
    if name.startswith("_ifexp") or " " in name:  # (`control_flow._IFEXP`)
        return "the conditional expression's value" + items
    return f"'{name}{items}'"


def check_attribute(x, attribute: str) -> None:
    """`x.dtype` (...) of such a value: refused (the run decides it)."""
    if flag_of(x) is None or not isinstance(x.on_read, _Refused) and \
            x.dtype == x.dtype_alt.dtype:
        return  # (the sum of a list that may be empty, of one dtype: `start_where_empty`)
    raise _refusal_of(x, f"read as .{attribute}")


def start_where_empty(out, start, empty, error: TypeError, src):
    """`sum(items, start)` (`out`) of a list whose length the run decides, `start` a tensor
    of another shape or dtype than the sum's: where the list is empty (the bool graph value
    `empty`), eager gives `start` itself. Returned, the call gives it there (as the other
    dtype's value of a tensor `if`); any other use raises `error` on those runs (a read
    check), as before, and works on the others."""
    out.dtype_when, out.dtype_alt = empty, rt.assign(start)
    unbound_mod.mark(out, rt.logical_not(empty), "sum()", src, error=error)
    return out


def _refusal_of(leaf, use: str, origin=None) -> ConversionError:
    check = leaf.on_read if isinstance(leaf.on_read, _Refused) else None
    return refusal(check.what if check else "the value", (
        leaf.dtype.name, leaf.dtype_alt.dtype.name), check.src if check else None, use, origin)


def refuse_carried(names, state, src) -> None:
    """A loop whose condition is a tensor carrying such a value: refused (`none_or_tensor`'s
    check too)."""
    for v in state:
        for _, leaf, _ in none_or_tensor.pairs(v, v, ()):
            if flag_of(leaf) is not None and isinstance(leaf.on_read, _Refused):  # (not a
                # sum's, `start_where_empty`: carried as before, its read check raising)
                raise _refusal_of(leaf, "carried by a loop whose condition is a tensor "
                                  f"({where(src)})", src)
    none_or_tensor.refuse_carried(names, state, src)
