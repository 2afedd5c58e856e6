"""A name bound in one branch of a tensor `if` only (and read after it): unbound on the paths
of the other branch, as in eager mode, where reading it raises `UnboundLocalError` only on a
path that reads it.

The `if`'s result for that name is the bound branch's value (zeros stand in on the other
side) carrying a *read check*: the first op that reads it in each block first runs
`raise UnboundLocalError` when the program took the branch that left it unbound. So static
code raises exactly where eager code would read the unbound name, with eager's class and
message, and runs on inputs where eager code runs. Returning the value from the converted
function, or carrying it into a graph loop, counts as a read. A value that is not a tensor
(a string, an object) cannot be checked when the program runs: binding it in one branch only
stays an `UndefinedNameError` (an `UnboundLocalError`) when converting.
"""
from __future__ import annotations

import contextlib

import runtime as rt
from runtime.core import active_builder
from runtime.program.debug_ops import raise_error
from runtime.program.origin import forced

from .exceptions import short_name
from .trace_state import current
from .variables import is_variable, where


class ReadCheck:
    """Called by the program builder before an op reads the value (`Variable.on_read`)."""

    __slots__ = ("bound", "name", "at", "done", "error", "origin")

    def __init__(self, bound, name: str, at: str, error=None, origin=None):
        self.bound, self.name, self.at = bound, name, at
        # (file, line, source) of the statement that left it unbound on some paths: the
        # line an error names where the value is read after the function returned
        self.origin = origin
        # what is raised where the value is not what eager code has (None: unbound)
        self.error = error
        self.done: set = set()  # the blocks already checked

    def __call__(self):
        b = active_builder()
        if b is None or id(b.block) in self.done or implied(self.bound):
            return  # (checked here already, or bound wherever this block runs)
        error = self.error or UnboundLocalError(
            f"cannot access local variable '{self.name}' where it is not associated with a "
            "value")
        trys = current().trys
        if trys and trys[-1].take_read_error(error, rt.logical_not(self.bound), self):
            return  # (an `except` clause of the open `try` body catches it: no `raise` op;
            # the block is not done: a read after the `try` is checked again)
        self.done.add(id(b.block))

        def unbound():
            raise_error(error, at=self.at)

        rt.static.nn.cond(rt.logical_not(self.bound), unbound, lambda: None)


def mark(value, bound, name: str, src, error=None) -> None:
    """`value` (an `if` result) is bound only where the bool graph value `bound` is true
    (elsewhere reading it raises `error`, by default eager's `UnboundLocalError`)."""
    if not is_variable(value):
        return
    at = f"{short_name(src.filename)}:{src.lineno}" if src is not None else ""
    previous = value.on_read
    if isinstance(previous, ReadCheck):
        bound = _tagged(rt.logical_and(bound, previous.bound), bound, previous.bound)
    origin = (src.filename, src.lineno, src.source_line) if src is not None else None
    value.on_read = ReadCheck(bound, name, at, error, origin)


def carry(inner, outer, pred, inner_is_true: bool) -> None:
    """An `if` output `outer` whose branch value `inner` has a read check: the check goes on
    with the branch's condition (the other branch bound it, or carries its own check)."""
    if not (is_variable(inner) and is_variable(outer)):
        return
    check = inner.on_read
    if not isinstance(check, ReadCheck):
        return
    taken = pred if inner_is_true else rt.logical_not(pred)
    bound = _tagged(rt.logical_or(rt.logical_not(taken), check.bound), check.bound)
    existing = outer.on_read
    if isinstance(existing, ReadCheck):
        bound = _tagged(rt.logical_and(bound, existing.bound), bound, existing.bound)
    outer.on_read = ReadCheck(bound, check.name, check.at, check.error, check.origin)


def read(values) -> None:
    """Values returned by the converted function: read after it returned, so the check's
    error names the line that left the value unbound (the caller's line would be wrong)."""
    for v in values:
        if is_variable(v) and isinstance(v.on_read, ReadCheck) and v.none_when is None and \
                getattr(v, "dtype_when", None) is None:  # (the call gives the other value)
            if v.on_read.origin is None:  # (None on some runs: the call gives None there)
                v.on_read()
                continue
            with forced.origin(v.on_read.origin):
                v.on_read()


def checked(values) -> bool:
    """Whether some of `values` carry a read check."""
    return any(is_variable(v) and isinstance(v.on_read, ReadCheck) for v in values)


def read_if(values, taken) -> None:
    """Values carried into a graph loop whose body runs only where the bool graph value
    `taken` (the loop test on entry) is true: a value unbound on some paths is read only
    there, as eager code reads it only in the body."""
    for v in values:
        check = v.on_read if is_variable(v) else None
        if isinstance(check, ReadCheck):
            ReadCheck(rt.logical_or(check.bound, rt.logical_not(taken)), check.name,
                      check.at, check.error)()
            check.done.add(id(active_builder().block))


def after_loop(inputs: dict, outputs: list, taken) -> None:
    """The loop's results for values that were unbound on some paths when it started
    (`inputs`: index -> read check): bound where they were, or where the loop ran."""
    for i, check in inputs.items():
        v = outputs[i]
        if is_variable(v) and not isinstance(v.on_read, ReadCheck):
            v.on_read = ReadCheck(rt.logical_or(check.bound, taken), check.name, check.at,
                                  check.error, check.origin)


