"""Built-ins whose meaning depends on tensors: `print`, `len`, `range`, casts, `isinstance`,
`assert`, and `x.shape` (unknown dims become tensors).

On Python values (and eager Tensors) each behaves exactly like the built-in.
"""
from __future__ import annotations

import builtins

from .. import report
from .control_flow import TensorEnumerate, TensorRange
from .variables import is_variable


def print_(*args, sep=" ", end="\n", file=None, flush=False):
    """`print`: graph values are printed when the program runs (a Print op), with the text
    around them as the message."""
    report.record("print", next((a for a in args if is_variable(a)), None))
    if not any(is_variable(a) for a in args):
        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    import runtime as rt
    text = []
    for a in args:
        if is_variable(a):
            rt.static.Print(a, message=sep.join(text))
            text = []
        else:
            text.append(str(a))
    if text:
        builtins.print(*text, sep=sep, end=end, file=file, flush=flush)


def len_(x):
    """`len`: a tensor array's length or an unknown first dim is an int64 tensor."""
    if is_variable(x):
        import runtime as rt
        if x.is_array:
            return rt.static.array_length(x)
        if x.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return x.shape[0] if x.shape[0] >= 0 else rt.shape(x)[0]
    return builtins.len(x)


def range_(*args):
    """`range`; with a graph bound or step it is a TensorRange that `for_loop` runs as a
    while op."""
    if not any(is_variable(a) for a in args):
        return builtins.range(*args)
    start, stop, step = (0, args[0], 1) if builtins.len(args) == 1 else (
        args[0], args[1], args[2] if builtins.len(args) > 2 else 1)
    return TensorRange(start, stop, step)


def enumerate_(iterable, start=0):
    """`enumerate`; over a graph value whose first dim is unknown it is a TensorEnumerate that
    `for_loop` runs as a while op."""
    if is_variable(iterable) and not iterable.is_array and iterable.ndim and \
            iterable.shape[0] < 0:
        return TensorEnumerate(iterable, start)
    if is_variable(iterable) and iterable.ndim:
        return builtins.enumerate([iterable[i] for i in builtins.range(iterable.shape[0])],
                                  start)
    return builtins.enumerate(iterable, start)


def bool_(x=False):
    if is_variable(x):
        from .logical import to_bool
        return to_bool(x)
    return builtins.bool(x)


def int_(x=0, *base):
    if is_variable(x):
        import runtime as rt
        return rt.cast(x, "int64")
    return builtins.int(x, *base)


def float_(x=0.0):
    if is_variable(x):
        import runtime as rt
        return x if x.dtype.is_floating else rt.cast(x, "float32")
    return builtins.float(x)


def isinstance_(obj, cls):
    """`isinstance`; a graph value is an instance of `rt.Tensor` (it stands for one)."""
    if is_variable(obj):
        import runtime as rt
        classes = cls if isinstance(cls, tuple) else (cls,)
        if any(c is rt.Tensor for c in classes):
            return True
    return builtins.isinstance(obj, cls)


def assert_(test, message=None):
    """`assert test, message()`; a graph test is checked when the program runs."""
    report.record("assert", test)
    if is_variable(test):
        import runtime as rt
        rt.static.Assert(test, message=str(message()) if message is not None else None)
        return
    if not test:
        raise AssertionError(message()) if message is not None else AssertionError()


def shape(x):
    """`x.shape`; on a graph value the unknown (-1) dims are int64 tensors read at run time,
    so Python arithmetic on shapes keeps working for any batch size."""
    s = x.shape
    if not is_variable(x) or all(d >= 0 for d in s):
        return s
    import runtime as rt
    dynamic = rt.shape(x)
    return [d if d >= 0 else dynamic[i] for i, d in enumerate(s)]
