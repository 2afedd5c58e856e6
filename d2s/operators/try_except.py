"""`try` / `except` / `else` / `finally` whose body raises at run time.

The `try` converter (`d2s.converters.try_except`) rewrites a `try` with `except` clauses whose
body contains `raise` (or `assert`) statements:

- each `raise E(msg)` in the body becomes `code = _d2s.try_raise(state, E(msg))`. Reached
  while tracing Python-decided code, it raises at once (the Python `except` clauses catch it,
  as in eager mode). Reached while tracing a graph branch or loop body, it records the
  exception and returns a fresh error code (a Python int that the branch hands on as its
  state: after the `if`, `code` is an int64 value of the program, 0 when nothing failed);
- the rest of the body after a statement that may have failed runs under
  `if _d2s.try_ok(code):` (a `break` leaves loops);
- the Python `else:` clause dispatches on `code` when the program runs: the `else` body
  where `try_ok(code)`, each handler where `try_caught(state, code, classes)`, in the order
  of the `except` clauses, so the first matching clause wins as in Python;
- after `finally`, `try_reraise(state, code, classes)` raises (at run time) an error no
  clause caught; inside an enclosing `try` body, `try_forward` hands it to that `try`.

Functions called while a `try` body is open (helpers, methods, sub-Layers' `forward`, at any
depth) run in a second conversion of their own (`transpile.convert(fn, errors=True)`): the
whole body is treated as a `try` body without clauses (`fn_state`), so a run-time `raise` or
`assert` in it becomes an error code too, and the rest of the function runs only while
nothing failed. `fn_exit` hands the function's error code to the caller (`deposit`); the
caller picks it up right after the statement that made the call (`try_collect`), so it
reaches the user's `except` clauses when the program runs, exactly as eager's exception
does: the first error raised wins, and the statement's assignment and the rest of the body
do not happen.
"""
from __future__ import annotations

import sys

import runtime as rt
from runtime.core import active_builder
from runtime.ops.array_number_kinds import ITEM_READ
from runtime.program import zero_division
from runtime.program.control_flow import raise_where_zero
from runtime.program.debug_ops import raise_error

from ..errors import ConversionError
from .exceptions import HandledPerRun, handling, in_graph_block, note_raised_at, raise_again
from .exceptions import short_name
from .trace_state import current
from .variables import is_variable, user_origin, where


class TryState:
    """The errors recorded while tracing one `try` body: error code -> exception; while the
    body is traced, the state is open (`open_trys`), with its clauses' classes."""

    __slots__ = ("errors", "follows", "guards", "handlers", "open_guards", "pending", "reads",
                 "src", "taken")

    def __init__(self, handlers=None, src=None, follows=False):
        self.errors: dict = {}
        self.handlers, self.src = handlers, src
        self.follows = follows  # the converter collects the lookup errors of its reads
        self.pending: list = []  # (called function's state, its error code, block, origin)
        self.reads: list = []  # (error, origin) of read checks handed on, not collected yet
        self.taken: set = set()  # (read check, block) pairs handed on (`take_read_error`)
        self.guards = 0  # the guards of its body made so far (`try_guard`) ...
        self.open_guards: list = []  # ... and those whose statements are traced now

    def __repr__(self):
        return f"TryState({sorted(self.errors)})"

    def catches(self, exc) -> bool:
        """Whether one of the clauses would catch `exc` (unknown classes: no)."""
        try:
            classes = self.handlers() if self.handlers is not None else ()
        except Exception:  # noqa: BLE001  (a clause's class not defined yet: not this one)
            return False
        return any(isinstance(exc, _classes(c)) for c in classes)

    def take_read_error(self, exc, failed, key) -> bool:
        """A read check (`unbound.ReadCheck`, `key`) run while this body is the innermost
        open one: eager code raises `exc` (its `KeyError`, `IndexError`, `AttributeError`,
        `UnboundLocalError` of a value that exists on some paths only) where the bool graph
        value `failed` is true. Where the clauses of this `try` catch it (for a function
        converted for a call in a `try` body, `fn_state`: of a `try` around the call),
        it is handed on by this body like a called function's error code, to the
        `try_collect` after the statement (the converter puts one after each statement such
        clauses may see fail), and True is returned; else False (a `raise` op, uncaught)."""
        if not self.follows or not isinstance(exc, LOOKUP_ERRORS):
            return False
        # (else an enclosing `try` whose clauses catch it: this one hands it on, as its
        # clauses do not catch it; for a function converted for a call in a `try` body, the
        # `try` around the call)
        stack = open_trys()
        outer = stack[:stack.index(self)] if self in stack else []
        caught = (self.handlers is not None and self.catches(exc)) or any(
            s.catches(exc) for s in outer if s.handlers is not None)
        return caught and self._take(exc, failed, key)

    def _take(self, exc, failed, key) -> bool:
        block = current_block()
        if (id(key), id(block)) in self.taken:  # (read again: already handed on)
            return True
        self.taken.add((id(key), id(block)))
        read = TryState(_read_handlers)
        read.errors[1] = exc
        read.src = user_origin()
        self.pending.append((read, rt.cast(failed, "int64"), block, read.src))
        self.reads.append((exc, read.src))
        return True


