"""Values generated code passes around: `Undefined`, and how to tell graph values apart.

A graph value is a static `Variable` (the program being traced); eager Tensors and Python
values are "Python values": operators run them as plain Python, exactly as written.
"""
from __future__ import annotations

import sys

from runtime.core import VariableBase
from runtime.program.origin import frame_line

from ..pyct import loader


def is_variable(x) -> bool:
    """Whether `x` is a value of the static program being traced (a graph value)."""
    return isinstance(x, VariableBase)


def user_origin(depth: int = 2):
    """The user origin (OriginInfo) of the innermost generated-code frame calling us."""
    f = sys._getframe(depth)
    while f is not None:
        src = loader.lookup(f.f_code.co_filename, frame_line(f))
        if src is not None:
            return src
        f = f.f_back
    return None


class RunSizedList:
    """A list whose length the run decides that is not itself a graph value (a list of
    structures, one tensor array per leaf: `lists.StructArray`): `length()` is a graph value,
    and so is its truth (`if not beams:`)."""

    def length(self):
        raise NotImplementedError


class ReturnValue(str):
    """The marker of a state name that holds the function's return value: the name the
    return converter chose (`_retval`), as recorded in the generated file's line map
    (`LineMap.return_values`), marked by `marked_returns` when a tensor `if` or loop starts.
    Its reads are guarded by the return flag, so a placeholder may stand in for it."""

    __slots__ = ()


def marked_returns(names: tuple) -> tuple:
    """`names` (a block's state names) with the return value's name a `ReturnValue`: the
    return names of the innermost generated code calling us."""
    f = sys._getframe(1)
    while f is not None:
        line_map = loader.line_map(f.f_code.co_filename)
        if line_map is not None:
            returns = line_map.return_values
            return tuple(ReturnValue(n) if n in returns else n for n in names)
        f = f.f_back
    return names


def is_return_value(name: str) -> bool:
    """Whether the state name `name` holds the function's return value (`ReturnValue`)."""
    return isinstance(name, ReturnValue)


def where(src) -> str:
    return f'File "{src.filename}", line {src.lineno}: {src.source_line}' if src else \
        "(unknown line)"


class UndefinedNameError(UnboundLocalError):
    """A name bound on some paths only (one branch of a tensor `if`, the inside of a loop) is
    read where it may be unbound."""


class Undefined:
    """The value of a name not bound on this path. Any use raises `UndefinedNameError`.

    >>> u = Undefined('y')
    >>> u + 1
    Traceback (most recent call last):
    ...
    d2s.operators.variables.UndefinedNameError: local variable 'y' is used but it is not bound here
    """

    __slots__ = ("error", "name")

    def __init__(self, name: str, error: BaseException | None = None):
        object.__setattr__(self, "name", name)
        # what eager code raises reading it (None: `UnboundLocalError`; an attribute not set
        # yet: `AttributeError`), where a run-time read check stands for it (`unbound`)
        object.__setattr__(self, "error", error)

    def __repr__(self):
        return f"<undefined '{self.name}'>"

    def __eq__(self, other):
        return isinstance(other, Undefined) and other.name == self.name

    def __hash__(self):
        return hash(("undefined", self.name))

    def __copy__(self):  # (copy's protocol lookups would reach __getattr__)
        return self

    def __deepcopy__(self, memo):
        return self

    def _fail(self, *args, **kwargs):
        error = UndefinedNameError(f"local variable '{self.name}' is used but it is not bound "
                                   "here")
        error.d2s_name = self.name  # (`loop_initial`: a name first bound in a graph loop)
        # what eager code raises reading it (a tensor `if`'s branch raises it when run) and
        # whether the value stands for a name a graph loop's probe trace binds later
        error.d2s_eager = self.error or UnboundLocalError(
            f"cannot access local variable '{self.name}' where it is not associated with a "
            "value")
        error.d2s_probe = isinstance(self, ProbeUndefined)
        raise error

    def __getattr__(self, item):
        self._fail()

    __bool__ = __len__ = __iter__ = __call__ = __getitem__ = __setattr__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __matmul__ = __neg__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __int__ = __float__ = __index__ = _fail


class ProbeUndefined(Undefined):
    """A name first bound inside a graph loop, as its body's probe trace sees it
    (`loop_initial`): the loop gives it a value, so a read of it is not eager's error."""

    __slots__ = ()


def attr(obj, name: str):
    """`obj.name`, or Undefined when the object has no such attribute yet."""
    try:
        return getattr(obj, name)
    except AttributeError as e:
        return Undefined(f"{type(obj).__name__}.{name}", e.with_traceback(None))
