"""`table[key] = value` where `key` is a number the converted code computed (`int(t)`,
`t.item()`): which item eager code sets is known only when the program runs.

    table = {0: 0.5, 1: 0.25, 2: 1.0}
    table[int(logits.argmax())] = 2.0      ->   _d2s.set_item(2.0, table, _d2s.int_(...))

While tracing, the key is a graph value that hashes by identity: stored as it is, it would be
a fourth key, and `table[0]` would read the old item silently. Instead every existing item
becomes `where(key == k, value, table[k])`, so the dict keeps its Python keys and every later
read (`table[0]`, `.get`, `in`, `len`, a loop, passing it on) sees the item eager code sees;
the program raises at the user's line when the key is none of them (eager would add one).
A dict where that cannot hold (no items, keys that are not numbers, items of other types,
dtypes or shapes than the value) is refused at the store (ConversionError).
"""
from __future__ import annotations

import runtime as rt
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from .variables import is_variable, user_origin, where

_NUMBERS = (bool, int, float)
_DTYPES = {bool: "bool", int: "int64", float: "float64"}


def set_item(value, container, key) -> None:
    """`container[key] = value` (the operands in Python's order of evaluation)."""
    if type(container) is dict and _computed_number(key):
        _store(container, key, value)
    else:
        container[key] = value


def _computed_number(key) -> bool:
    """A graph value standing for a Python number (`int(t)`), or a tuple holding one."""
    if type(key) is tuple:
        return any(_computed_number(k) for k in key)
    return is_variable(key) and bool(getattr(key, "python_scalar", False))


def _store(table: dict, key, value) -> None:
    src = user_origin(3)
    if type(key) is tuple or not table or any(type(k) not in _NUMBERS for k in table):
        _refuse(src, "whose keys are not all Python numbers (or that is empty), so eager code "
                "could add a key the program cannot")
    found, merged = None, {}
    for k, old in table.items():
        same = _equal(key, k)
        if same is None:
            continue
        merged[k] = _choose(same, value, old, src)
        found = same if found is None else rt.logical_or(found, same)
    if found is None:
        _refuse(src, "none of whose keys a value of the key's dtype can equal")
    _check_known(found, src, list(table))
    table.update(merged)


def _equal(key, k):
    """`key == k` as a bool graph value; None where it can never hold (an int key, 0.5)."""
    if key.dtype.kind in "iub" and isinstance(k, float) and not k.is_integer():
        return None
    return rt.equal(key, rt.full([], k, key.dtype))


def _choose(same, value, old, src):
    """`value` where `same`, else `old`: both numbers of one Python type, or tensors of one
    dtype and shape (the item's type must not depend on which key the program sees)."""
    a, b = _as_graph(value), _as_graph(old)
    kind = _number_type(value)
    if kind is not None and kind is _number_type(old):
        # one Python type, at the width the item has (a loop may carry a float as float32)
        dtype = b.dtype if is_variable(old) else a.dtype if is_variable(value) else \
            _DTYPES[kind]
        a, b = rt.cast(a, dtype), rt.cast(b, dtype)
    if a is None or b is None or a.dtype != b.dtype or list(a.shape) != list(b.shape) or \
            _number_type(value) != _number_type(old):
        _refuse(src, f"holding {_describe(old)} where the store puts {_describe(value)}, so "
                "the type of an item would depend on the key")
    out = rt.where(same, a, b)
    if kind is not None:
        out.python_scalar = True  # (eager code holds a Python number there)
        out.stop_gradient = True
    return out


def _number_type(v):
    if type(v) in _NUMBERS:
        return type(v)
    if is_variable(v) and getattr(v, "python_scalar", False):
        return {"b": bool, "f": float}.get(v.dtype.kind, int)
    return None


def _as_graph(v):
    """A tensor for `v` (a Python number as a 0-d tensor of the dtype standing for its type)."""
    if type(v) in _NUMBERS:
        return rt.full([], v, _DTYPES[type(v)])
    if is_variable(v) or isinstance(v, rt.Tensor):
        return v
    return None


def _describe(v) -> str:
    if type(v) in _NUMBERS:
        return f"a Python {type(v).__name__}"
    if is_variable(v) or isinstance(v, rt.Tensor):
        kind = " standing for a Python number" if _number_type(v) else ""
        return f"a tensor of shape {list(v.shape)} and dtype {v.dtype}{kind}"
    return f"a {type(v).__name__}"


def _check_known(found, src, keys) -> None:
    """A run-time error (at the user's line) where the key is none of `keys`."""

    def unknown():
        raise_error(KeyError(
            f"{where(src)}: the key computed by the converted code is none of the dict's keys "
            f"{keys}; eager code would add it, and a converted program keeps the dict's keys"),
            at=f"{src.filename}:{src.lineno}" if src else "")
        return rt.zeros([], "bool")  # never read: the op above raises

    rt.static.nn.cond(found, lambda: rt.zeros([], "bool"), unknown)


def _refuse(src, why: str):
    raise ConversionError(
        f"an item set under a key computed by the converted code ({where(src)}) goes into a "
        f"dict {why}: the key is known only when the program runs. Keep the table in a tensor "
        "(`table = rt.to_tensor([...])`, then `table[i] = value`), or give the dict all its "
        "keys first, with items of one type (numbers, or tensors of one dtype and shape).", src)
