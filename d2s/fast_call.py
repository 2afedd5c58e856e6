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

from . import fallback
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
    if len(args) < spec.n_positional and spec.defaults or entry.arg_writes:
        return None  # (an argument written in place: `Entry.run` writes the caller's Tensor)
    from runtime.program.executor import rewrite_error
    consts: dict = {}

    def const(obj, prefix="K"):
        name = f"{prefix}{len(consts)}"
        consts[name] = obj
        return name

    lines = ["def fast(args):",
             f"    if len(args) != {len(args)} or not ENABLED[0]: return MISS",
             "    if EAGER[0] and not SF.full_graph and runs_eagerly(FUNCTION): return MISS"]
    names = [f"a{i}" for i in range(len(args))]
    if args:
        lines.append(f"    {', '.join(names)}, = args")
    tensors, arrays = [], []
    for a, name in zip(args, names):
        cls = a.__class__
        if cls in TENSOR_CLASSES:
            d = a._data
            arr = "d" + name[1:]
            lines.append(f"    if {name}.__class__ is not {const(cls, 'C')}: return MISS")
            lines.append(f"    {arr} = {name}._data")
            given = spec.spec_for(len(tensors))  # an InputSpec: its shape, -1 = any size
            shape = [f"{arr}.shape != {d.shape!r}"] if given is None else \
                [f"{arr}.ndim != {len(given.shape)}"] + [
                    f"{arr}.shape[{i}] != {n}" for i, n in enumerate(given.shape) if n != -1]
            lines.append(f"    if {arr}.__class__ is not {const(d.__class__, 'A')} or "
                         f"{arr}.dtype is not {const(d.dtype, 'D')} or {' or '.join(shape)} "
                         f"or {name}.stop_gradient is not {bool(a.stop_gradient)!r}: "
                         "return MISS")
            if a.stop_gradient.__class__ is not bool:
                return None
            tensors.append(name)
            arrays.append(arr)
        elif cls in _PY_SCALARS:
            test = f"{name} is not None" if a is None else \
                f"{name}.__class__ is not {cls.__name__} or {name} != {const(a, 'V')}"
            lines.append(f"    if {test}: return MISS")
        else:
            return None
    if len(tensors) != len(entry.feed_names):
        return None  # (also a Tensor passed as several arguments: fed once)
    for i, t in enumerate(tensors):  # calls with one Tensor as two arguments: another program
        for u in tensors[i + 1:]:
            lines.append(f"    if {t} is {u}: return MISS")
    training = sf.training()
    inst = sf.instance  # (what `sf.training()` reads, without its call)
    lines.append(f"    if SF._training != {const(training, 'B')}: return MISS" if inst is None
                 else f"    if getattr(INST, 'training', SF._training) != "
                      f"{const(training, 'B')}: return MISS")
    amp = amp_key()
    lines.append("    if STATE.amp is not None: return MISS" if amp is None else
                 f"    if amp_key() != {const(amp, 'M')}: return MISS")
    lines.append(f"    if STATE.default_float != {default_dtype_key()!r}: return MISS")
    if entry.check is not None:
        lines.append(f"    if not holds({const(entry.check, 'G')}): return MISS")
    for k, (_, slot, dtype) in enumerate(entry.numbers):  # Python numbers kept as state
        lines.append(f"    n{k} = asarray({const(slot, 'S')}.get(), {const(dtype, 'T')})")
        arrays.append(f"n{k}")
    trains = entry.has_diff and bool(entry.params or any(not a.stop_gradient for a in args
                                                         if a.__class__ in TENSOR_CLASSES))
    inputs = "(" + "".join(t + ", " for t in tensors) + ")"
    if trains:
        lines.append(f"    if STATE.grad_enabled: return ENTRY.run_training({inputs}, "
                     f"({''.join(a + ', ' for a in arrays)}))")
    order = entry.body_order(entry.compiled)
    body_args = arrays if order is None else [arrays[i] for i in order]
    lines.append("    try:")
    lines.append(f"        out = BODY({', '.join(body_args)})")
    lines.append("    except Exception as e:")
    lines.append("        raise rewrite(e) from e")
    lines.append("    return wrap(out[0])" if entry.single else
                 f"    return ENTRY.finish(out, {inputs}, None)")
    compiled, program = entry.compiled, entry.concrete.main_program
    consts.update(
        MISS=MISS, ENABLED=sf_enabled(), runs_eagerly=fallback.runs_eagerly, EAGER=fallback.ANY,
        FUNCTION=sf.function, SF=sf, INST=inst, STATE=entry._state, amp_key=amp_key,
        holds=_holds, asarray=np.asarray if backend.XP is np else backend.XP.asarray,
        ENTRY=entry, BODY=compiled.body, wrap=entry._wrap,
        rewrite=lambda e: rewrite_error(e, compiled, program))
    src = "def _make(" + ", ".join(consts) + "):\n" + "\n".join(
        "    " + ln for ln in lines) + "\n    return fast\n"
    filename = f"<d2s fast call {next(_ids)}: {sf.__qualname__}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    weakref.finalize(entry, linecache.cache.pop, filename, None)
    ns: dict = {}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102  (our own generated code)
    fast = ns["_make"](*consts.values())
    fast.source = src
    return fast


def sf_enabled():
    from .call_policy import ENABLED
    return ENABLED