def bound_by_loop(indices: list, names: tuple, outputs: list, taken, src,
                  errors=()) -> None:
    """The loop's results for names first bound inside it (`indices`; zeros stood in for
    them on entry): bound only where the body ran (`taken`: the test on entry), as in eager
    mode, where reading one after a loop that never ran raises `UnboundLocalError` (an
    attribute first set in it: `AttributeError`, `errors[i]`)."""
    for i in indices:
        v = outputs[i]
        if is_variable(v) and not isinstance(v.on_read, ReadCheck):
            mark(v, taken, names[i], src, errors[i] if i < len(errors) else None)


def tensor_by_loop(numbers: dict, names: tuple, outputs: list, taken, src) -> None:
    """The loop's results for Python numbers the body makes tensors of a shape that is not a
    number's (`numbers`: index -> the number; the number filled a tensor of that shape on
    entry): where the loop never ran, eager code still has the number, whose shape the
    program cannot give; reading the value there raises a TypeError naming the line."""
    for i, number in numbers.items():
        v = outputs[i]
        if is_variable(v) and not isinstance(v.on_read, ReadCheck):
            error = TypeError(
                f"'{names[i]}' is the Python number {number!r} before a loop whose condition "
                f"is a tensor ({where(src)}), and a tensor of shape {list(v.shape)} after "
                "each run of its body: this time the loop did not run, so eager code would "
                f"read the number, which the program cannot give with that shape. Bind "
                f"'{names[i]}' to a tensor of that shape before the loop (for example "
                f"`{names[i]} = rt.full({list(v.shape)}, {number!r})`).")
            mark(v, taken, names[i], src, error)


def dtype_by_loop(widened: dict, names: tuple, outputs: list, taken, src) -> None:
    """The loop's results for tensors whose dtype the body changes (`widened`: index -> the
    dtype before the loop; the program carries them in the body's dtype from the start): where
    the loop never ran, eager code still has the tensor in its old dtype, which the program
    cannot give; reading the value there raises a TypeError naming the loop and the name."""
    for i, before in widened.items():
        v = outputs[i]
        if is_variable(v) and v.dtype != before and not isinstance(v.on_read, ReadCheck):
            error = TypeError(
                f"'{names[i]}' is a tensor of dtype {before.name} before a loop whose "
                f"condition is a tensor ({where(src)}), and of dtype {v.dtype.name} after each "
                "run of its body: this time the loop did not run, so eager code would have "
                f"the {before.name} tensor, which the program cannot give. Cast it before "
                f"the loop (for example `{names[i]} = {names[i]}.astype('{v.dtype.name}')`).")
            mark(v, taken, names[i], src, error)


def branch_flags(values, n: int, flags: dict) -> list:
    """A traced branch's extra `cond` outputs: for each state index in `flags`, the bool
    telling where its value is bound (True where it has no read check). Values of this
    branch with a read check not in `flags` yet are added (the `if` is traced again): the
    check's flag lives in the branch's block, so only an output carries it out."""
    for i, v in enumerate(values[:n]):
        if i not in flags and is_variable(v) and isinstance(v.on_read, ReadCheck):
            flags[i] = (v.on_read.name, v.on_read.at, v.on_read.error, ())
    out = []
    for i in sorted(flags):
        v = values[i] if i < len(values) else None
        check = v.on_read if is_variable(v) else None
        out.append(check.bound if isinstance(check, ReadCheck) else
                   rt.full([], True, "bool"))
        tag = getattr(check.bound, "d2s_try_guard", None) if isinstance(
            check, ReadCheck) else ()  # (every branch's flag a `try` guard's test: `implied`)
        flags[i] = flags[i][:3] + (_same_tag(flags[i][3], tag),)
    return out


def _same_tag(a, b):
    """The `try` guard tag (`implied`) of flags tagged `a` and `b` (`()`: no check there)."""
    if a == () or b == ():
        return b if a == () else a
    return (a[0], max(a[1], b[1])) if a is not None and b is not None and a[0] is b[0] \
        else None


def after_branches(result: list, flags: dict, bound_flags: list) -> None:
    """The `if`'s results for the values of `flags`: checked with the flags it output."""
    for i, bound in zip(sorted(flags), bound_flags):
        v = result[i]
        if not is_variable(v):
            continue
        name, at, error, tag = flags[i]
        if tag:
            bound.d2s_try_guard = tag
        existing = v.on_read
        if isinstance(existing, ReadCheck):
            bound = _tagged(rt.logical_and(bound, existing.bound), bound, existing.bound)
        v.on_read = ReadCheck(bound, name, at, error)


@contextlib.contextmanager
def guarding(tag, taken: bool):
    """While the statements of a `try` body's guard (`try_guard`'s `tag`) are traced
    (`taken`: its true branch): nothing failed, so nothing failed at an earlier guard of the
    body either (the error code never goes back to 0)."""
    if not (tag and taken):
        yield
        return
    state, serial = tag
    state.open_guards.append(serial)
    try:
        yield
    finally:
        state.open_guards.remove(serial)


def implied(bound) -> bool:
    """Whether the bool graph value `bound` (a read check's) holds wherever the trace is now:
    the test of a `try` body's guard, inside the statements of a later guard of that body."""
    tag = getattr(bound, "d2s_try_guard", None)  # (state, serial: `try_except.try_guard`)
    return tag is not None and any(k > tag[1] for k in tag[0].open_guards)


def _tagged(combined, *parts):
    """`combined` (an `and` of `parts`, or an `or` with the one part) holds where each of
    `parts` does: tests of one `try` body's guards, it is such a test too (`implied`)."""
    tags = [getattr(p, "d2s_try_guard", None) for p in parts]
    if tags and all(t is not None and t[0] is tags[0][0] for t in tags):
        combined.d2s_try_guard = (tags[0][0], max(t[1] for t in tags))
    return combined
