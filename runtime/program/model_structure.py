"""The nested structure of a saved model's inputs and outputs (`"structure"` in `PATH.json`).

A Layer whose `forward(self, xs, cfg)` takes a list of tensors and a dict, and returns a tuple,
is saved with its program's flat feeds and fetches plus this description, so the loaded model
is called with the same list and dict and returns the same tuple. A node is one of

    {"input": K}            the K-th feed (inputs) / {"output": K}: the K-th fetch (outputs)
    {"number": K}           outputs: the K-th fetch as a Python number (`int`, `float` or
                            `bool` by its dtype), where the function returned one (`len(xs)`,
                            `loss.item()`), as the converted call does
    {"number_kind": [K, F]} outputs: the K-th fetch as a Python float when the F-th (a bool)
                            is true, else as an int (`sum()` of a list of floats that may be
                            empty is the int start); [K, F, B]: as a bool when the B-th is
                            true (F null where no float is possible: a bool or an int)
    {"number_or_tensor": [K, F, V]}  outputs: the K-th fetch, or where the F-th (a bool) is
                            true the V-th as a Python number (a value that is a number on some
                            paths of a tensor `if` and a tensor on others)
    {"numbers": K}          outputs: the K-th fetch, a tensor array, as a list of Python
                            numbers (a list of them grown by a graph loop or tensor `if`)
    {"number_pairs": K}     ... of numbers of several types, each a `[value, kind]` pair
                            (`runtime/ops/array_number_kinds.py`)
    {"number_pair": K}      ... one `[value, kind]` pair (an item of `rows`)
    {"rows": NODE}          outputs: a list of structures whose length depends on a tensor
                            (a list of dicts appended to by a graph loop): NODE is one item,
                            its leaves tensor arrays of one length; row k takes item k of each
                            (`numbers` is then `number`, `number_pairs` `number_pair`)
    {"flagged_dict": [[[KEY, NODE, F], ...], ORDER]}  outputs: a dict whose keys exist on
                            some runs only (set after a tensor `continue`, or in one branch of
                            a tensor `if`): each KEY where the F-th fetch (a bool) is true (F
                            null: always); ORDER null, or [G, [KEY, ...]]: where the G-th is
                            false, those keys come first in that order; or ["ranks", [NODE,
                            ...]]: each entry's rank (when eager code first stored its key),
                            the present keys in the order of their ranks
    {"value": V}            a constant leaf (a JSON number, string, bool or null)
    {"list": [NODE, ...]}   {"tuple": [NODE, ...]}
    {"dict": [[KEY, NODE], ...]}   KEY a string or an integer, in the saved order

`"structure": {"inputs": [NODE per argument], "outputs": NODE}`. Namedtuples are saved as
tuples and dataclasses as dicts of their fields. Loading checks the description like the rest
of the file (`check`): every feed is used exactly once, every fetch at least once, the depth is
bounded.

>>> node = encode(({"a": 1, "b": 2}, 3), lambda leaf: {"output": leaf - 1})
>>> node
{'tuple': [{'dict': [['a', {'output': 0}], ['b', {'output': 1}]]}, {'output': 2}]}
>>> build(check(node, "output", 3), ["A", "B", "C"])
({'a': 'A', 'b': 'B'}, 'C')
"""
from __future__ import annotations

import dataclasses

from ..ops.array_number_kinds import number_of_pair
from .serialize import ModelFormatError

MAX_DEPTH = 64
_CONTAINERS = ("list", "tuple", "dict")
_SCALARS = (int, float, str, bool, type(None))
_NUMBERS = ("number", "numbers", "number_pairs", "number_pair")  # (outputs given back as Python numbers)


