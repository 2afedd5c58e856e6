"""`stop_gradient` that only the run decides, carried beside a value as a graph value.

Eager code gives `y = x * w if c else x.detach()` a gradient path on the runs that take the
first branch only, and each item of `outs.append(x * w if i % 2 == 0 else x.detach())`, grown
in a loop, its own flag. A program value has one static `stop_gradient` (False where any path
gives it a gradient path); where the paths into it differ, the value carries the run's answer:

- `Variable.stop_when` (a tensor): a 0-d bool value, True on the runs where it has no gradient
  path;
- `Variable.item_stops` (a tensor array): a bool array as long as it, True at the items that
  have none (`arrays.array_written` writes an item's flag beside it, `array_read` reads it;
  insert, pop, slicing and joining move the flags as they move the items).

`cond` and `while_loop` carry these flags as more outputs (and loop variables) where their
branches, or a loop's entry and body, differ (`differ`, `carried`, `attach`); a loop variable
whose flags at entry and from the body are both static is flagged by the loop's first test
instead (`by_trips`: no value carried through the loop). d2s's call cuts
each returned tensor and list item whose flag is True (`d2s/running.py`), as eager's result
is. A value computed from a flagged one has its static flag (False: the gradient that flows
through it on a cut run is zero).

>>> import runtime as rt
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [2], 'float32')
...     x.stop_gradient = False
...     y = rt.static.nn.cond(x.sum() > 0, lambda: x * 2, lambda: x.detach())
>>> y.stop_gradient, y.stop_when is not None
(False, True)
"""
from __future__ import annotations

from .. import core
from ..ops.arrays import item_flags
from ..ops.logic import logical_not
from .variable import Variable


def _gives_gradients(v) -> bool:
    return isinstance(v, Variable) and (v.dtype.is_floating or v.dtype.is_complex)


def _flag(v):
    """`v`'s run-decided flag (a graph value), or None where its static one holds."""
    if not isinstance(v, Variable):
        return None
    if v.kind == "array":
        return v.item_stops
    return None if v.stop_gradient else v.stop_when  # (`detach()` of a flagged value: none)


def _static(v) -> bool:
    """The static flag (True for what is no tensor: a Python number, an unbound name)."""
    return bool(v.stop_gradient) if core.is_tensor(v) else True


def differ(values) -> bool:
    """Whether the values that one output of a branch op (or a loop variable, at entry and
    after the body) may be need a flag beside it: one of them has a run-decided flag, or
    the static flags of the tensors among them differ (an array known to hold no items has
    none to differ; a Python number or an unbound name, none at all)."""
    if not any(_gives_gradients(v) for v in values):
        return False
    if any(_flag(v) is not None for v in values):
        return True
    seen = {_static(v) for v in values
            if core.is_tensor(v) and not (isinstance(v, Variable) and v.no_items)}
    return len(seen) > 1


def carried(v):
    """What to carry beside `v` in the current block: a tensor's flag (a bool Variable, or a
    Python bool), an array's item flags (a bool array)."""
    if isinstance(v, Variable) and v.kind == "array":
        return item_flags(v)
    flag = _flag(v)
    return _static(v) if flag is None else flag


def loop_flags(inits: list, outs: list) -> tuple:
    """(the indices of a loop's variables whose flag must be carried through the loop: a
    run-decided flag at entry or from the body, or an array's items; those whose static flag
    at entry differs from the body's, decided by whether the loop ran)."""
    carry, by_trips = set(), []
    for k, (init, out) in enumerate(zip(inits, outs)):
        if differ([init, out]):
            if _flag(init) is not None or _flag(out) is not None or (
                    isinstance(out, Variable) and out.kind == "array"):
                carry.add(k)
            else:
                by_trips.append(k)
    return carry, by_trips


def by_trips(ran, inits: list, outs: list) -> None:
    """Flag the outputs `outs` of a loop whose static flags at entry (`inits`) and after the
    body differ, given `ran`, whether the loop ran (its first test): the entry's on the runs
    where it did not (no carried value: a recurrent state from `rt.zeros` is the common case)."""
    for init, out in zip(inits, outs, strict=True):
        attach(out, logical_not(ran) if _static(init) else ran)


def attach(v, flag) -> None:
    """Give the output `v` of a branch op or loop the flag carried beside it."""
    if not isinstance(v, Variable):
        return
    if v.kind == "array":
        v.item_stops = flag
    else:
        v.stop_when = flag
