"""A value that is None on some runs and a tensor on others (issue 35): `bias = None`, then
`if x.mean() > 0: bias = x * 2`; `return None, 0.0` under a tensor condition beside `return
grad, 1.0`; `self.cache = None` in one branch. Eager code has None where the branch says so;
one program value holds the tensor (zeros where the branch has None), and the `if` also gives
out, as one more `cond` output, a bool saying whether the value is None on this run
(`Variable.none_when`). The call then gives eager's None exactly where the flag holds
(`running.Entry`), for a returned value (also inside returned tuples, lists and dicts) and a
value written back to a place alike.

`v is None` / `v is not None` of such a value is the flag (`logical._is_none`), so `if bias is
not None: x = x + bias` is a tensor `if` whose branch runs only where `bias` is a tensor. Any
other use of the value (an op, a method, indexing) has a read check (`unbound.mark`): on the
runs where it is None the program raises at the line of the use (`NoneValueError`, both a
TypeError and an AttributeError, as eager's is one or the other by the use), instead of
computing with the zeros. A loop whose condition is a tensor refuses to carry such a value.

`_GraphIf` keeps their paths in its `kinds` (kind "z": the flag; the entry holds a value like
the tensor, whose zeros fill the None side); `find` adds them after both branches are traced
(the `if` is traced again with them), `here` gives a branch's flag, `fill` the zeros.
"""
from __future__ import annotations

import copy

import runtime as rt
from runtime.core import is_tensor

from ..errors import ConversionError
from . import key_flags, number_or_tensor
from . import unbound as unbound_mod
from .block_values import same_kind, zeros_like
from .print_values import Formatted, FString, Spec, as_print_arg
from .variables import is_return_value, is_variable, user_origin, where


class NoneValueError(TypeError, AttributeError):
    """Eager code's error using None as a tensor: a TypeError (`None + 1`, `None[0]`) or an
    AttributeError (`None.sum()`, a tensor op given None) by the use; this is both."""


def flag_of(v):
    """The bool graph value saying `v` is None on this run; None where `v` is no such value."""
    return getattr(v, "none_when", None) if is_variable(v) else None


def _tensor_side(v) -> bool:
    """A value that may stand beside None: a tensor or a value standing for a Python number
    (`.item()`, `float(t)`: the call gives eager's number or None), not an array nor a value
    that is a number on some runs and a tensor on others; or one None on some runs already."""
    if flag_of(v) is not None:
        return True
    if not is_tensor(v):
        return False
    return not is_variable(v) or not (v.is_array or getattr(v, "number_when", None) is not None)


def convertible(a, b) -> bool:
    """Whether the values of two paths of a tensor `if` are one None-or-tensor value."""
    if flag_of(a) is not None or flag_of(b) is not None:
        return all(v is None or _tensor_side(v) for v in (a, b))
    return (a is None and _tensor_side(b)) or (b is None and _tensor_side(a))


def find(first: list, second: list, names, kinds: dict) -> bool:
    """Record (in `kinds`) the paths of the values of `names` that one branch leaves None
    and the other a tensor (or either one such a value); True if any new."""
    new = False
    for path, a, b in pairs(first[:len(names)], second[:len(names)], ()):
        if ("z", path) in kinds or not convertible(a, b):
            continue
        kinds[("z", path)] = b if a is None else a
        new = True
    return new


def pairs(a, b, path):
    """(path, item of a, item of b) of two structures of lists, tuples and dicts (of the same
    keys), leaf by leaf."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from pairs(x, y, (*path, i))
    elif isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        for k in a:
            yield from pairs(a[k], b[k], (*path, k))
    else:
        yield path, a, b


def at(v, path: tuple):
    """The item of `v` at `path` (None where it has none)."""
    for i in path:
        if isinstance(v, dict):
            v = v.get(i)
        elif isinstance(v, (list, tuple)) and isinstance(i, int) and i < len(v):
            v = v[i]
        else:
            return None
    return v


def here(v):
    """A branch's value of the flag of `v`: whether it is None there."""
    flag = flag_of(v)
    return flag if flag is not None else rt.full([], v is None, "bool")


def instance_of(obj, classes: tuple):
    """`isinstance(obj, classes)` of a value that is None on some runs: the truth on each run
    (a graph value standing for a Python bool where the two differ); of other values,
    `number_or_tensor.instance_of`."""
    flag = flag_of(obj)
    if flag is None:
        return number_or_tensor.instance_of(obj, classes)
    as_none = isinstance(None, classes)
    as_tensor = any(isinstance(c, type) and issubclass(rt.Tensor, c) for c in classes)
    if as_none == as_tensor:
        return as_none
    out = rt.assign(flag) if as_none else rt.logical_not(flag)
    out.python_scalar = True
    return out


def fill(values: list, kinds: dict) -> list:
    """`values` (a branch's, as given to `cond`) with zeros like the tensor where a path
    recorded in `kinds` holds None."""
    for kind, path in kinds:
        if kind == "z":
            values = _replace(values, path, kinds[(kind, path)])
    return values


