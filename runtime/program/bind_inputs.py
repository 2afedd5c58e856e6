"""What `Builder.bind` reads of an op's inputs: whether they carry a gradient (fixed, or on
some runs only: `stop_flags.py`), and the fast look at inputs that are plain Variables and
Python numbers (most ops)."""
from __future__ import annotations

from ..ops.logic import logical_and
from ..ops.registry import Meta
from .variable import Variable


def stop_when(inputs):
    """For an op whose inputs have a gradient path on some runs only (`stop_flags.py`): the
    bool value, True on the runs where none has one; None where an input surely has one.
    The tensors of a list input (`concat`, `stack`) are inputs each."""
    flags = []
    for x in _leaves(inputs):
        if not stops_gradient(x):
            f = getattr(x, "stop_when", None)
            if f is None:
                return None
            if not any(f is g for g in flags):  # (`x * x`: one flag)
                flags.append(f)
    flag = flags[0]
    for f in flags[1:]:
        flag = logical_and(flag, f)
    return flag


def plain(inputs):
    """(Metas, all stop gradients, one is a number on some runs) of Variables of known rank with
    fixed gradient flags standing for no Python number, and Python numbers (most ops), else None."""
    metas, stops, numbers = [], True, False
    for x in inputs:
        cls = x.__class__
        if cls is float or cls is int:
            metas.append(x)
        elif cls is not Variable or x._static_shape is None or x.python_scalar or \
                x.stop_varies or x.stop_when is not None:
            return None
        else:
            metas.append(Meta(x._static_shape, x.dtype))
            stops = stops and x._stop_gradient
            numbers = numbers or x.number_when is not None
    return metas, stops, numbers


def _leaves(inputs):
    for x in inputs:
        if isinstance(x, (list, tuple)):
            yield from _leaves(x)
        else:
            yield x


def stops_gradient(x) -> bool:
    if isinstance(x, (list, tuple)):
        return all(stops_gradient(t) for t in x)
    return getattr(x, "stop_gradient", True)