def encode(value, leaf, is_leaf=None) -> dict:
    """The node of a nested `value`; `leaf(x)` gives the node of each non-container leaf
    (and of each value `is_leaf` says is one)."""
    if is_leaf is not None and is_leaf(value):
        return leaf(value)
    if isinstance(value, dict) or dataclasses.is_dataclass(value) and not isinstance(
            value, type):
        items = value.items() if isinstance(value, dict) else (
            (f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
        out = []
        for key, item in items:
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"a saved model's dict keys are strings or integers, not "
                                f"{key!r}")
            out.append([key, encode(item, leaf, is_leaf)])
        return {"dict": out}
    if isinstance(value, (list, tuple)):
        return {"list" if isinstance(value, list) else "tuple":
                [encode(item, leaf, is_leaf) for item in value]}
    return leaf(value)


def check(node, kind: str, count: int) -> dict:
    """`node` as read from a file, checked: well-formed, and its `kind` ("input" or "output")
    leaves name 0..count-1 (inputs: each exactly once; outputs: each at least once)."""
    seen: list = []
    _check(node, kind, count, seen, 0)
    missing = sorted(set(range(count)) - set(seen))
    if missing or kind == "input" and len(seen) != len(set(seen)):
        raise ModelFormatError(f"the {kind} structure does not use each of the {count} "
                               f"{kind}s once (missing {missing[:3]})")
    return node


def _check(node, kind, count, seen, depth) -> None:
    if depth > MAX_DEPTH:
        raise ModelFormatError(f"the {kind} structure is nested deeper than {MAX_DEPTH}")
    if not isinstance(node, dict) or len(node) != 1:
        raise ModelFormatError(f"a node of the {kind} structure is not a one-key object")
    (tag, body), = node.items()
    if tag == kind or kind == "output" and tag in _NUMBERS:
        if body.__class__ is not int or not 0 <= body < count:
            raise ModelFormatError(f"the {kind} structure names {kind} {body!r} of {count}")
        seen.append(body)
    elif tag in ("number_kind", "number_or_tensor") and kind == "output" and isinstance(
            body, list) and len(body) in ((2, 3) if tag == "number_kind" else (3,)) and \
            body[0] is not None and (tag == "number_kind" or None not in body):
        for index in body:
            if index is not None:
                _check({"output": index}, kind, count, seen, depth + 1)
    elif tag == "flagged_dict" and kind == "output":
        _check_flagged(body, count, seen, depth)
    elif tag == "rows" and kind == "output":
        _check(body, kind, count, seen, depth + 1)
    elif tag == "value":
        if not isinstance(body, _SCALARS):
            raise ModelFormatError(f"a constant of the {kind} structure is a "
                                   f"{type(body).__name__}")
    elif tag in ("list", "tuple") and isinstance(body, list):
        for item in body:
            _check(item, kind, count, seen, depth + 1)
    elif tag == "dict" and isinstance(body, list):
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (str, int))
                    and not isinstance(pair[0], bool)):
                raise ModelFormatError(f"a dict of the {kind} structure has an entry {pair!r}")
            _check(pair[1], kind, count, seen, depth + 1)
    else:
        raise ModelFormatError(f"the {kind} structure has a node {tag!r}")


def _check_flagged(body, count: int, seen: list, depth: int) -> None:
    entries, order = body if isinstance(body, list) and len(body) == 2 else (None, None)
    if not isinstance(entries, list) or not (order is None or isinstance(order, list) and len(
            order) == 2 and isinstance(order[1], list)) or _ranked(order) and len(
                order[1]) != len(entries):
        raise ModelFormatError("a flagged dict of the output structure is malformed")
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], (str, int))
                and not isinstance(entry[0], bool)):
            raise ModelFormatError(f"a flagged dict of the output structure has an entry "
                                   f"{entry!r}")
        _check(entry[1], "output", count, seen, depth + 1)
        if entry[2] is not None:
            _check({"output": entry[2]}, "output", count, seen, depth + 1)
    if _ranked(order):
        for rank in order[1]:
            _check(rank, "output", count, seen, depth + 1)
    elif order is not None:
        _check({"output": order[0]}, "output", count, seen, depth + 1)


def _ranked(order) -> bool:
    return isinstance(order, list) and len(order) == 2 and order[0] == "ranks"