def _replace(v, path: tuple, like):
    if not path:
        return zeros_like(like) if v is None else v
    if isinstance(v, dict) and path[0] in v:
        return {**v, path[0]: _replace(v[path[0]], path[1:], like)}
    if not isinstance(v, (list, tuple)) or not isinstance(path[0], int) or path[0] >= len(v):
        return v
    items = list(v)
    items[path[0]] = _replace(items[path[0]], path[1:], like)
    return same_kind(v, items)


def mark_all(result: list, kinds: dict, names, src) -> None:
    """Give the `if`'s outputs their flags (`kinds`: path -> the flag `cond` gave out) and a
    read check raising eager's TypeError on the runs where the value is None."""
    for (kind, path), flag in kinds.items():
        if kind != "z":
            continue
        r = at(result, path)
        if not is_variable(r):
            continue
        r.none_when = flag
        name = names[path[0]] if path[0] < len(names) else None
        what = _what(name, path[1:])
        unbound_mod.mark(r, rt.logical_not(flag), what, src, error=NoneValueError(
            f"{what} is None on this run (the if whose condition is a tensor at "
            f"{where(src)} left it None), and eager code cannot use None here. Test "
            f"{_test(name, path[1:])} before using it."))


def none_where_absent(value, flag, key):
    """`d.get(key, None)` / `d.pop(key, None)` of a tensor under a key that exists where the
    bool graph value `flag` holds: the value, None on the other runs (returned as None, `is
    None` is the flag, another use raises eager's TypeError at its line)."""
    src = user_origin(2)
    out = key_flags.unchecked(value, lambda: rt.assign(value))
    out.none_when = rt.logical_not(flag)
    what = f"the default None of the key {key!r}"
    unbound_mod.mark(out, flag, what, src, error=NoneValueError(
        f"{what} ({where(src)}) is the value on this run (the dict has no key {key!r} "
        "here), and eager code cannot use None here. Test `is not None` before using it."))
    return out


key_flags.NONE_WHERE_ABSENT[:] = [none_where_absent]


def _test(name, path: tuple) -> str:
    if name is None or is_return_value(name) or name.startswith("_ifexp"):
        return "`is not None` of it"
    return f"`{name}{''.join(f'[{i!r}]' for i in path)} is not None`"


def _what(name, path: tuple) -> str:
    items = "".join(f"[{i!r}]" for i in path)
    if name is None:
        return "a value the if changed" + (f" (item {items})" if items else "")
    if is_return_value(name):
        return "the returned value" + items
    if name.startswith("_ifexp"):
        return "the conditional expression's value" + items
    return f"'{name}{items}'"


def refuse_carried(names, state, src) -> None:
    """A loop whose condition is a tensor carrying a value that is None on some runs: its
    flag would not follow the trips (refused)."""
    for name, v in zip(names, state):
        for path, leaf, _ in pairs(v, v, ()):
            if flag_of(leaf) is not None:
                raise ConversionError(
                    f"{_what(name, path)} is None on some runs and a tensor on others (an "
                    f"if whose condition is a tensor decided which), and is carried by a "
                    f"loop whose condition is a tensor ({where(src)}): a loop cannot carry "
                    f"whether it is None. Test `is not None` before the loop and give it a "
                    f"tensor on every path (e.g. zeros), or decide the if with a Python "
                    f"value.", origin=src)


def printing(print_):
    """d2s's `print_`, printing `None` on the runs where a value it is given (or a piece of
    an f-string or container it is given) is None: a `cond` on its flag."""
    def print_none(*args, **kwargs):
        args = tuple(as_print_arg(a) for a in args)
        for i, a in enumerate(args):
            for j, piece in enumerate(a if type(a) is FString else (a,)):
                value = piece.value if isinstance(piece, Formatted) else piece
                if flag_of(value) is not None:
                    def given(v, i=i, j=j, a=a):
                        if type(a) is FString:
                            v = FString((*a[:j], "None" if v is None else v, *a[j + 1:]))
                        return (*args[:i], v, *args[i + 1:])
                    plain = copy.copy(value)
                    plain.none_when = plain.on_read = None
                    if isinstance(piece, Formatted):
                        plain = Formatted(plain, piece.conv, piece.spec)
                    rt.static.nn.cond(value.none_when,
                                      lambda: print_none(*given(None), **kwargs),
                                      lambda: print_none(*given(plain), **kwargs))
                    return None
                value = piece.value if type(piece) is Spec else value
                if is_variable(value) and getattr(value, "number_when", None) is not None:
                    # (a Python number on some runs, `number_or_tensor`: printed as it)
                    def given(v, i=i, j=j, a=a, piece=piece):
                        if isinstance(piece, Formatted):
                            v = Formatted(v, piece.conv, piece.spec)
                        elif type(piece) is Spec:
                            v = Spec(v, piece.spec, piece.conv)
                        if type(a) is FString:
                            v = FString((*a[:j], v, *a[j + 1:]))
                        return (*args[:i], v, *args[i + 1:])
                    plain = copy.copy(value)
                    plain.__dict__["_number_when"] = None
                    rt.static.nn.cond(
                        value.number_when,
                        lambda g=given, n=value.number_value: print_none(*g(n), **kwargs),
                        lambda g=given, p=plain: print_none(*g(p), **kwargs))
                    return None
        return print_(*args, **kwargs)
    return print_none
