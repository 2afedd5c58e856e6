"""The call path of a known signature: one generated function per program (`Entry`) that
checks that a call is one the program was traced for and runs it.

`ProgramCache.find` builds a call's key (a tuple of shapes, dtypes, values) and looks it up.
The function made here instead compares the call's arguments with what the key of the
program's signature holds, directly: for each tensor argument its exact class, array class,
dtype, shape and `stop_gradient`; for each Python scalar its class and value; then the
instance's training flag, the auto_cast state and the program's guards. Every test is one
the key or the lookup makes too, so a call it accepts is a call `find` would give this program
(a test it cannot make, such as a NaN argument, sends the call the slow way). It feeds the
tensors' arrays to the compiled program's body (no feed dict, no second check of the arrays)
and wraps the result. A call it does not accept returns MISS and takes the slow path, which
traces a new program when one is needed: never a stale program.

It is made on the third call of a signature (see `prepare`), for calls of positional tensors
and Python scalars only.
"""
from __future__ import annotations

import itertools
import linecache
import weakref

import numpy as np

from runtime import backend
from runtime.program.executor import with_cause

from . import fallback
from .call_policy import ENABLED
from .function_spec import _PY_SCALARS, TENSOR_CLASSES, amp_key, default_dtype_key

MISS = type("_Miss", (), {"__repr__": lambda self: "<MISS>"})()
_ids = itertools.count()


def _holds(check) -> bool:
    try:
        return bool(check())
    except Exception:  # noqa: BLE001  (a guard that cannot be read: not the same)
        return False


def prepare(sf, entry, args: tuple) -> None:
    """Called on each slow call that ran `entry` with these (positional) arguments: on the
    third one, make the entry's fast caller (`entry.fast`). (Not sooner: a signature called
    once or twice never pays for compiling it, and the second call of a signature, which
    benchmarks and memory tests measure after one warm-up call, allocates nothing more.)"""
    entry.slow_calls += 1
    if entry.slow_calls == 3:
        entry.fast = build(sf, entry, args)


def build(sf, entry, args: tuple):
    """The fast caller of `entry` for calls like `args` (positional), or None where the fast
    path does not apply (keywords, containers, arrays, defaults left out)."""
    spec = sf.spec
    if len(args) < spec.n_positional and spec.defaults or entry.arg_writes or entry.arg_flags:
        return None  # (an argument written in place: `Entry.run` writes the caller's Tensor)
    eager = "    if EAGER[0] and not SF.full_graph and runs_eagerly(FUNCTION): return MISS"
    code = _Code(["def fast(args):",
                  f"    if len(args) != {len(args)} or not ENABLED[0]: return MISS", eager])
    tested = _test_arguments(code, spec, args)
    if tested is None or len(tested[0]) != len(entry.feed_names):
        return None  # (also a Tensor passed as several arguments: fed once)
    tensors, arrays = tested
    for i, t in enumerate(tensors):  # calls with one Tensor as two arguments: another program
        for u in tensors[i + 1:]:
            code.add(f"    if {t} is {u}: return MISS")
    _test_state(code, sf, entry)
    for place in entry.rebound:  # tensors the program reads from places it rebinds
        code.add(f"    {code.const(place, 'F')}.feed()")
    for k, (_, slot, dtype) in enumerate(entry.numbers):  # Python numbers kept as state
        code.add(f"    n{k} = asarray({code.const(slot, 'S')}.get(), {code.const(dtype, 'T')})")
        arrays.append(f"n{k}")
    _run_program(code, entry, args, tensors, arrays)
    return _compiled(code, sf, entry)


class _Code:
    """The lines of the fast caller, and the objects it reads (bound by name)."""

    def __init__(self, lines: list):
        self.lines = lines
        self.consts: dict = {}

    def add(self, line: str) -> None:
        self.lines.append(line)

    def const(self, obj, prefix: str = "K") -> str:
        name = f"{prefix}{len(self.consts)}"
        self.consts[name] = obj
        return name