def build(node: dict, leaves: list):
    """The nested value `node` describes, its output leaves taken from `leaves`."""
    (tag, body), = node.items()
    if tag in ("output", "input"):
        return leaves[body]
    if tag == "number":
        return leaves[body].item()
    if tag == "number_kind":
        number, is_float, is_bool = (None if k is None else leaves[k].item()
                                     for k in (*body, None)[:3])
        if is_bool or is_float is None:  # (a bool, or the type the dtype gives)
            return bool(number) if is_bool else number
        return float(number) if is_float else int(number)
    if tag == "number_or_tensor":
        k, flag, number = body
        return leaves[number].item() if leaves[flag].item() else leaves[k]
    if tag == "numbers":
        return [t.item() for t in leaves[body]]
    if tag == "number_pairs":  # (numbers of several types: `[value, kind]` each)
        return [number_of_pair(t.numpy()) for t in leaves[body]]
    if tag == "number_pair":
        return number_of_pair(leaves[body].numpy())
    if tag == "flagged_dict":  # (the keys present in this run, as the live call's dict)
        entries, order = body
        out = {key: build(item, leaves) for key, item, flag in entries
               if flag is None or bool(leaves[flag].item())}
        if _ranked(order):  # (the present keys by their ranks in this run)
            rank = {key: int(build(r, leaves)) for (key, _, _), r in zip(entries, order[1])}
            out = {key: out[key] for key in sorted(out, key=rank.__getitem__)}
        elif order is not None and not bool(leaves[order[0]].item()):
            first = [key for key in order[1] if key in out]
            out = {key: out[key] for key in first + [key for key in out if key not in first]}
        return out
    if tag == "rows":  # (each leaf of the item a list of one length: row k takes the k-th)
        first = next(iter(paths(body)), None)
        count = 0 if first is None else len(leaves[first])
        return [build(body, _Row(leaves, k)) for k in range(count)]
    if tag == "value":
        return body
    if tag == "dict":
        return {key: build(item, leaves) for key, item in body}
    items = [build(item, leaves) for item in body]
    return items if tag == "list" else tuple(items)


def pick(node: dict, value, where: str, out: dict) -> None:
    """Put each input leaf of the caller's `value` (shaped like `node`) into `out[index]`;
    a TypeError at `where` when the shapes differ."""
    (tag, body), = node.items()
    if tag == "input":
        out[body] = value
    elif tag == "list" or tag == "tuple":
        if not isinstance(value, (list, tuple)) or len(value) != len(body):
            raise TypeError(f"{where} should be a {tag} of {len(body)} items, got "
                            f"{_kind(value)}")
        for i, (item, v) in enumerate(zip(body, value)):
            pick(item, v, f"{where}[{i}]", out)
    elif tag == "dict":
        keys = [key for key, _ in body]
        if not isinstance(value, dict) or sorted(map(str, value)) != sorted(map(str, keys)):
            raise TypeError(f"{where} should be a dict with keys {keys}, got {_kind(value)}")
        for key, item in body:
            pick(item, value[key], f"{where}[{key!r}]", out)


def paths(node: dict, where: str = "") -> dict:
    """index -> where the leaf sits (`"[0]['a']"`; "" for the node itself), for each input
    or output leaf of `node` (the first place, for one that appears twice)."""
    (tag, body), = node.items()
    if tag in ("input", "output", *_NUMBERS):
        return {body: where}
    if tag in ("number_kind", "number_or_tensor"):
        return {k: where for k in body if k is not None}
    if tag == "value":
        return {}
    if tag == "rows":
        return paths(body, f"{where}[k]")
    if tag == "flagged_dict":
        out = {}
        for key, item, flag in body[0]:
            for k, p in {**paths(item, f"{where}[{key!r}]"),
                         **({} if flag is None else {flag: f"{where} has {key!r}"})}.items():
                out.setdefault(k, p)
        if _ranked(body[1]):
            for rank in body[1][1]:
                for k in paths(rank, f"{where}'s key order"):
                    out.setdefault(k, f"{where}'s key order")
        elif body[1] is not None:
            out.setdefault(body[1][0], f"{where}'s key order")
        return out
    out: dict = {}
    pairs = body if tag == "dict" else enumerate(body)
    for key, item in pairs:
        for k, p in paths(item, f"{where}[{key!r}]").items():
            out.setdefault(k, p)
    return out


class _Row:
    """The leaves of row `k` of a `rows` node: item k of each (list) leaf."""

    def __init__(self, leaves: list, k: int):
        self.leaves, self.k = leaves, k

    def __getitem__(self, index: int):
        return self.leaves[index][self.k]


def _kind(value) -> str:
    if isinstance(value, dict):
        return f"a dict with keys {list(value)}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"
