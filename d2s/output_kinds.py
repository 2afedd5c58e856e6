"""What a program output stands for when only the run decides it (`running.Entry`): the
Python type of a number (`float_when`, `bool_when`), and which of two values of different
dtypes a tensor `if` gave (`dtype_when`, `operators/branch_dtypes.py`)."""
from __future__ import annotations


def float_flag(v):
    """The bool graph value saying whether the Python number `v` stands for is a float when
    the program runs (`Variable.float_when`), or None where its dtype decides."""
    return getattr(v, "float_when", None) if getattr(v, "python_scalar", False) else None


def bool_flag(v):
    """The bool graph value saying whether the Python number `v` stands for is a bool when
    the program runs (`Variable.bool_when`), or None where its dtype decides."""
    return getattr(v, "bool_when", None) if getattr(v, "python_scalar", False) else None


def number_of_kind(v, is_bool, is_float):
    """The Python number `v` (a program output) as the type the run decided (`is_float` None:
    the type its dtype gives)."""
    return bool(v) if is_bool else v if is_float is None else float(v) if is_float else int(v)


def dtype_outputs(outs: list, n: int) -> tuple:
    """([(output, output of its flag, of its other dtype's value)], the outputs with those
    flags and values after them) for the first `n` outputs whose dtype the run decides."""
    switched = [k for k in range(n) if getattr(outs[k], "dtype_when", None) is not None]
    at = len(outs)
    found = [(k, at + 2 * j, at + 2 * j + 1) for j, k in enumerate(switched)]
    return found, outs + [x for k in switched for x in (outs[k].dtype_when, outs[k].dtype_alt)]


def choose_dtype(found: list, outs: list, arrays) -> None:
    """The run's value, in place in `outs`, for outputs whose dtype the run decides."""
    for k, flag, other in found:
        if arrays[flag]:
            outs[k] = outs[other]