def _read_handlers():  # (the `handlers` of a read check's error: `take_read_error`)
    return ()


# what read checks raise for eager (and `zero_division`'s check of a computed divisor)
LOOKUP_ERRORS = (LookupError, AttributeError, NameError, ZeroDivisionError)


def _division_check(divisor, error):
    """`/`, `//` or `%` of Python numbers by `divisor`, a value of the program
    (`runtime.program.zero_division`): eager raises `error` where it is zero. An open `try`
    whose `except` clause catches it takes it as a read check's error; else a `raise` op."""
    stack = open_trys()
    zero = rt.equal(divisor, 0)
    if stack and stack[-1].take_read_error(error, zero, divisor):
        return zero_division.nonzero(divisor, zero)
    return raise_where_zero(divisor, error)


zero_division.CHECK[0] = _division_check


def open_trys() -> list:
    """The `try` bodies open in the trace running now, innermost last (`trace_state`)."""
    return current().trys


def try_state(handlers=None, follows: bool = False) -> TryState:
    """A `try` body starts (its clauses' classes: `handlers()`, evaluated when needed;
    `follows`: the converter collects the lookup errors of its reads, `take_read_error`)."""
    state = TryState(handlers, user_origin(), follows)
    open_trys().append(state)
    return state


def try_end(state: TryState) -> None:
    """The `try` body ended (an `except` clause, the dispatch or `finally` starts)."""
    stack = open_trys()
    if state in stack:
        del stack[stack.index(state):]
    if not state.reads:
        return
    (exc, src), state.pending, state.reads = state.reads[0], [], []
    if sys.exc_info()[1] is None:  # (a read the converter did not collect after: never
        # silent; an `except` clause or `finally` the trace reached by an error: not that)
        raise _uncollected(exc, src, state)


def _uncollected(exc, src, state: TryState) -> ConversionError:
    return ConversionError(
        f"{type(exc).__name__}({exc}) may be raised when the program runs at {where(src)}, "
        f"reading a value that exists on some paths only, inside a `try` ({where(state.src)}) "
        "whose `except` clause catches it, in a part of a statement that the program decides "
        "when it runs (`a if t else b`, `and`/`or` with a tensor operand) or after which "
        "it cannot hand the error to that clause. Read the value in a statement of its own "
        "(`if 'k' in d: v = d['k']`).", origin=src)


def fn_state(follows: bool = False) -> TryState:
    """A function converted for a call inside an open `try` body starts (see the module)."""
    return try_state(None, follows)


def current_block():
    """The program block being traced now (None outside a program)."""
    b = active_builder()
    return None if b is None else b.block


def may_have_failed(code) -> bool:
    """An error code that is a graph value, or a Python code of an error raised."""
    return is_variable(code) or code != 0


def deposit(state: TryState, code) -> bool:
    """Hand the error code of the ended `state` (a called function, or a `try` whose clauses
    did not catch everything) to the innermost open `try` body or function; False if none is
    open."""
    stack = open_trys()
    if not stack:
        return False
    stack[-1].pending.append((state, code, current_block(), user_origin()))
    return True


def _merge(outer: TryState, code, inner: TryState, inner_code, ks):
    """`code`, or (where nothing failed yet) the inner error renumbered into `outer`."""
    if not ks:
        return code
    mapped = 0
    for k in ks:
        new = len(outer.errors) + 1
        outer.errors[new] = inner.errors[k]
        hit = inner_code == k
        mapped = mapped + (rt.cast(hit, "int64") * new if is_variable(hit) else new * hit)
    if not is_variable(code) and code == 0:
        return mapped
    if not is_variable(code):
        return code  # an error already happened: the later one never runs in eager code
    return code + rt.cast(code == 0, "int64") * mapped