def _test_arguments(code: _Code, spec, args: tuple):
    """Lines that test each argument as the key would: (the tensor arguments' names, their
    arrays' names), or None where an argument is not a tensor or a Python scalar."""
    names = [f"a{i}" for i in range(len(args))]
    if args:
        code.add(f"    {', '.join(names)}, = args")
    tensors, arrays = [], []
    for a, name in zip(args, names):
        cls = a.__class__
        if cls in TENSOR_CLASSES:
            d = a._data
            arr = "d" + name[1:]
            code.add(f"    if {name}.__class__ is not {code.const(cls, 'C')}: return MISS")
            code.add(f"    {arr} = {name}._data")
            given = spec.spec_for(len(tensors))  # an InputSpec: its shape, -1 = any size
            shape = [f"{arr}.shape != {d.shape!r}"] if given is None else \
                [f"{arr}.ndim != {len(given.shape)}"] + [
                    f"{arr}.shape[{i}] != {n}" for i, n in enumerate(given.shape) if n != -1]
            code.add(f"    if {arr}.__class__ is not {code.const(d.__class__, 'A')} or "
                     f"{arr}.dtype is not {code.const(d.dtype, 'D')} or {' or '.join(shape)} "
                     f"or {name}.stop_gradient is not {bool(a.stop_gradient)!r}: "
                     "return MISS")
            if a.stop_gradient.__class__ is not bool:
                return None
            tensors.append(name)
            arrays.append(arr)
        elif cls in _PY_SCALARS:
            test = f"{name} is not None" if a is None else \
                f"{name}.__class__ is not {cls.__name__} or {name} != {code.const(a, 'V')}"
            code.add(f"    if {test}: return MISS")
        else:
            return None
    return tensors, arrays


def _test_state(code: _Code, sf, entry) -> None:
    """Lines that test the rest of the key (the training flag, auto_cast, the default dtype)
    and the program's guards."""
    training = sf.training()
    inst = sf.instance  # (what `sf.training()` reads, without its call)
    code.add(f"    if SF._training != {code.const(training, 'B')}: return MISS" if inst is None
             else f"    if getattr(INST, 'training', SF._training) != "
                  f"{code.const(training, 'B')}: return MISS")
    amp = amp_key()
    code.add("    if STATE.amp is not None: return MISS" if amp is None else
             f"    if amp_key() != {code.const(amp, 'M')}: return MISS")
    code.add(f"    if STATE.default_float != {default_dtype_key()!r}: return MISS")
    if entry.check is not None:
        code.add(f"    if not holds({code.const(entry.check, 'G')}): return MISS")


def _run_program(code: _Code, entry, args: tuple, tensors: list, arrays: list) -> None:
    """Lines that run the program: its training form where the call records a gradient,
    else the compiled body on the arrays, its result wrapped."""
    trains = entry.has_diff and bool(entry.params or entry.made_leaves or any(
        not a.stop_gradient for a in args if a.__class__ in TENSOR_CLASSES))
    inputs = "(" + "".join(t + ", " for t in tensors) + ")"
    if trains:
        code.add(f"    if STATE.grad_enabled: return ENTRY.run_training({inputs}, "
                 f"({''.join(a + ', ' for a in arrays)}))")
    order = entry.body_order(entry.compiled)
    body_args = arrays if order is None else [arrays[i] for i in order]
    code.add("    try:")
    code.add(f"        out = BODY({', '.join(body_args)})")
    code.add("    except Exception as e:")
    code.add("        raise rewrite(e)")
    code.add("    return wrap(out[0])" if entry.single else
             f"    return ENTRY.finish(out, {inputs}, None)")


def _compiled(code: _Code, sf, entry):
    """The fast caller compiled from `code`, its source in linecache while `entry` lives."""
    compiled, program = entry.compiled, entry.concrete.main_program
    consts = code.consts
    consts.update(
        MISS=MISS, ENABLED=ENABLED, runs_eagerly=fallback.runs_eagerly, EAGER=fallback.ANY,
        FUNCTION=sf.function, SF=sf, INST=sf.instance, STATE=entry._state, amp_key=amp_key,
        holds=_holds, asarray=np.asarray if backend.XP is np else backend.XP.asarray,
        ENTRY=entry, BODY=compiled.ready().body, wrap=entry._wrap,
        rewrite=lambda e: with_cause(entry.raised(e, compiled, program), e))
    src = "def _make(" + ", ".join(consts) + "):\n" + "\n".join(
        "    " + ln for ln in code.lines) + "\n    return fast\n"
    filename = f"<d2s fast call {next(_ids)}: {sf.__qualname__}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    weakref.finalize(entry, linecache.cache.pop, filename, None)
    ns: dict = {}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102  (our own generated code)
    fast = ns["_make"](*consts.values())
    fast.source = src
    return fast
