"""Steps of a guarded read chain (`guards.py`) that fan out to several places: every item a
`for` reads (`for st in self.stages:`, then `st.mult`: each stage's `mult`), and every
attribute of an object that `getattr(obj, name)` with a computed name or `vars(obj)` reads.
The pyct side (`pyct/reads.py`: `Each`, `AllAttrs`) finds them in the source; here they are
guarded with the objects the trace met, so a caller that changes one between calls gets a
program traced for the new value."""
from __future__ import annotations

import collections

from .pyct.reads import AllAttrs, Each

_MAX_ITEMS = 64  # items of a container whose fields are guarded one by one
STEPS = (Each, AllAttrs)
LISTS = (list, collections.deque)  # (whose items the trace read are guarded: `guards._add`)


def record_step(guards: list, obj, where: str, step, rest: tuple, record_chain, add) -> None:
    """Guard `step` (an `Each` or `AllAttrs`) of a chain at `obj` (named `where`), then the
    `rest` of the chain from each place it reaches (`record_chain`; `add`: `guards._add`)."""
    if isinstance(step, AllAttrs):
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict) and len(d) <= _MAX_ITEMS:
            guards.append((("whole", d, None, f"the attributes of {where}"), "items",
                           tuple(d)))  # (its attribute names: one added or deleted)
            for k, v in d.items():
                add(guards, ("attr", obj, k, f"{where}.{k}"), v)
        return
    if step.values and isinstance(obj, dict):
        places = [(("item", obj, k, f"{where}[{k!r}]"), v) for k, v in obj.items()]
        guards.append((("whole", obj, None, f"the keys of {where}"), "items", tuple(obj)))
    elif isinstance(obj, (list, tuple)):
        places = [(("index", obj, j, f"{where}[{j}]"), v) for j, v in enumerate(obj)]
    else:
        return
    if len(places) > _MAX_ITEMS:
        return
    for place, item in places:
        if place[0] == "item" or isinstance(obj, list):  # (a tuple's items: with it)
            add(guards, place, item)
        if rest:
            record_chain(guards, item, place[3], rest)


def deque_items(guards: list, arguments: dict) -> None:
    """Guard the items of each `collections.deque` passed in (or in a list, tuple or dict
    passed in) by identity, as a list's: the program reads the tensors and values it held
    while tracing, so a caller that appends to it between calls needs another program (eager
    code reads the deque anew)."""
    for name, value in arguments.items():
        inside = value.values() if type(value) is dict else value if type(value) in (
            list, tuple) else ()
        for v in (value, *inside):
            if type(v) is collections.deque:
                guards.append((("list", v, None, name), "items", tuple(v)))
