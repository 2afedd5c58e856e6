"""`len()` of a set of numbers the converted code computes (issue 35, Dynamo's
`len(set(x.tolist()))`): while tracing, equal values are distinct objects, so Python's count
would be the trace's. Where every item is a number (a Python one, or a 0-d graph value
standing for one: `t.item()`, `x.tolist()`'s items, `int(t)`), the program counts the
distinct values when it runs, as a set compares numbers (`1 == 1.0 == True`): the values
sorted, then one plus the number of neighbours that differ (a NaN differs from every value,
as the NaN objects of `tolist()` do in a set). Anything else keeps the refusal
(`traced_keys.check_unique`)."""
from __future__ import annotations

import runtime as rt

from .made_sets import MadeFrozenSet, MadeSet, items_of
from .variables import is_variable

_NUMBERS = (bool, int, float)


def distinct_count(x):
    """The run's `len(x)` of such a set (a graph value standing for a Python int); None
    where `x` is no set of numbers holding a graph value."""
    items = items_of(x) if type(x) in (MadeSet, MadeFrozenSet) else x if isinstance(
        x, (set, frozenset)) else None
    if not items or not any(is_variable(v) for v in items) or not all(
            type(v) in _NUMBERS or _number_value(v) for v in items):
        return None
    values = rt.stack([rt.reshape(rt.cast(v, "float64"), []) if is_variable(v) else
                       rt.to_tensor(float(v), "float64") for v in items])
    ordered = rt.sort(values)
    n = rt.sum(rt.cast(ordered[1:] != ordered[:-1], "int64")) + 1
    n = rt.reshape(n, [])
    n.python_scalar = True  # (a Python int when returned)
    return n


def _number_value(v) -> bool:
    return is_variable(v) and getattr(v, "python_scalar", False) and not v.is_array and \
        v.size in (1, -1) and v.ndim <= 1 and getattr(v, "number_when", None) is None
