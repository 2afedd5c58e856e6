"""Errors at the user's line: what d2s does to an exception raised while converting, tracing or
running a converted function.

The exception that reaches the user is the original one (same object, same class: a `KeyError`
stays a `KeyError`, a shape error stays the `OpError` eager mode raises) with a note listing the
user's own frames, one per user function on the path, outermost first:

    runtime.ops.registry.OpError: matmul: x has shape [2, 4] but y has shape [3, 3]; ...
      In user code:
        File "model.py", line 13, in forward
          return helper(x, w)
        File "model.py", line 6, in helper
          y = rt.matmul(x, w)

Frames of generated code are mapped back to the user's lines (`pyct.loader.lookup`); frames of
`runtime`, `d2s`, the standard library and installed packages are dropped, and so is the
traceback through d2s itself. With the environment variable `D2S_FULL_TRACEBACK=1` nothing is
hidden: the full traceback (generated files included) and the chained original stay.

Errors while running a program come from the executor with the failing op and the origin of the
op (`runtime.executor`); the user frames of that op are remembered at build time by
`resolve_origin`, the hook `runtime.program.origin` calls for every op it stamps.

>>> import d2s.errors as errors
>>> print(errors.format_frames([errors.UserFrame('model.py', 12, 'forward', 'y = f(x)')]))
  In user code:
    File "model.py", line 12, in forward
      y = f(x)
"""
from __future__ import annotations

import builtins
import difflib
import inspect
import linecache
import os
import re
import sys
import sysconfig
import threading
import weakref
from typing import NamedTuple

from runtime.core import active_builder
from runtime.program.origin import frame_line
from runtime.program.serialize import ModelFormatError  # noqa: F401  (d2s.ModelFormatError)
from runtime.program.variable import Variable

from . import value_errors
from .pyct import loader
from .pyct.origin import OriginInfo

FULL_TRACEBACK_ENV = "D2S_FULL_TRACEBACK"
_HEADER = "  In user code:"
_EXECUTOR_HEADER = "\n  In user code:\n"
_EXECUTOR_OP = "\n  While running op: "


class ConversionError(Exception):
    """The function uses a construct d2s cannot convert (a generator, `async def`, ...).

    `origin` is the `OriginInfo` of the offending construct (None if unknown).
    """

    def __init__(self, message: str, origin=None):
        super().__init__(message)
        self.origin = origin


# `ModelFormatError` (a ValueError): `d2s.load` / `rt.static.load_inference_model` found a
# saved model's file missing, truncated, damaged, edited or from another save. It is defined in
# runtime (which loads models without d2s) and is the same class here.


class UserFrame(NamedTuple):
    """One user function on the path of an error: file, line, function name, source text."""

    filename: str
    lineno: int
    function: str
    source: str

    def format(self) -> str:
        text = f'    File "{self.filename}", line {self.lineno}, in {self.function}'
        return text + (f"\n      {self.source}" if self.source else "")


