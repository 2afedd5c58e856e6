"""NumPy values (what `x.numpy()` gives, `runtime/program/numpy_values.py`) carried by a graph
loop: a name that holds one before the loop and after each trip is one inside the body and
after the loop too (its operators keep NumPy's semantics, the call returns a NumPy array or
scalar, as eager code does). The same for the items of dicts, lists and tuples the loop
carries (`stats["total"] += a[i].sum()`). A name or item that is a NumPy value on some trips
only (a Python number or a tensor before the loop, a NumPy value after a trip) would come back
as one type whatever the run did: refused at the loop, naming it."""
from __future__ import annotations

import numpy as np

import runtime as rt

from ..errors import ConversionError
from .variables import is_variable, where


def _kind(v):
    """(numpy_array, numpy_scalar) of a graph value, None for one that is no NumPy value."""
    return (True, v.numpy_scalar) if is_variable(v) and v.numpy_array else None


def carried_scalar(v):
    """A NumPy scalar that a graph loop's body rebinds (`total = np.float32(0)`, then `total
    += loss.item()`): a graph value flagged as that NumPy scalar, so the loop carries it and
    NumPy's rules give the body's type (NEP 50: np.float32 + a Python float is np.float32).
    Anything else as it is."""
    if not isinstance(v, np.generic) or v.dtype.kind not in "biuf":
        return v
    out = rt.full([], v.item(), v.dtype.name)
    out.numpy_array, out.numpy_scalar = True, True
    return out


def numpy_scalars(out: list, places: set, full=None) -> list:
    """A tensor `if` branch's values with the NumPy scalars at `places` (state indices; also
    in tuples, lists and dicts there) as graph values flagged as them (`carried_scalar`),
    which a `cond` output can be: `v = 1.5 if t else np.float32(2.0)` gives eager's type per
    run (`run_types`). Given `full` (each branch's values so far, this one's last), first the
    places where a branch holds a NumPy scalar the other has not (new ones: traced again)."""
    if full is not None and len(full) == 2:
        places.update(i for i, (a, b) in enumerate(zip(*full)) if a is not b and (
            _has_scalar(a) or _has_scalar(b)))
    return [_scalars(v) if i in places else v for i, v in enumerate(out)]


def _has_scalar(v) -> bool:
    if type(v) in (list, tuple):
        return any(map(_has_scalar, v))
    if type(v) is dict:
        return any(map(_has_scalar, v.values()))
    return isinstance(v, np.generic) and v.dtype.kind in "biuf"


def _scalars(v):
    if type(v) in (list, tuple):
        return type(v)(_scalars(x) for x in v)
    if type(v) is dict:
        return {k: _scalars(x) for k, x in v.items()}
    return carried_scalar(v)


def items(a, b, path: tuple = ()):
    """(path, item of a, item of b) of two values, through the dicts, lists and tuples both
    hold alike."""
    if type(a) is dict and type(b) is dict:
        for k in a:
            if k in b:
                yield from items(a[k], b[k], (*path, k))
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for j, (x, y) in enumerate(zip(a, b)):
            yield from items(x, y, (*path, j))
    else:
        yield path, a, b


def enter(state: list, carried: list, values) -> None:
    """Flag the body's (or test's) parameters as the values they stand for on entry."""
    for i, v in zip(carried, values):
        for _, before, w in items(state[i], v):
            kind = _kind(before)
            if kind is not None and is_variable(w):
                w.numpy_array, w.numpy_scalar = kind


def check(state: list, carried: list, out: list, shown, src) -> None:
    """Refuse a name that is a NumPy value before the loop or after a trip, not both."""
    for i in carried:
        for path, a, b in items(state[i], out[i]):
            before, after = _kind(a), _kind(b)
            if before != after:
                _refuse(_item_name(shown(i), path), before, after, src)


def _item_name(name: str, path: tuple) -> str:
    """`'stats'` and ("total",) -> `'stats['total']'`."""
    items = "".join(f"[{k!r}]" for k in path)
    return f"{name[:-1]}{items}'" if name.endswith("'") else name + items


def _refuse(name: str, before, after, src) -> None:
    what = {None: "not a NumPy value", (True, False): "a NumPy array",
            (True, True): "a NumPy scalar"}
    raise ConversionError(
        f"{name} is {what[before]} before a loop whose condition is a tensor and "
        f"{what[after]} after a trip of it ({where(src)}): the loop carries its value, "
        "not which of them it is. Keep it one kind: a tensor (compute with tensor ops, "
        "take `.numpy()` after the loop) or a NumPy value on both.", src)


def finish(state: list, carried: list, result) -> None:
    """Flag the loop's results as the NumPy values their names (and items) held."""
    enter(state, carried, result)