def try_collect(state: TryState, code, *values):
    """After a statement that called functions: the error codes they handed on (`deposit`)
    join this body's code, the first one raised winning. `values` (what the statement
    computed) are read first: a value that exists on some paths only raises there, as eager
    code raised while computing it (`Variable.on_read`, `take_read_error`)."""
    stack = open_trys()
    if stack and stack[-1] is state:  # (an enclosing `try`'s collect: the inner one read)
        for v in values:  # (not items of containers: a dict bound to another name is no
            if is_variable(v) and v.on_read is not None:  # read of its flagged values)
                v.on_read()
    pending, state.pending, state.reads = state.pending, [], []
    here = current_block()
    for inner, inner_code, block, src in pending:
        if block is not here and inner.handlers is _read_handlers:
            raise _uncollected(inner.errors[1], src, state)
        if block is not here:
            raise ConversionError(
                f"a run-time `raise`/`assert` in a function called at {where(src)} inside "
                f"a `try` ({where(state.src)}) is reached in a graph block (a tensor `if` "
                "or loop body) that code between them does not hand on: the `except` "
                "clause could not see it when the program runs. Call the function outside "
                "that tensor `if`/loop test, or check its result and raise in the function "
                "with the `try`.", origin=src)
        keys = sorted(inner.errors) if is_variable(inner_code) else (
            [inner_code] if inner_code in inner.errors else [])
        code = _merge(state, code, inner, inner_code, keys)
    return code


def fn_exit(state: TryState, code) -> None:
    """The converted function ends: its error code goes to the caller (see the module)."""
    code = try_collect(state, code)
    try_end(state)
    if not may_have_failed(code):
        return
    if not deposit(state, code):
        try_reraise(state, code, ())


def _exception(exc):
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    if not isinstance(exc, BaseException):
        raise TypeError("exceptions must derive from BaseException")
    return exc


def try_raise(state: TryState, exc, cause=None):
    """`raise exc [from cause]` inside a `try` body with `except` clauses (see the module)."""
    exc = _exception(exc)
    if not in_graph_block():
        if cause is not None:
            raise exc from cause
        raise exc
    if any(is_variable(a) for a in exc.args):
        src = user_origin()
        raise TypeError(
            f"raise {type(exc).__name__}(...) under a tensor condition ({where(src)}) has a "
            "tensor argument: the message is fixed when the program is built. Use a Python "
            "string message; print the tensor with print() before the raise if needed.")
    if cause is not None:
        exc.__cause__ = _exception(cause)
    note_raised_at(exc)  # (the line a bare `raise` of it names)
    code = len(state.errors) + 1
    state.errors[code] = exc
    return code


def try_ok(code):
    """Whether nothing failed: Python True for the Python 0, else a bool graph value."""
    return code == 0


def try_guard(state: TryState, code):
    """`try_ok(code)` as the test of the statements of a `try` body after one that may have
    failed: an `if` on it lets zeros stand in for the names it binds first (`Guarded`) where
    it skips them (`control_flow`), and a name it binds is read-checked with this test,
    which the statements of a later guard of the body imply (`unbound.guarding`)."""
    ok = code == 0
    if is_variable(ok):
        state.guards += 1
        ok.d2s_try_guard = (state, state.guards)
    return ok


def try_failed(code):
    return code != 0


def _codes(state: TryState, classes) -> list:
    classes = _classes(classes)
    return [k for k, e in state.errors.items() if isinstance(e, classes)]


def _classes(classes):
    if classes is None:
        return BaseException
    return classes


def _any_of(code, codes: list):
    """`code in codes` as a bool graph value (Python False when `codes` is empty or `code`
    is a Python number: a Python-level error never reaches here)."""
    if not codes or not is_variable(code):
        return bool(not is_variable(code) and code in codes)
    hit = None
    for k in codes:
        eq = code == k
        hit = eq if hit is None else rt.logical_or(hit, eq)
    return hit


def try_caught(state: TryState, code, classes):
    """Whether the error raised at run time is one `except classes` catches."""
    return _any_of(code, _codes(state, classes))


def try_handling(state: TryState, code, classes) -> None:
    """First in an `except classes` clause the program runs (that has a `raise`): the error
    it handles is the context of a new exception raised in it, where one Python object
    stands for every error it may catch (else none is)."""
    errors = [state.errors[k] for k in _codes(state, classes)]
    if not errors or not is_variable(_any_of(code, _codes(state, classes))):
        return  # (not a graph branch: the clause runs as Python)
    first = errors[0]
    if all(type(e) is type(first) and e.args == first.args for e in errors[1:]):
        handling(first)
    else:  # (which one the run caught: each `raise` in the clause, one per error code)
        handling(HandledPerRun(code, {k: state.errors[k] for k in _codes(state, classes)}))


def try_error(state: TryState, code, classes):
    """The exception bound by `except classes as name` (a Python object, the same for every
    error the clause may catch: which one it is cannot depend on data)."""
    errors = [state.errors[k] for k in _codes(state, classes)]
    if not errors:
        return None
    first = errors[0]
    if any(type(e) is not type(first) or e.args != first.args for e in errors[1:]):
        src = user_origin()
        raise ConversionError(
            f"`except ... as name` ({where(src)}) may catch different run-time errors "
            f"({', '.join(sorted({f'{type(e).__name__}({e})' for e in errors}))}), decided by "
            "tensor conditions: the exception object bound to the name is a Python value, "
            "fixed when the program is built. Catch them in separate `except` clauses, or do "
            "not bind the exception to a name.", origin=src)
    try:
        first.__d2s_handled__ = True  # (a `raise ... from name` in the clause: `raise_`)
    except AttributeError:  # (an exception class with __slots__)
        pass
    return first


