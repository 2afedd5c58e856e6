"""The text of a str a tensor `if` chose (`str_arrays.ChosenStr`, whose `texts` are the strs
the run may choose): a text operation (`mode.upper()`, `"[" + mode + "]"`, an f-string,
`len(mode)`, `mode.startswith("t")`, `"a" in mode`) is done at trace time on each of those
strs (each combination, where it takes several such strs), and the program picks the result
by the run's str ids: a str is a `ChosenStr` again (the ids of the results), a bool or int a
graph value standing for the Python one (`python_scalar`: returned as a Python value). Where
every str gives the same value, the operation gives that value. A result of another type (a
list from `split`), an operation that raises for one of the strs, a str read from a list a
tensor sizes (no known `texts`) or a tensor beside the str is refused at the user's line, and
so is an order (`mode < "m"`, `sorted`, `max`) that differs by the str (`same_for_all`:
Python takes its truth).
"""
from __future__ import annotations

import itertools

import runtime as rt
from runtime.ops.array_number_kinds import STR_DTYPE, string_id

from ..errors import ConversionError
from . import run_raises
from .variables import is_variable, user_origin, where

MAX_COMBINATIONS = 64  # (of the strs several chosen strs may be, in one operation)


def is_run_str(v) -> bool:
    """Whether `v` is a str only the run decides (a `str_arrays.StrItem`)."""
    return getattr(type(v), "run_str", False)


def text_op(fn, what: str, *values):
    """`fn(*values)`, the run's strs in place of the chosen ones among `values`."""
    chosen = [k for k, v in enumerate(values) if is_run_str(v)]
    combos = _combinations([values[k] for k in chosen], values, what)
    results = []
    for combo in combos:
        args = list(values)
        for k, text in zip(chosen, combo):
            args[k] = text
        results.append(_result(fn, args, what, combo))
    return picked([values[k] for k in chosen], combos, results, what)


def same_for_all(fn, what: str, item):
    """`fn(text)`, a Python value, where every str the run may choose gives the same one."""
    combos = _combinations([item], (item,), what)
    results = [_result(fn, [text], what, (text,)) for (text,) in combos]
    results = _raising_when_run([item], combos, results, what)
    if all(type(r) is type(results[0]) and r == results[0] for r in results):
        return results[0]
    item._refuse()


def _combinations(items: list, values, what: str) -> list:
    for v in items:
        if getattr(v, "texts", None) is None:
            v._refuse()  # (a str read from a list a tensor sizes: which strs, unknown)
    if any(is_variable(v) for v in values):
        _refuse(f"{what} of a str chosen by an if whose condition is a tensor and a tensor")
    combos = list(itertools.product(*(v.texts for v in items)))
    if len(combos) > MAX_COMBINATIONS:
        _refuse(f"{what} of strs chosen by ifs whose conditions are tensors, which may be "
                f"{len(combos)} combinations of strs (at most {MAX_COMBINATIONS})")
    return combos


class _Raised:
    """The exception `fn` raised for one combination of strs (eager raises it on that run)."""

    def __init__(self, error: Exception, combo: tuple):
        self.error, self.combo = error, combo


def _result(fn, args: list, what: str, combo: tuple):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001  (eager raises on that run only: `picked`)
        return _Raised(e, combo)


def _refuse_raising(what: str, raised: _Raised):
    e = raised.error
    _refuse(f"{what} raises {type(e).__name__} ({e}) for {', '.join(map(repr, raised.combo))}, "
            "every value the run may choose (an if whose condition is a tensor, or a number the "
            "converted code computes indexing a table, chose it)")


def picked(items: list, combos: list, results: list, what: str):
    """The result of the run's combination of strs (`items`' ids) among `results`."""
    results = _raising_when_run(items, combos, results, what)
    first = results[0]
    if all(type(r) is type(first) and r == first for r in results):
        return first  # (the same whatever the run chooses)
    kind = type(first)
    if kind not in (str, bool, int) or any(type(r) is not kind for r in results):
        _refuse(f"{what} of {items[0].what} gives "
                f"{', '.join(sorted({type(r).__name__ for r in results}))} values that differ "
                "by the str")
    values = [_constant(r) for r in results]
    out = values[-1]
    for combo, value in zip(combos[:-1], values[:-1]):
        out = rt.where(_test(items, combo), value, out)
    if kind is str:
        return type(items[0])(out, tuple(dict.fromkeys(results)))
    out.python_scalar = True  # (a Python bool or int when returned, as eager's)
    return out


def _raising_when_run(items: list, combos: list, results: list, what: str) -> list:
    """`results` where a combination of strs raised (`_Raised`, `None.upper()` of a label the
    run may choose None for): the program raises eager's exception on the runs that choose
    it, and another combination's result stands in for it on the others (never seen)."""
    kept = [r for r in results if not isinstance(r, _Raised)]
    if len(kept) == len(results):
        return results
    if not kept:
        _refuse_raising(what, results[0])
    for combo, r in zip(combos, results):
        if isinstance(r, _Raised):
            run_raises.raise_when(_test(items, combo), r.error)
    return [kept[0] if isinstance(r, _Raised) else r for r in results]


def _test(items: list, combo: tuple):
    """Whether the run chose `combo` (a bool graph value): each item's id is its str's."""
    test = None
    for item, text in zip(items, combo):
        same = rt.equal(item.id, _constant(text))
        test = same if test is None else rt.logical_and(test, same)
    return test


def _constant(value):
    if type(value) is str or value is None:  # (None has an id too: `python_picks`)
        return rt.full([], string_id(value), STR_DTYPE)
    return rt.full([], value, "bool" if type(value) is bool else "int64")


def _refuse(what: str):
    src = user_origin()
    raise ConversionError(
        f"{what} ({where(src)}): converted code makes the text of a chosen str for each str "
        "the run may choose, and this it cannot. Return the str (the call gives it), or keep "
        "an index into a tuple of the texts.", src)
