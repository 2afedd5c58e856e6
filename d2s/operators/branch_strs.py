"""A Python str that differs between the branches of a tensor `if` (`mode = "train"` in
one, `"eval"` in the other; `return "big", s` / `return "small", s`): which text eager code
has only the run decides. The `if` gives out the str's id into the table of the strs the trace
saw (`str_arrays.str_id`), and code after it holds a `StrItem`: `==` / `!=` with a str and
`in` a tuple of strs follow the run, and returned (also inside a returned tuple, list or dict)
the call gives the str. Each place also knows the strs it may be (`Place.texts`), so text made
of it (`+`, an f-string, a str method, `len`) follows the run too (`chosen_text`); a use no
program can pick among (a dict key, `hash`) is refused at the line of the use
(`StrItem._refuse`).

Used by `control_flow._GraphIf`: `find` the places after both branches were traced once,
`as_ids` on each branch's values, `as_items` on the `if`'s outputs."""
from __future__ import annotations

from .str_arrays import ChosenStr, JoinedStr, StrItem, str_array, str_id
from .variables import is_variable


def _text(v) -> bool:
    return type(v) is str or isinstance(v, StrItem) and not isinstance(v, JoinedStr)


def differing_paths(a, b, leaf, same, path: tuple = ()):
    """The places (key paths) where `a` and `b`, two branches' values of one structure, hold
    `leaf` values that are not `same` (lists, tuples and dicts followed item by item)."""
    if leaf(a) and leaf(b):
        if not same(a, b):
            yield path
        return
    if type(a) in (list, tuple) and type(b) is type(a) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differing_paths(x, y, leaf, same, (*path, i))
    elif type(a) is dict and type(b) is dict and list(a) == list(b):
        for k in a:
            yield from differing_paths(a[k], b[k], leaf, same, (*path, k))


def _same_text(a, b) -> bool:
    return a is b or type(a) is str and type(b) is str and a == b


def _paths(a, b, path: tuple):
    """The places where `a` and `b` hold different strs (or a str the run decides), or a
    str and None (`x if t else None`: None has an id too, `python_picks`)."""
    return differing_paths(a, b, _text_or_none, _same_text, path)


def _text_or_none(v) -> bool:
    return v is None or _text(v)


class Place(tuple):
    """(state index, path) of a str the branches differ on; `texts`: the strs it may be (those
    of both branches), None where one is a str whose strs are not known."""

    texts: tuple | None = None
    none: bool = False  # (where `texts` is None: the run may choose None)


class JoinPlace(Place):
    """(state index, path) of a text `sep.join(names)` makes in a branch (a `JoinedStr`)
    where the other gives a Python str or another such text joined by the same `sep`: the
    `if` gives out an array of str ids, a str as the array of its one id, and after it the
    place holds the `JoinedStr` of the run's array (`if not chars: return ""` before
    `return "".join(chars)`)."""

    sep: str = ""


def _join_sep(a, b):
    """The `sep` both texts are joined by where one of `a` and `b` is a `JoinedStr` and the
    other a Python str or a `JoinedStr` of the same `sep`; else None."""
    seps = {v.sep for v in (a, b) if isinstance(v, JoinedStr)}
    if len(seps) != 1 or not all(isinstance(v, JoinedStr) or type(v) is str for v in (a, b)):
        return None
    return seps.pop()


def _join_places(a, b, i: int):
    def leaf(v):
        return type(v) is str or isinstance(v, JoinedStr)

    for path in differing_paths(a, b, leaf, lambda x, y: _same_text(x, y) or _join_sep(
            x, y) is None):
        place = JoinPlace((i, path))
        place.sep = _join_sep(_at(a, path), _at(b, path))
        yield place


def find(names: tuple, outs: list) -> set:
    """`Place`s of each str the two traced branches' values differ on: of the names the
    `if` gives out, and of the places of the objects it changed after them (`box.mode =
    "a"` / `"b"`: written back, the object gets the run's str); `JoinPlace`s of joined
    texts."""
    if len(outs) < 2:
        return set()
    n = min(len(outs[0]), len(outs[1]))
    found = set()
    for i in range(n):
        found.update(_join_places(outs[0][i], outs[1][i], i))
        for path in _paths(outs[0][i], outs[1][i], ()):
            place = Place((i, path))
            texts = [_texts_at(out[i], path) for out in outs[:2]]
            if None not in texts:
                place.texts = tuple(dict.fromkeys(texts[0] + texts[1]))
            else:  # (strs not known: whether the run may choose None still is)
                place.none = any(_at(out[i], path) is None or getattr(
                    _at(out[i], path), "may_be_none", bool)() for out in outs[:2])
            found.add(place)
    return found


def _at(v, path: tuple):
    for key in path:
        v = v[key]
    return v


def _texts_at(v, path: tuple):
    v = _at(v, path)
    return (v,) if type(v) is str or v is None else getattr(v, "texts", None)


def _replace(v, path: tuple, fn):
    if not path:
        return fn(v)
    key, rest = path[0], path[1:]
    if type(v) is dict and key in v:
        return {k: (_replace(x, rest, fn) if k == key else x) for k, x in v.items()}
    if type(v) in (list, tuple) and isinstance(key, int) and key < len(v):
        items = [(_replace(x, rest, fn) if j == key else x) for j, x in enumerate(v)]
        return items if type(v) is list else tuple(items)
    return v


def _as_id(v):
    if type(v) is str or v is None:
        return str_id(v)
    return v.id if _text(v) else v


def _as_ids_of_joined(v):
    if isinstance(v, JoinedStr):
        return v.id
    return str_array([v]) if type(v) is str else v


def as_ids(values: list, places: set) -> list:
    """A branch's values with the strs at `places` as their ids (graph values), at a
    `JoinPlace` as an array of ids."""
    for place in places:
        i, path = place
        if i < len(values):
            values[i] = _replace(values[i], path, _as_ids_of_joined if isinstance(
                place, JoinPlace) else _as_id)
    return values


def as_items(values: list, places: set, outs=()) -> list:
    """The `if`'s outputs with the ids at `places` as `StrItem`s (`ChosenStr`s knowing the
    strs they may be: `Place.texts`; `outs`, the branches' values, are not needed)."""
    for place in places:
        i, path = place
        if isinstance(place, JoinPlace) and i < len(values):
            values[i] = _replace(values[i], path, lambda v, sep=place.sep: JoinedStr(
                v, sep) if is_variable(v) else v)
            continue
        texts = getattr(place, "texts", None)
        if i < len(values):
            values[i] = _replace(values[i], path,
                                 lambda v, texts=texts, none=place.none: ChosenStr(
                                     v, texts, none) if is_variable(v) else v)
    return values