def try_caught_error(state: TryState, code, classes):
    """The exception a bare `raise` in `except classes` re-raises: on a Python-decided path
    the one raised; in a clause the program runs, one of those it may catch, which
    `try_handling` made stand for the run's (`HandledPerRun`: one `raise` op per error)."""
    codes = _codes(state, classes)
    if not is_variable(code) and code in codes:
        return state.errors[code]
    return state.errors[codes[0]] if codes else None


def try_uncaught(state: TryState, code, handlers: tuple) -> list:
    """The error codes no `except` clause catches (to re-raise after `finally`)."""
    if not is_variable(code) and not code:
        return []
    caught = set()
    for classes in handlers:
        caught.update(_codes(state, classes))
    return [k for k in state.errors if k not in caught]


def try_hold(state: TryState, exc) -> int:
    """An error raised while tracing a `try` body without `except` clauses whose `finally`
    may jump (`return`, `break`, `continue`): the jump discards it, so it is held as an
    error code until after the `finally` (`try_reraise`)."""
    code = len(state.errors) + 1
    state.errors[code] = exc
    return code


def try_reraise(state: TryState, code, handlers: tuple) -> None:
    """After `finally`: raise (when the program runs) the error no clause caught, one
    `switch_case` over the error codes (`raise` ops with the user's class and message)."""
    if not is_variable(code) and code:  # an error of the Python-decided path
        held = [k for k in try_uncaught(state, code, handlers) if k == code]
        if held:
            _raise_now(state.errors[code])
        return
    uncaught = try_uncaught(state, code, handlers)
    if not uncaught:
        return
    if open_trys():  # a function called inside a `try` body: that `try` gets the error
        deposit(_only(state, uncaught), code)
        return

    src = user_origin()
    at = f"{short_name(src.filename)}:{src.lineno}" if src is not None else ""

    def raising(exc):
        def run():
            raise_again(exc, at)
        return run

    rt.static.nn.switch_case(code, {k: raising(state.errors[k]) for k in uncaught},
                             default=lambda: None)


def _raise_now(exc) -> None:
    """Raise `exc` where the trace is: at once on a Python-decided path, else when the program
    runs this block (a `raise` op)."""
    if not in_graph_block():
        raise exc
    src = user_origin()
    raise_error(exc, at=f"{short_name(src.filename)}:{src.lineno}" if src is not None else "")


def _only(state: TryState, keys) -> TryState:
    out = TryState(state.handlers, state.src)
    out.errors = {k: state.errors[k] for k in keys}
    return out


def try_forward(outer: TryState, outer_code, inner: TryState, inner_code, handlers: tuple):
    """An inner `try`'s uncaught run-time error, handed to the enclosing `try` body: it is
    recorded there too, and the enclosing error code becomes its new code."""
    uncaught = try_uncaught(inner, inner_code, handlers)
    if not uncaught:
        return outer_code
    code = outer_code
    for k in uncaught:
        new = len(outer.errors) + 1
        outer.errors[new] = inner.errors[k]
        code = code + rt.cast(inner_code == k, "int64") * new
    return code


def item_read(array, i, read):
    """`arr[i]` of a tensor array (a list a graph loop or a tensor `if` sized) inside a
    `try` body whose clauses catch eager's `IndexError: list index out of range`: where the
    run's length has no item `i`, the error is handed on to those clauses
    (`take_read_error`) and zeros stand in for the item (never read: the statement does not
    finish). Arrays of Python numbers, strs, or items whose type the run decides: read as
    usual (the program raises the IndexError uncaught)."""
    stack = open_trys()
    shape = getattr(array, "_static_shape", None)
    if not stack or not stack[-1].follows or active_builder() is None or shape is None or \
            any(getattr(array, a, False) for a in _SPECIAL_ARRAYS) or not (
                isinstance(i, int) or is_variable(i) and i.dtype.is_integer):
        return read(array, i)
    n = rt.static.array_length(array)
    failed = rt.logical_or(n <= i, n < -i)
    exc = IndexError("list index out of range")
    if not stack[-1].take_read_error(exc, failed, exc):
        return read(array, i)
    dims = [d if d >= 0 else 1 for d in shape]
    return rt.static.nn.cond(failed, lambda: rt.zeros(dims, array.dtype),
                             lambda: read(array, i))


# array kinds whose items are more than a tensor (`runtime.ops.array_number_kinds`)
_SPECIAL_ARRAYS = ("python_items", "number_sums", "item_stops", "row_lists")
ITEM_READ[0] = item_read
