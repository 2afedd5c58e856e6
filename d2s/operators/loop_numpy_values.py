"""NumPy values (what `x.numpy()` gives, `runtime/program/numpy_values.py`) carried by a graph
loop: a name that holds one before the loop and after each trip is one inside the body and
after the loop too (its operators keep NumPy's semantics, the call returns a NumPy array or
scalar, as eager code does). A name that is a NumPy value on some trips only (a Python number
or a tensor before the loop, a NumPy value after a trip) would come back as one type whatever
the run did: refused at the loop, naming it."""
from __future__ import annotations

from ..errors import ConversionError
from .variables import is_variable, where


def _kind(v):
    """(numpy_array, numpy_scalar) of a graph value, None for one that is no NumPy value."""
    return (True, v.numpy_scalar) if is_variable(v) and v.numpy_array else None


def enter(state: list, carried: list, values) -> None:
    """Flag the body's (or test's) parameters as the values they stand for on entry."""
    for i, v in zip(carried, values):
        kind = _kind(state[i])
        if kind is not None and is_variable(v):
            v.numpy_array, v.numpy_scalar = kind


def check(state: list, carried: list, out: list, shown, src) -> None:
    """Refuse a name that is a NumPy value before the loop or after a trip, not both."""
    for i in carried:
        before, after = _kind(state[i]), _kind(out[i])
        if before != after:
            what = {None: "not a NumPy value", (True, False): "a NumPy array",
                    (True, True): "a NumPy scalar"}
            raise ConversionError(
                f"{shown(i)} is {what[before]} before a loop whose condition is a tensor and "
                f"{what[after]} after a trip of it ({where(src)}): the loop carries its value, "
                "not which of them it is. Keep it one kind: a tensor (compute with tensor ops, "
                "take `.numpy()` after the loop) or a NumPy value on both.", src)


def finish(state: list, carried: list, result) -> None:
    """Flag the loop's results as the NumPy values their names held."""
    for i, v in zip(carried, result):
        kind = _kind(state[i])
        if kind is not None and is_variable(v):
            v.numpy_array, v.numpy_scalar = kind
