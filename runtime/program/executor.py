"""`Executor`: runs a static `Program` on the current device.

Each program is compiled once (per version, fetch list and device) into a generated Python
function (`runtime/program/codegen.py`), cached on the program. Feeds are checked against the
`static.data` declarations; a failure while running is re-raised with the same exception class,
the failing op and the user's file, line and source that created it (also inside `while`
and `cond` bodies).
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..dtypes import NP_ALL, of_array
from ..ops import registry
from . import cuda_graph, interpreter
from . import fusion as _fusion
from . import origin as _origin
from .builder import default_main_program
from .codegen import Compiled, compile_program
from .interpreter import FirstRun
from .ir import Program
from .printer import op_lines
from .variable import Variable


class FeedError(ValueError):
    """A feed is missing, unknown, or has the wrong shape or dtype."""


class FetchError(ValueError):
    """A fetch names a variable the program does not have (or cannot return)."""


class _FeedCheck:
    """The slow path of feed validation, called by generated code only when the fast
    `dtype is`/shape test fails or the feed is not an array of the device."""

    def __init__(self, program: Program):
        self.program = program

    def to_array(self, x, name, np_dtype):
        if isinstance(x, registry._hooks["Tensor"]):
            x = x._data
        if isinstance(x, backend.XP.ndarray):
            return x
        if isinstance(x, Variable):
            raise FeedError(f"feed {name!r}: got a static Variable; feed arrays or Tensors")
        if isinstance(x, (np.ndarray, np.generic)):
            return backend.XP.asarray(x)
        try:
            return backend.XP.asarray(x, dtype=np_dtype)
        except (TypeError, ValueError) as e:
            raise FeedError(f"feed {name!r}: cannot convert {type(x).__name__} to an array "
                            f"({e})") from None

    def check_names(self, feed):
        bad = [k for k in feed if k not in self.program.inputs]
        if bad:
            raise FeedError(f"feed {bad[0]!r} is not a data variable of this program; its "
                            f"inputs are {self.program.inputs}")

    def check(self, arr, name):
        v = self.program.global_block().vars[name]
        shape = tuple(arr.shape)
        ok_shape = len(shape) == len(v._static_shape) and all(
            e < 0 or e == s for e, s in zip(v._static_shape, shape))
        if ok_shape and arr.dtype == v.dtype.np:
            return
        got = of_array(arr).name if arr.dtype in _NP_DTYPES else str(arr.dtype)
        raise FeedError(f"feed {name!r}: expected {v.type_str()} ({v.dtype.name}, shape "
                        f"{list(v._static_shape)}, -1 = any size) but got a {got} array of "
                        f"shape {list(shape)}")


_NP_DTYPES = NP_ALL  # (grows when bfloat16 loads)


class Executor:
    """Runs programs. `place` is accepted for Paddle compatibility; the device is the
    current one (`rt.set_device`).

    >>> import numpy as np, runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [None, 2], 'float32')
    ...     y = x * 2.0
    >>> rt.static.Executor().run(main, feed={'x': np.ones((1, 2), 'float32')},
    ...                          fetch_list=[y])[0].tolist()
    [[2.0, 2.0]]
    """

    def __init__(self, place=None):
        self.place = place

    def run(self, program: Program | None = None, feed: dict | None = None,
            fetch_list=None, feed_var_name: str = "feed", fetch_var_name: str = "fetch",
            scope=None, return_numpy: bool = True, use_program_cache: bool = True) -> list:
        if program is None:
            program = default_main_program()
        try:  # the common case, without a function call per fetch
            fetch = tuple([f if f.__class__ is str else f.name for f in fetch_list]) \
                if fetch_list.__class__ in (list, tuple) else _fetch_names(fetch_list)
        except AttributeError:
            fetch = _fetch_names(fetch_list)
        compiled = program._compiled.get((fetch, backend.DEVICE))
        if compiled is None or compiled.version != program.version:
            compiled = self.compiled(program, fetch)
        try:
            out = compiled.fn(feed if feed is not None else {})
        except Exception as e:
            raise with_cause(_rewrite(e, compiled, program), e)
        if return_numpy:
            if backend.XP is np:
                return list(out)
            return [_to_numpy(o) for o in out]
        wrap = registry._hooks["wrap"]
        return [wrap(o) if not isinstance(o, list) else [wrap(t) for t in o] for o in out]

    def compiled(self, program: Program, fetch: tuple,
                 interpret_first: bool = False) -> Compiled | FirstRun:
        """The compiled form of `program` for this fetch list (compiled on first use). With
        `interpret_first`, a big program's first run is interpreted and the program compiled
        on its second (`interpreter.py`)."""
        key = (fetch, backend.DEVICE)
        c = program._compiled.get(key)
        if c is None or c.version != program.version:
            _check_fetch(program, fetch)

            def compile() -> Compiled:
                done = cuda_graph.wrap(compile_program(program, fetch, _FeedCheck(program)),
                                       program)
                program._compiled[key] = done
                return done

            if interpret_first and interpreter.worth(program):
                c = program._compiled[key] = FirstRun(program, fetch, _FeedCheck(program),
                                                      compile)
            else:
                c = compile()
        return c

    def close(self) -> None:
        """Nothing to release (Paddle compatibility)."""


def _fetch_names(fetch_list) -> tuple:
    if fetch_list is None:
        return ()
    if isinstance(fetch_list, (str, Variable)):
        fetch_list = [fetch_list]
    out = []
    for f in fetch_list:
        if isinstance(f, Variable):
            out.append(f.name)
        elif isinstance(f, str):
            out.append(f)
        else:
            raise FetchError(f"fetch_list entries must be Variables or names, got "
                             f"{type(f).__name__} {f!r}")
    return tuple(out)


def _check_fetch(program: Program, fetch: tuple) -> None:
    g = program.global_block()
    for name in fetch:
        if name in g.vars:
            continue
        v = program.find_var(name)
        if v is not None:
            raise FetchError(
                f"fetch {name!r}: the variable is defined inside a cond/while block (block "
                f"{v.block.idx}) and only exists there; return it from the branch or loop "
                "body and fetch the op's output instead")
        known = sorted(g.vars)
        raise FetchError(f"fetch {name!r}: no variable of that name in the program; it has "
                         f"{len(known)} top-level variables, e.g. {known[:12]}")


def _to_numpy(o):
    if isinstance(o, list):
        return [backend.to_numpy(t) for t in o]
    return backend.to_numpy(o)


def _rewrite(e: Exception, compiled: Compiled | FirstRun, program: Program) -> Exception:
    """The exception to raise for `e` raised inside generated code (or by the interpreter of
    a first run): same class, with the failing op and the user line that built it."""
    entry, values = _failing_op(e, compiled)
    if entry is None:
        return e
    if entry[0] == "feed":
        if isinstance(e, KeyError):
            v = program.global_block().vars[entry[1]]
            return FeedError(f"missing feed {entry[1]!r}: the program reads data variable "
                             f"'{entry[1]}' ({v.type_str()}); pass it in feed={{...}}")
        return e
    _, op, block = entry
    err = e
    opdef = registry.OPS.get(op.type)
    # (an assert op given an `error`: `raise E(f"...")` of converted code, as a raise op)
    raised = op.type == "raise" or op.type == "assert" and "error" in op.attrs
    if opdef is not None and not isinstance(e, (registry.OpError, registry.OpTypeError,
                                                  AssertionError)) and values is not None \
            and not raised and op.type not in ("cond", "while", "switch_case",
                                               "backward_cut_check"):
        # not the user's own exception (its message is the user's, or eager `backward()`'s),
        # nor one raised inside a cond/while body (the failing op in the body explains itself)
        try:
            err = registry.explain_failure(opdef, [_value_of(x, values) for x in op.inputs],
                                           op.attrs, e)
        except Exception:  # noqa: BLE001  (explaining must never hide the real error)
            err = e
    text = op_lines(program, op, block, "", False)[0].rstrip(" {")
    msg = (f"{err}\n  In user code:\n{_origin.format_origin(program.origin_of(op))}\n"
           f"  While running op: {text}")
    if raised:  # the user's own exception, as raised: the place as a note
        e.add_note(msg.partition("\n")[2])
        return e
    try:
        new = type(err)(msg)
    except Exception:  # noqa: BLE001  (exception classes with unusual constructors)
        e.add_note(msg)
        return e
    new.op = op
    new.origin = program.origin_of(op)
    return new


def _failing_op(e: Exception, compiled: Compiled | FirstRun) -> tuple:
    """(the line map's entry of the op or feed that raised `e`, or None; the values by
    variable name when it raised, or None where they are not known)."""
    if compiled.__class__ is FirstRun:
        failed = compiled.failed(e)
        if failed is not None or compiled.compiled is None:
            return failed or (None, None)
        compiled = compiled.compiled
    tb, entry, frame = e.__traceback__, None, None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename == compiled.filename:
            entry = compiled.line_map.get(tb.tb_lineno, entry)
            frame = tb.tb_frame
        elif filename.startswith("<d2s fused chain"):
            # inside a fused chain: the op of that line (its locals are chunks: no values)
            entry, frame = _fusion.op_at(filename, tb.tb_lineno) or entry, None
        tb = tb.tb_next
    if frame is None:
        return entry, None
    local_vars = frame.f_locals
    return entry, {name: local_vars[i] for name, i in compiled.idents.items()
                   if i in local_vars}


def _value_of(x, values: dict):
    if x.__class__ is str:
        return values.get(x, x)
    if isinstance(x, list):
        return [_value_of(t, values) for t in x]
    return x


# Public name for other packages (d2s maps failures of the programs it compiles itself).
rewrite_error = _rewrite


def with_cause(new: BaseException, e: BaseException) -> BaseException:
    """`new` (the exception `_rewrite` gives for `e`) with `e` as its cause, as `raise new
    from e` leaves it; `e` itself (a raise op's: the user's own exception) keeps its own
    cause (`raise E(...) from err`), where `raise e from e` would make `e` its own cause."""
    if new is not e:
        new.__cause__ = e
    return new
