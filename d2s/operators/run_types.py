"""`type(v)` of a value whose Python class a tensor decides: an int on some runs and a float
on others (`v = 1 if t > 0 else 2.5`), a Python number or a NumPy scalar / a tensor
(`float(x.sum()) if t else x.numpy().sum()`), None or a tensor. One program cannot give a
Python class chosen when it runs, but what eager code does with the class it can:

    type(v) is float / type(v) == float / is not / !=   ->  a bool the run decides
    type(v) in (int, float)                             ->  a bool the run decides
    type(v).__name__                                    ->  the run's name (a `ChosenStr`)

`type_queries.typing` gives a `RunType` for such a value; `type(v) is C` is converted to
`_d2s.type_is(type(v), C)` (`converters/logical.py`). Any other use of the class (calling
it, printing it, a dict key) is refused at the user's line.
"""
from __future__ import annotations

import runtime as rt
from runtime.ops.array_number_kinds import STR_DTYPE, string_id

from ..errors import ConversionError
from .str_arrays import ChosenStr
from .variables import is_variable, user_origin, where


class RunType:
    """The class of a value the run decides among `classes` (the first whose flag in
    `flags` holds; the last, `classes[-1]`, where none does)."""

    run_type = True  # (`type_is`, `logical.in_`)

    def __init__(self, classes: list, flags: list):
        self.classes, self.flags = classes, flags

    def _which(self):
        """The position in `classes` of the run's class (a 0-d int64 graph value)."""
        out = rt.full([], len(self.classes) - 1, "int64")
        for k in reversed(range(len(self.flags))):
            out = rt.where(self.flags[k], rt.full([], k, "int64"), out)
        return out

    def equals(self, cls):
        """`type(v) is cls` (and `==`): the run's answer, a graph value standing for a bool
        (a Python bool where no run gives `cls`)."""
        if isinstance(cls, RunType):  # (`type(a) is type(b)`: the runs' classes, paired)
            pairs = [(k, j) for k, c in enumerate(self.classes)
                     for j, d in enumerate(cls.classes) if c is d]
        else:
            pairs = [(k, None) for k, c in enumerate(self.classes) if c is cls]
        if not pairs:
            return False
        which = self._which()
        other = cls._which() if isinstance(cls, RunType) else None
        out = None
        for k, j in pairs:
            same = rt.equal(which, rt.full([], k, "int64"))
            if j is not None:
                same = rt.logical_and(same, rt.equal(other, rt.full([], j, "int64")))
            out = same if out is None else rt.logical_or(out, same)
        out.python_scalar = True
        return out

    def differs(self, cls):
        same = self.equals(cls)
        if same is False:
            return True
        out = rt.logical_not(same)
        out.python_scalar = True
        return out

    def within(self, classes):
        """`type(v) in classes` (a tuple, list or set of classes)."""
        out = False
        for cls in classes:
            same = self.equals(cls)
            if same is not False:
                out = same if out is False else rt.logical_or(out, same)
        if out is not False:
            out.python_scalar = True
        return out

    __eq__ = equals
    __ne__ = differs

    @property
    def __name__(self):
        names = [c.__name__ for c in self.classes]
        ids = rt.to_tensor([string_id(n) for n in names], STR_DTYPE)
        return ChosenStr(rt.gather(ids, self._which()), tuple(dict.fromkeys(names)))

    def __bool__(self):
        return True  # (a class is true)

    def _refuse(self, *args, **kwargs):
        src = user_origin()
        raise ConversionError(
            f"type() ({where(src)}) of a value whose Python class a condition that is a "
            f"tensor decided ({' or '.join(c.__name__ for c in self.classes)}) is used as a "
            "class: one program cannot give a Python class chosen when it runs. Compare it "
            "(`type(v) is float`), read its `__name__`, or test `isinstance(v, ...)`, which "
            "converted code decides per run.", src)

    __call__ = __hash__ = __repr__ = __str__ = __format__ = _refuse


def type_is(t, cls):
    """`type(v) is cls` (`t`: what `type(v)` gave; or `cls is type(v)`)."""
    if isinstance(cls, RunType) and not isinstance(t, RunType):
        t, cls = cls, t
    return t.equals(cls) if isinstance(t, RunType) else t is cls


def type_is_not(t, cls):
    """`type(v) is not cls`."""
    if isinstance(cls, RunType) and not isinstance(t, RunType):
        t, cls = cls, t
    return t.differs(cls) if isinstance(t, RunType) else t is not cls


def run_type(classes: list, flags: list):
    """A `RunType`, or the class itself where every run gives one."""
    kept = [(c, f) for c, f in zip(classes, flags) if c is not classes[-1]]
    if not kept:
        return classes[-1]
    assert all(is_variable(f) for _, f in kept)
    return RunType([c for c, _ in kept] + [classes[-1]], [f for _, f in kept])
