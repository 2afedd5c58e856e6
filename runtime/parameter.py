"""`Parameter`: a trainable Tensor owned by a Layer (or created by hand).

Parameters get unique, stable names (`linear_0.w_0`) because static programs refer to them by
name: the executor's scope maps that name to this very object, so eager training and static
training update the same array.
"""
from __future__ import annotations

import itertools

from .ops import registry
from .tensor import Tensor

_counters: dict = {}

# Bumped by every set of a Parameter's `stop_gradient` (or `trainable`): what reads the flags
# of many Parameters on every call (d2s's guard that those frozen when a program was traced
# still are) reads them again only when this changed.
FLAGS_VERSION = [0]
_FLAG = Tensor.stop_gradient  # (the slot Tensor keeps the flag in)


def _set_flag(p, value) -> None:
    _FLAG.__set__(p, value)
    FLAGS_VERSION[0] += 1


def unique_name(prefix: str) -> str:
    """`prefix_0`, `prefix_1`, ... (one counter per prefix, process-wide)."""
    counter = _counters.setdefault(prefix, itertools.count())
    return f"{prefix}_{next(counter)}"


class Parameter(Tensor):
    """A Tensor with `stop_gradient=False`, `trainable` and `persistable` set, and a name."""

    def __init__(self, data, dtype=None, name: str | None = None, trainable: bool = True):
        super().__init__(data, dtype=dtype, stop_gradient=not trainable,
                         name=name or unique_name("param"))
        self.persistable = True
        self.trainable = trainable
        if registry.STATE.builder is not None:  # made by code a program is built from
            registry.STATE.builder.made_parameter(self)

    stop_gradient = property(_FLAG.__get__, _set_flag, doc="Whether no gradient is computed "
                             "for this Parameter (`FLAGS_VERSION` counts the sets).")

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool):
        self.stop_gradient = not value

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


registry.register_tensor_class(Parameter)
