"""A number the converted code computes (`float(t)`, `t.item()`) given to an op that checks
it eagerly (quantile's q in [0, 1], norm's p > 0): `checked(value, ok, message)` passes the
value on and raises eager's `OpError` when the program runs with `ok` false, `{}` in the
message replaced by the value as Python shows it."""
from __future__ import annotations

from .registry import Meta, OpError, bind, register


def _kernel(xp, value, ok, message=""):
    if not bool(xp.all(ok)):
        raise OpError(message.replace("{}", repr(value.item())))
    return value


CHECKED_NUMBER = register(
    "checked_number", kernel=_kernel, nondiff=True, amp="keep",
    infer=lambda value, ok, message="": Meta(tuple(value.shape), value.dtype),
    doc="`value`, after raising OpError(`message`) where `ok` is not all true.")


def checked(value, ok, message: str):
    """`value`, checked by `ok` when the op runs (eagerly: now)."""
    return bind(CHECKED_NUMBER, (value, ok), {"message": message})