def full_traceback() -> bool:
    """Whether `D2S_FULL_TRACEBACK=1` asks for unfiltered tracebacks."""
    return os.environ.get(FULL_TRACEBACK_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def format_frames(frames: list[UserFrame]) -> str:
    """The '  In user code:' block for `frames` (outermost first)."""
    return "\n".join([_HEADER] + [f.format() for f in frames])


# ---- which frames are the user's -------------------------------------------------------------

def _internal_dirs() -> tuple:
    here = os.path.dirname(os.path.abspath(__file__))
    runtime_dir = os.path.join(os.path.dirname(here), "runtime")
    paths = sysconfig.get_paths()
    dirs = {here, runtime_dir} | {paths[k] for k in ("stdlib", "platstdlib", "purelib",
                                                      "platlib") if k in paths}
    return tuple(os.path.abspath(d) + os.sep for d in dirs)


_INTERNAL_DIRS = _internal_dirs()
_IS_USER: dict[str, bool] = {}


def _is_user_file(filename: str) -> bool:
    """Not d2s, runtime, the standard library, an installed package or a generated file."""
    known = _IS_USER.get(filename)
    if known is None:
        known = not filename.startswith((*_INTERNAL_DIRS, "<frozen", "<static program"))
        _IS_USER[filename] = known
    return known


_D2S_DIR = os.path.dirname(os.path.abspath(__file__))
# d2s frames that only pass the user's code on: converted calls, a converted `raise`
_PASSING_CALLS = tuple(os.path.join(_D2S_DIR, *parts) for parts in (
    ("convert_call.py",), ("operators", "calls.py"), ("operators", "exceptions.py"),
    ("operators", "text.py"),  # (`raise_made`, `str()` of a user object)
    ("operators", "python_picks.py")))  # (`obj[k]`: `getitem_` passes the user's on)
_IFELSE = os.path.join(_D2S_DIR, "operators", "control_flow.py")


def _passes_on(frame) -> bool:
    """A d2s frame between user frames that only runs the user's code: a converted call or
    raise, or an `if` on a Python value (not a graph branch being traced)."""
    filename = frame.f_code.co_filename
    if filename.startswith(_PASSING_CALLS):
        return True
    return filename == _IFELSE and frame.f_code.co_name == "ifelse" and not isinstance(
        frame.f_locals.get("pred"), Variable)


def raised_by_user_code(e: BaseException) -> bool:
    """Whether `e` is the user's own exception from Python logic: from the first user frame
    of its traceback on, every frame is the user's (a file of theirs, or their converted
    code) or d2s passing the user's code on (`_passes_on`), and `e` is not a
    ConversionError. One raised by d2s or the runtime, or while a graph branch or loop was
    traced, is not."""
    if isinstance(e, ConversionError):
        return False
    tb, seen_user = e.__traceback__, False
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _file_kind(filename) != _SKIP:
            seen_user = True
        elif seen_user and not _passes_on(tb.tb_frame):
            return False
        tb = tb.tb_next
    return seen_user


def _user_frames(entries) -> list[UserFrame]:
    """User frames from `_entry`s of frames ordered outermost first.

    A generated frame maps to the user line it came from. The local functions d2s makes of
    branch and loop bodies run in frames of their own; they belong to the user function that
    encloses them, so such a frame replaces that function's entry (the innermost line wins).
    User frames outside the outermost generated frame (the script that called the converted
    function) are already in Python's own traceback and are dropped.
    """
    out: list[UserFrame] = []
    files: list[str] = []
    generated: list[bool] = []
    for entry in entries:
        info = _frame_info(entry)
        if info is None:
            continue
        user, nested, is_generated = info
        filename = entry[1]
        if nested and files and files[-1] == filename:
            out[-1] = user
            continue
        out.append(user)
        files.append(filename)
        generated.append(is_generated)
    first = next((i for i, g in enumerate(generated) if g), None)
    return [] if first is None else out[first:]


def _entry(filename: str, lineno: int, function: str) -> tuple:
    """What decides a frame's user frame: (line map of its file or None, file, line, function).
    The line map is part of it (and kept alive by it): a rewritten file gets a new map."""
    return (loader.line_map(filename), filename, lineno, function)


# `_entry` of a frame -> (user frame, nested, generated), or None for a frame that is not the
# user's: the ops built while tracing mostly share their outer frames.
_FRAME_INFO: dict[tuple, tuple | None] = {}
_MISSING = object()


def _frame_info(entry: tuple) -> tuple | None:
    info = _FRAME_INFO.get(entry, _MISSING)
    if info is not _MISSING:
        return info
    line_map, filename, lineno, function = entry
    info = None
    if line_map is not None:
        src = line_map.get(lineno)
        if src is not None:
            info = (UserFrame(src.filename, src.lineno, src.function_name, src.source_line),
                    function != src.function_name, True)
    elif _is_user_file(filename):
        # not remembered: linecache may read the file again
        text = linecache.getline(filename, lineno).strip()
        return UserFrame(filename, lineno, function, text), False, False
    _FRAME_INFO[entry] = info
    return info


def frames_of_traceback(tb) -> list[UserFrame]:
    """The user frames of a traceback (see `_user_frames`)."""
    entries = []
    while tb is not None:
        code = tb.tb_frame.f_code
        entries.append(_entry(code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return _user_frames(entries)


def frames_of_stack(frame) -> list[UserFrame]:
    """The user frames of the live stack from `frame` outwards."""
    return _user_frames(_stack_entries(frame))


# file -> what a stack walk does with its frames: _SKIP those of d2s, runtime, the standard
# library and installed packages (`_frame_info` maps them to nothing, so their line numbers
# are not even read), _USER those of a user file, _GENERATED those of a file d2s generated.
# A file never changes kind: a generated file's line map is registered before its code is
# compiled (so before any frame of it can be met), and line maps are replaced, not removed.
_KIND: dict[str, int] = {}
_SKIP, _USER, _GENERATED = 0, 1, 2


def raised_in_converted_code(e: BaseException) -> bool:
    """Whether a frame of `e`'s traceback is one of converted code (caught there: not an
    exception the caller of the converted function was handling when it called it)."""
    tb = e.__traceback__
    while tb is not None:
        if loader.line_map(tb.tb_frame.f_code.co_filename) is not None:
            return True
        tb = tb.tb_next
    return False


def _file_kind(filename: str) -> int:
    if loader.line_map(filename) is not None:
        return _GENERATED
    return _USER if _is_user_file(filename) else _SKIP


# Every op built while tracing walks the stack for its user frames: a recursion n deep would
# cost n * n (minutes for a runaway one). Errors name the innermost frames, as many as this
# (Python's own traceback of a deep recursion shows its innermost frames too).
_DEEPEST = 200


def _stack_entries(frame, deepest: int = _DEEPEST) -> list[tuple]:
    """The `_entry`s of the frames from `frame` outwards that decide its user frames,
    outermost first: frames of files `_SKIP`ped are left out, and so are those outside the
    outermost generated frame (`_user_frames` drops them); `deepest` frames at most."""
    kept = []  # frames, innermost first
    outermost = 0  # len(kept) up to the outermost generated frame
    kinds = _KIND
    while frame is not None:
        filename = frame.f_code.co_filename
        kind = kinds.get(filename)
        if kind is None:
            kind = kinds[filename] = _file_kind(filename)
        if kind:
            kept.append(frame)
            if kind == _GENERATED:
                outermost = len(kept)
            if len(kept) == deepest:
                break
        frame = frame.f_back
    # (a frame's line number is read only here: `frame_line` keeps long functions' line tables)
    return [_entry(f.f_code.co_filename, frame_line(f), f.f_code.co_name)
            for f in reversed(kept[:outermost])]


class _LastWalk:
    """The stack walk of the generated frame that built the last op: its callers' entries and
    the user origin and frames of its last line. A function's ops come in runs from one
    frame, often several from one line, and while a frame runs its callers stay where they
    are, so the next op of that frame reads only its own line. The frame is held (frames take
    no weak references) until a walk from another frame or the end of the trace
    (`forget_last_walk`)."""

    __slots__ = ("frame", "frames", "key", "line", "outer")

    def __init__(self):
        self.frame = self.outer = self.line = self.key = self.frames = None

    def resolve(self, frame, filename: str, line: int) -> tuple:
        """(the user's (file, line, source), the `_entry`s of the stack: its user frames are
        `frames_of_entries` of them) for `frame` running `line` of `filename`; (None, None)
        where that is no generated line."""
        # (a generator's callers change each time it is resumed)
        same = frame is self.frame and not frame.f_code.co_flags & _RESUMABLE
        if same and line == self.line:
            return self.key, self.frames
        src = loader.lookup(filename, line)
        if src is None:
            return None, None
        if not same:
            self.frame = frame
            self.outer = tuple(_stack_entries(frame.f_back, _DEEPEST - 1))
        # (the user frames of the stack are made from its entries when an error asks for
        # them, `frames_of_entries`: most ops never fail)
        entries = self.outer + (_entry(filename, line, frame.f_code.co_name),)
        key = src.as_tuple()
        stacks = _OP_STACKS.get(key)
        if stacks is None:  # (one stack: itself; more: a set of them)
            _OP_STACKS[key] = entries
        elif stacks.__class__ is tuple:
            if stacks != entries:
                _OP_STACKS[key] = {stacks, entries}
        elif len(stacks) < 16:  # enough to tell one caller from several
            stacks.add(entries)
        self.line, self.key, self.frames = line, key, entries
        return key, entries


_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_LAST_WALK = threading.local()


def forget_last_walk() -> None:
    """Release the frame the last stack walk of this thread holds (at the end of a trace)."""
    walk = getattr(_LAST_WALK, "walk", None)
    if walk is not None:
        walk.frame = walk.outer = walk.key = walk.frames = None


# ---- ops remember their user frames -----------------------------------------------------------

# block -> {index of an op in block.ops: the `_entry`s of the stack that built it}
_OP_FRAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# [(weak reference to the block an op was last built into, its table in _OP_FRAMES)]: ops
# come in runs into one block, and a WeakKeyDictionary look-up makes a weak reference each time
_LAST_TABLE: list = [None]
# op origin (file, line, source) -> the `_entry`s of the distinct stacks that built ops with
# that origin (for ops no longer found in the block they were built in, e.g. programs
# rewritten by passes): the entries of the one stack, or a set of several
_OP_STACKS: dict[tuple, tuple | set] = {}
# The `_stack_entries` of a stack -> its user frames, made on first ask (`frames_of_entries`)
_STACKS: dict[tuple, tuple] = {}


def frames_of_entries(entries: tuple) -> tuple:
    """The user frames of a stack from its `_entry`s (as `resolve_origin` recorded them)."""
    frames = _STACKS.get(entries)
    if frames is None:
        frames = _STACKS[entries] = tuple(_user_frames(entries))
    return frames


def resolve_origin(filename: str, lineno: int, frame=None):
    """The `runtime.program.origin` resolver: a generated line (run by `frame`; default: the
    caller's) -> (file, line, source) of the user's line, remembering the user frames that led
    there for errors at run time."""
    walk = getattr(_LAST_WALK, "walk", None)
    if walk is None:
        walk = _LAST_WALK.walk = _LastWalk()
    key, frames = walk.resolve(sys._getframe(1) if frame is None else frame, filename, lineno)
    if key is None:
        return None
    builder = active_builder()
    if builder is not None:  # the op is appended to builder.block right after this returns
        block = builder.block
        last = _LAST_TABLE[0]  # (read once: another thread may replace it)
        if last is not None and last[0]() is block:
            table = last[1]
        else:
            table = _OP_FRAMES.get(block)
            if table is None:
                table = _OP_FRAMES[block] = {}
            _LAST_TABLE[0] = (weakref.ref(block), table)
        table[len(block.ops)] = frames
    return key


def _frames_of_op(op, origin: tuple | None) -> list[UserFrame]:
    for block, table in list(_OP_FRAMES.items()):
        entries = table.get(_index(block.ops, op))
        if entries is not None:
            return list(frames_of_entries(entries))
    if origin is None:
        return []
    stacks = _OP_STACKS.get(tuple(origin), ())
    stacks = list(dict.fromkeys(f for f in map(frames_of_entries, (
        (stacks,) if stacks.__class__ is tuple and stacks else stacks)) if f))
    if len(stacks) == 1:
        return list(stacks[0])
    filename, lineno, source = origin
    function = next(iter(stacks))[-1].function if stacks else "<program>"
    text = source if source is not None else linecache.getline(filename, lineno).strip()
    return [UserFrame(filename, lineno, function, text)]


def _index(ops: list, op) -> int | None:
    for i, o in enumerate(ops):
        if o is op:
            return i
    return None


# ---- rewriting -------------------------------------------------------------------------------

def for_user(e: BaseException) -> BaseException:
    """`e` as the user should see it: the same object with a note naming the user's frames,
    its traceback cut down to nothing (`raise` adds the raising frame). Idempotent."""
    if getattr(e, "__d2s_frames__", None) is not None:
        return e
    e = value_errors.computed_number(e, _is_user_file, ConversionError) or \
        value_errors.container_index(e, ConversionError) or _run_str_error(e) or \
        value_errors.in_generator(e, _is_user_file, ConversionError) or \
        value_errors.in_ordering(e, ConversionError) or e
    op_text = None
    if isinstance(e, ConversionError) and e.origin is not None:
        frames = [_frame_of_origin(e.origin)]
    elif hasattr(e, "op") and hasattr(e, "origin") and _from_executor(e):
        frames, op_text = _executor_frames(e)
    else:
        frames = frames_of_traceback(e.__traceback__)
    e.__d2s_frames__ = frames
    _without_internal_names(e)
    _suggest_name(e)
    if frames:
        e.add_note(format_frames(frames) + (f"\n  While running op: {op_text}" if op_text
                                            else ""))
    if full_traceback():
        return e
    cause = e.__cause__
    e.__d2s_original_cause__ = cause
    if _program_cause(e):  # (the user's cause and context, as a raise op made them)
        return e.with_traceback(None)
    # (`raise ValueError(...) from err` in the user's code, `err` the user's too: kept, as
    # eager's; a cause inside d2s or the runtime is not the user's to see)
    context = e.__context__  # (`raise E(...)` in the user's `except` clause: eager shows
    if cause is None and context is not None and not e.__suppress_context__ and \
            raised_by_user_code(e) and raised_by_user_code(context):  # the one it handled)
        e.__context__ = for_user(context)  # (the flag stays False: setting a cause sets it)
        return e.with_traceback(None)
    e.__cause__ = for_user(cause) if cause is not None and raised_by_user_code(
        e) and raised_by_user_code(cause) else None
    e.__suppress_context__ = True
    return e.with_traceback(None)


def _program_cause(e: BaseException) -> bool:
    """Whether a program's raise op gave `e` its `__cause__` / `__context__` (`raise E(...)
    from err`, or a raise in an `except` clause, under a tensor condition: new exceptions of
    the class and message of the user's, `program_cause`), left as eager's."""
    if not getattr(e, "program_cause", False):
        return False
    del e.program_cause
    return all(x is None or x.__traceback__ is None for x in (e.__cause__, e.__context__))


_INTERNAL_VARIABLE = re.compile(r"(?:a |the )?(?:0-d )?static Variable '(?:t\d+|_[A-Za-z0-9_]*)'")


def _without_internal_names(e: BaseException) -> None:
    """The runtime names a static value by its program name (`static Variable 't9'`): in
    converted code that name is the trace's, not the user's, so it reads "a tensor computed
    by the converted code" (the note that follows names the user's line)."""
    if e.args and isinstance(e.args[0], str) and _INTERNAL_VARIABLE.search(e.args[0]):
        e.args = (_INTERNAL_VARIABLE.sub("a tensor computed by the converted code",
                                         e.args[0]),) + e.args[1:]


_RUN_STR = re.compile(r"'?\b(MadeText|ChosenStr|StrItem|JoinedStr)\b'?")


def _run_str_error(e: BaseException) -> ConversionError | None:
    """A str only the run decides (`str_arrays.StrItem`) given to code needing its text."""
    message = e.args[0] if isinstance(e, TypeError) and len(e.args) == 1 else None
    if (found := _RUN_STR.search(message) if isinstance(message, str) else None) is None:
        return None
    what = ("an f-string of a value the converted code computes" if found.group(1) ==
            "MadeText" else "a str only the run decides")
    return ConversionError(
        f"{what} is used as text ({_RUN_STR.sub('a run-time str', message)}): its text exists "
        "only when the program runs. Return it, store it or print it (the call gives, and "
        "print shows, the text), or make the text outside the converted function."
    ).with_traceback(e.__traceback__)


def _suggest_name(e: BaseException) -> None:
    """Python's "Did you mean: 'value'?" for a NameError: Python computes it from the frame
    that raised, which `for_user` cuts from the traceback, so it is computed here."""
    name = getattr(e, "name", None)
    if not isinstance(e, NameError) or not name or full_traceback() or e.__traceback__ is None:
        return
    if len(e.args) != 1 or not isinstance(e.args[0], str) or "Did you mean" in e.args[0]:
        return
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    names = {*frame.f_locals, *frame.f_globals, *vars(builtins)}
    if not name.startswith("_"):  # never a generated name (`_d2s`, `_retval`, `_if_true_3`)
        names = {n for n in names if not n.startswith("_")}
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.7)
    if close:
        e.args = (f"{e.args[0]}. Did you mean: '{close[0]}'?",)


def note_traced_branch(e: BaseException, where: str) -> BaseException:
    """`e`, raised while tracing a branch of the tensor `if` at `where`, with a note that both
    branches are traced whatever the inputs (eager code may never run the failing line for
    them). Only the innermost `if` adds it; d2s's own conversion errors and unbound names
    (`UndefinedNameError`, a subclass of UnboundLocalError) explain themselves; Python's own
    UnboundLocalError (a name the branch reads before binding it) gets the note."""
    ours = isinstance(e, UnboundLocalError) and type(e) is not UnboundLocalError
    if isinstance(e, ConversionError) or ours or getattr(e, "__d2s_branch_noted__", False):
        return e
    e.__d2s_branch_noted__ = True
    e.add_note(f"  Raised while d2s traced a branch of the `if` ({where}). Both branches of "
               "an `if` whose condition is a tensor are built into the program, whichever "
               "one these inputs take: make the branch valid for every input, or decide it "
               "with a Python value before the `if`.")
    return e


def _frame_of_origin(src) -> UserFrame:
    return UserFrame(src.filename, src.lineno, src.function_name, src.source_line)


def _from_executor(e) -> bool:
    return len(e.args) == 1 and isinstance(e.args[0], str) and _EXECUTOR_HEADER in e.args[0]


def _executor_frames(e) -> tuple[list[UserFrame], str | None]:
    """Split the executor's message into the error and the op; frames from the op origin."""
    text = e.args[0]
    head, _, rest = text.partition(_EXECUTOR_HEADER)
    op_text = rest.partition(_EXECUTOR_OP)[2] or None
    frames = _frames_of_op(e.op, e.origin)
    if frames:
        e.args = (head,) if head else ()  # `raise KeyError` in a program: no args, as eager
    return frames, op_text


def user_frames(e: BaseException) -> list[UserFrame]:
    """The user frames attached to an exception d2s rewrote ([] if none)."""
    return list(getattr(e, "__d2s_frames__", None) or [])


def conversion_error(what: str, function: str, origin, advice: str) -> ConversionError:
    """A ConversionError for construct `what` in `function` at `origin` (an OriginInfo)."""
    return ConversionError(f"d2s cannot convert {function}: it uses {what}. {advice}", origin)


_ASYNC_FLAGS = 0x80 | 0x100 | 0x200  # CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR


def check_function_kind(fn) -> None:
    """Refuse `async def` functions up front, pointing at their `def` line."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_flags & _ASYNC_FLAGS:
        return
    lineno, text = code.co_firstlineno, ""
    for i in range(code.co_firstlineno, code.co_firstlineno + 50):
        line = linecache.getline(code.co_filename, i).strip()
        if line.startswith(("async def", "def")):
            lineno, text = i, line
            break
    raise conversion_error(
        "async def (a coroutine)", code.co_name,
        OriginInfo(code.co_filename, lineno, 0, code.co_name, text),
        "A converted function runs once, synchronously, to build a program; await the "
        "asynchronous work outside it and pass the results in.")
