"""List comprehensions and generator expressions filtered by a tensor condition.

    [f(v) for v in xs if v.sum() > 0]
 -> _d2s.comp_list(lambda _acc: [_acc.item(v.sum() > 0, lambda v=v: f(v)) for v in xs])

Each item is appended under its own `if` (`control_flow.ifelse`), exactly as the loop

    out = []
    for v in xs:
        if v.sum() > 0:
            out.append(f(v))

converts: Python conditions keep a Python list (the item is computed in Python's order), a
tensor condition makes the list a tensor array whose length is decided when the program runs
(`rt.stack`, `rt.concat`, `len`, `sum` and indexing read it). The item is computed only in
the branch that appends it.

A filter on an earlier `for` (`[a * b for a in xs if a.mean() > 0 for b in ys]`) is
`if _acc.keep(0, a.mean() > 0)`: a Python value filters in Python; a tensor keeps the
iteration going and is a condition of every item appended under it (`item` and-s it in). An
inner iterable that calls a function is `_acc.inner(lambda: ...)`: computed in a graph `if`
only where those conditions hold, as eager computes it only for kept items.
"""
from __future__ import annotations

import runtime as rt

from .block_values import stand_in
from .control_flow import ifelse
from .lists import list_append
from .logical import truth
from .try_except import TryState, deposit, open_trys, try_collect
from .variables import is_variable


class Comprehension:
    """The list being built (a Python list until a tensor condition makes it an array)."""

    __slots__ = ("out", "gates")

    def __init__(self):
        self.out: list = []
        self.gates: dict = {}  # `for` index -> the tensor filter of its current item

    def keep(self, level: int, cond):
        """The filter of an earlier `for` (number `level`): a Python value filters in Python;
        a tensor keeps the item in Python and is a condition of every item appended under
        it (the inner `for`s run for it, their items are kept only where it holds)."""
        cond = truth(cond)
        self.gates = {k: c for k, c in self.gates.items() if k < level}
        if not is_variable(cond):
            return cond
        self.gates[level] = cond
        return True

    def _gate(self):
        """The tensor filters of the `for`s around the current item, and-ed (or None)."""
        cond = None
        for _, gate in sorted(self.gates.items()):
            if cond is None:
                cond = gate
            else:
                cond = rt.logical_and(cond, gate)
        return cond

    def inner(self, iterable_fn):
        """An inner `for`'s iterable that calls functions, under tensor filters of the `for`s
        before it: computed in a graph `if` that runs it only where they hold (eager code
        does not compute it for an item they drop); stand-ins elsewhere, never appended."""
        gate = self._gate()
        if gate is None:
            return iterable_fn()
        outer = open_trys()[-1] if open_trys() else None
        errors, box = TryState(), []

        def take(items, code):
            mark = len(outer.pending) if outer is not None else 0
            items = list(iterable_fn())
            if outer is not None and len(outer.pending) > mark:  # (as in `item`)
                errors.pending, outer.pending[mark:] = outer.pending[mark:], []
                code = try_collect(errors, code)
            box[:] = [items]
            return items, code

        def skip(items, code):
            return stand_in(box[0]), code

        items, code = ifelse(gate, take, skip, (None, 0),
                             ("<comprehension iterable>", "<error code>"))
        if is_variable(code) or code != 0:
            deposit(errors, code)
        return items

    def add(self, value):
        """An item of a comprehension without filters (`converters.nested_comps`)."""
        self.out = list_append(self.out, value)
        return self

    def item(self, cond, value_fn):

        cond = truth(cond)
        if not is_variable(cond) and not cond:
            return self
        gate = self._gate()
        if gate is not None:
            cond = gate if cond is True else rt.logical_and(gate, cond)
        if not is_variable(cond):
            self.out = list_append(self.out, value_fn())
            return self
        # Inside a `try` body, a called function's run-time error raised while computing
        # the item is handed out of the branch as its error code (`try_except`).
        outer = open_trys()[-1] if open_trys() else None
        errors = TryState()

        def take(out, code):
            mark = len(outer.pending) if outer is not None else 0
            out = list_append(out, value_fn())
            if outer is not None and len(outer.pending) > mark:
                errors.pending, outer.pending[mark:] = outer.pending[mark:], []
                code = try_collect(errors, code)
            return out, code

        def skip(out, code):
            return out, code

        self.out, code = ifelse(cond, take, skip, (self.out, 0),
                                ("comprehension", "<error code>"))
        if is_variable(code) or code != 0:
            deposit(errors, code)
        return self


def comp_list(build):
    """`[... for ... if <condition>]` (see the module): a list, or a tensor array."""
    acc = Comprehension()
    build(acc)
    return acc.out


def comp_iter(build):
    """A generator expression with such a filter: an iterator over the Python list, or the
    tensor array itself (what `sum`, `rt.stack`, ... take)."""
    out = comp_list(build)
    return iter(out) if isinstance(out, list) else out
