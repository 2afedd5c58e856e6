"""Whole small tensor loops as one generated C function (the `while` op of a compiled program).

A `while` op whose cond and body blocks hold only elementwise ops on values of small static
shape (float32/float64 arithmetic, integer counters, comparisons and logical ops making the
condition) runs as one C call instead of one NumPy call per op per iteration:

    r = NL0(v_init, v_bias, m_n)         # the loop's inputs; None: not ready, or a flag
    if r is not None:
        v_out, = r
    else:
        ...the Python loop (`codegen_loops.emit_while`), the reference...

The C keeps each carried value in a small buffer (the condition and every op of an
iteration are loops over a value's elements, into buffers declared on the stack), then writes
the carried values read after the loop into fresh arrays. An operand broadcasts when it is
one element or the trailing dimensions of the result (a bias row). Each op computes what its
NumPy function computes: + - * / and sqrt correctly rounded in both (no contracted
multiply-add), integer arithmetic wrapping around as NumPy's does; exp, log, tanh, sin and
cos come from the C library (a few units in the last place from NumPy's). A `matmul` of two
2-D float values ([4, 16] x [16, 16] in a recurrent step; up to `MAX_MATMUL` multiply-adds)
is one step too: each element sums
its products in order (BLAS sums in another order: NumPy's values within a rounding).

This module decides (`plan`: whether the loop fits, then its `WhilePlan`, `loop_plan.py`);
`native_loops_emit.py` writes the C text from the plan; `caller` runs the compiled function.
On CuPy the plan becomes one CUDA kernel instead (`cuda_loops.py`).

The Python loop stays the fallback: before the C is compiled (it builds in the background,
`native_build.py`), when an input is not the array the program declares, and when the C
raised a floating-point flag that NumPy would report (the Python loop then reports it).
Loops that keep per-iteration values for a backward pass, loops with sub-blocks or any other
op keep the Python loop alone; `D2S_NATIVE=0` turns native code off.
"""
from __future__ import annotations

import ctypes
import itertools
import math
import threading

import numpy as np

from .. import backend
from . import codegen_loops, cuda_loops, native_loops_emit
from .loop_plan import (
    Buffer,
    Carried,
    Copy,
    LoopOutput,
    LoopStep,
    MatmulStep,
    Ref,
    WhilePlan,
)
from .native_emit import C_BINARY, C_UNARY
from .native_loops_emit import (
    COMPARE,
    CTYPES,
    INT_OPS,
    LOGICAL,
    PAUSED,
    UNSIGNED,
)

MAX_ELEMENTS = 4096  # per value: the buffers live on the C stack
MAX_BYTES = 1 << 18  # all buffers together
# A matmul step's multiply-adds: beyond, BLAS (blocked, vectorised) beats the plain C loop
MAX_MATMUL = 1 << 16
# Iterations per C call: between calls the Python caller sees Ctrl-C (a loop that never
# ends stays interruptible); the call after resumes from the carried values.
TRIPS_PER_CALL = 1 << 20
FLOAT_OPS = set(C_UNARY) | set(C_BINARY)

_ids = itertools.count()


def _shape(var) -> tuple:
    return tuple(var._static_shape)


class _Planner:
    """Walks a `while` op's blocks into a `WhilePlan`, or gives up (`_Unfit`)."""

    def __init__(self, g, op, block):
        self.g, self.op, self.block = g, op, block
        prog = g.program
        self.cblk, self.bblk = (prog.blocks[i] for i in op.blocks)
        self.counter = g.counters.get(id(op))
        self.place: dict = {}  # name -> (Ref, dtype name, shape)
        self.out = WhilePlan(name="", trips_per_call=TRIPS_PER_CALL)
        self.nbytes = 0

    # ---- values -------------------------------------------------------------------------
    def _value(self, blk, name) -> tuple:
        """(Ref, dtype, shape) of `name` read in `blk`: a buffer made in the loop, else an
        argument (an array, or for a loop bound kept as a Python int, an int64)."""
        if name in self.place:
            return self.place[name]
        c, out = self.counter, self.out
        if c is not None and c.bound_maker is not None and name == c.bound:
            out.ints.append(f"m_{self.g.ident(name)}")
            place = (Ref("int", len(out.ints) - 1), "int64", ())
        else:
            if name in self.g.virtual:
                raise _Unfit
            var = blk.var(name)
            dt, shape = self._check(var)
            out.arrays.append((self.g.ident(name), dt, shape))
            place = (Ref("array", len(out.arrays) - 1), dt, shape)
        self.place[name] = place
        return place

    def _check(self, var) -> tuple:
        if var.kind != "tensor" or var.dtype.name not in CTYPES:
            raise _Unfit
        shape = _shape(var)
        if -1 in shape or math.prod(shape) > MAX_ELEMENTS:
            raise _Unfit
        return var.dtype.name, shape

    def _buffer(self, dt, shape) -> Ref:
        size = max(1, math.prod(shape))
        self.nbytes += np.dtype(dt).itemsize * size
        if self.nbytes > MAX_BYTES:
            raise _Unfit
        self.out.buffers.append(Buffer(dt, size))
        return Ref("buffer", len(self.out.buffers) - 1)

    # ---- ops ----------------------------------------------------------------------------
    def _op(self, blk, o) -> LoopStep:
        """The step computing op `o` of `blk` into a new buffer."""
        if o.type == "matmul":
            return self._matmul(blk, o)
        if o.blocks or o.attrs or len(o.outputs) != 1 or \
                any(isinstance(x, list) for x in o.inputs):
            raise _Unfit
        dt, shape = self._check(blk.var(o.outputs[0]))
        n = math.prod(shape)
        operands, sizes, dts = [], [], []
        for x in o.inputs:
            if x.__class__ is str:
                ref, xdt, xshape = self._value(blk, x)
                operands.append(ref)
                sizes.append(_broadcast(xshape, shape))
                dts.append(xdt)
            elif isinstance(x, (bool, int, float)):
                operands.append(x)
                sizes.append(None)
                dts.append(None)
            else:
                raise _Unfit
        dts = _operand_dtypes(o.type, dt, operands, dts)
        out = self._buffer(dt, shape)
        self.place[o.outputs[0]] = (out, dt, shape)
        return LoopStep(o.type, dt, n, out.index, operands, sizes, dts)

    def _matmul(self, blk, o) -> MatmulStep:
        """A product of two 2-D float values of the loop (no batch dimensions)."""
        ta, tb = bool(o.attrs.get("transpose_x")), bool(o.attrs.get("transpose_y"))
        if set(o.attrs) - {"transpose_x", "transpose_y"} or len(o.inputs) != 2 or \
                any(x.__class__ is not str for x in o.inputs):
            raise _Unfit
        (ra, da, sa), (rb, db, sb) = (self._value(blk, x) for x in o.inputs)
        dt, shape = self._check(blk.var(o.outputs[0]))
        if dt not in ("float32", "float64") or da != dt or db != dt or len(sa) != 2 or \
                len(sb) != 2 or "int" in (ra.place, rb.place):
            raise _Unfit
        m, k = sa[::-1] if ta else sa
        k2, n = sb[::-1] if tb else sb
        if k != k2 or tuple(shape) != (m, n) or m * k * n > MAX_MATMUL:
            raise _Unfit
        out = self._buffer(dt, shape)
        self.place[o.outputs[0]] = (out, dt, tuple(shape))
        return MatmulStep(dt, m, k, n, out.index, ra, rb, ta, tb)

    def plan(self) -> WhilePlan:
        op, cblk, bblk, out = self.op, self.cblk, self.bblk, self.out
        n = len(bblk.params)
        if len(op.outputs) != n or len(cblk.params) != n or len(cblk.results) != 1 or \
                len(op.inputs) != n or len(bblk.results) != n:
            raise _Unfit  # values saved per iteration (a backward pass), or unusual
        for k in range(n):  # the carried values, made from the loop's inputs
            dt, shape = self._check(bblk.var(bblk.params[k]))
            for other in (cblk.var(cblk.params[k]), self.block.var(op.outputs[k])):
                if self._check(other) != (dt, shape):
                    raise _Unfit
            # (8-byte aligned in the caller's state buffer)
            size = max(1, math.prod(shape))
            out.carried.append(Carried(dt, shape, size, out.state_bytes,
                                       self._init(k, dt, shape)))
            out.state_bytes += -(-np.dtype(dt).itemsize * size // 8) * 8
        for k in range(n):
            self.place[bblk.params[k]] = self.place[cblk.params[k]] = \
                (Ref("state", k), out.carried[k].dtype, out.carried[k].shape)
        out.cond_steps = [self._op(cblk, o) for o in cblk.ops]
        cond = cblk.results[0]
        if cond.__class__ is not str:
            raise _Unfit
        out.cond, _, cshape = self._value(cblk, cond)
        if math.prod(cshape) != 1:
            raise _Unfit
        out.body_steps = [self._op(bblk, o) for o in bblk.ops]
        out.copies = self._next()
        for k, name in enumerate(op.outputs):
            if name in self.g.reads_in or name in self.g.fetch:
                dt, shape = self._check(self.block.var(name))
                out.outputs.append(LoopOutput(name, dt, shape, k))
        out.name = f"d2s_loop_{next(_ids)}"
        return out

    def _init(self, k, dt, shape):
        """The first value of carried value `k`: a `Ref` to an array argument, or a literal."""
        c = self.counter
        first = self.op.inputs[k]
        if c is not None and c.slot == k and c.start is not None:
            first = c.start.inputs[0]
        if first.__class__ is str:
            ref, xdt, xshape = self._value(self.block, first)
            if (xdt, xshape) != (dt, shape):
                raise _Unfit
            return ref
        if not isinstance(first, (bool, int, float)):
            raise _Unfit
        _check_literal(first, dt)
        return first

    def _next(self) -> list:
        """The copies making the carried values of the next iteration: a result that is a
        carried value is copied aside first (another may overwrite it)."""
        bblk = self.bblk
        first, last = [], []
        for k, r in enumerate(bblk.results):
            dt, shape = self._check(bblk.var(bblk.params[k]))
            m = max(1, math.prod(shape))
            state = Ref("state", k)
            if r.__class__ is not str:
                _check_literal(r, dt)
                first.append(Copy(state, r, dt, m))
                continue
            ref, rdt, rshape = self._value(bblk, r)
            if (rdt, rshape) != (dt, shape):
                raise _Unfit
            if ref == state:
                continue
            if ref.place == "state":
                aside = self._buffer(dt, shape)
                first.append(Copy(aside, ref, dt, m))
                last.append(Copy(state, aside, dt, m))
            else:
                last.append(Copy(state, ref, dt, m))
        return first + last


class _Unfit(Exception):
    """The loop does not fit what `native_loops.py` writes (the Python loop runs)."""


def _broadcast(xshape, shape) -> int:
    """The element count of an operand of `xshape` read at element j of a result of `shape`:
    the same elements, one element, or (trailing dimensions) read modulo its size."""
    m = math.prod(xshape)
    if m == 1:
        return m
    core = tuple(xshape)
    while core and core[0] == 1:
        core = core[1:]
    if len(core) > len(shape) or tuple(shape[len(shape) - len(core):]) != core:
        raise _Unfit
    return m


def _check_literal(x, dt) -> None:
    """A Python number written into a value of dtype `dt`: an integer one must fit it."""
    if dt in ("float32", "float64", "bool"):
        return
    if isinstance(x, float) or not (np.iinfo(dt).min <= x <= np.iinfo(dt).max):
        raise _Unfit


def _operand_dtypes(kind, dt, operands, dts) -> list:
    """The dtype each operand of op `kind` (result dtype `dt`) is read as (a literal, where
    `dts` has None: that of the op's tensors), or `_Unfit` when the C cannot compute it."""
    tensors = {d for d in dts if d is not None}
    if kind in COMPARE or kind in LOGICAL:
        if dt != "bool" or len(tensors) != 1:
            raise _Unfit
        (written,) = tensors
        if kind in LOGICAL and written != "bool":
            raise _Unfit
        want = 1 if kind == "logical_not" else 2
    else:
        if tensors != {dt}:
            raise _Unfit  # (no dtype promotion inside the loop)
        written, want = dt, _arity(kind, dt)
    if len(operands) != want:
        raise _Unfit
    for x, d in zip(operands, dts, strict=True):
        if d is None:
            _check_literal(x, written)
    return [written if d is None else d for d in dts]


def _arity(kind, dt) -> int:
    """The operands elementwise op `kind` takes on values of dtype `dt` (`_Unfit`: none)."""
    if dt in ("float32", "float64") and kind in FLOAT_OPS:
        return 1 if kind in C_UNARY else 2
    if CTYPES[dt] in UNSIGNED and (kind in INT_OPS or kind in ("maximum", "minimum")):
        return 2
    if CTYPES[dt] in UNSIGNED and kind == "neg":
        return 1
    raise _Unfit


def plan(g, op, block) -> WhilePlan | None:
    """The `WhilePlan` of `while` op `op` of `block` (`g`: the program's code generator), or
    None when it does not fit (see the module doc)."""
    try:
        return _Planner(g, op, block).plan()
    except _Unfit:
        return None


def caller(holder, plan, stats: dict, error_mask, contiguous=()):
    """`run(*arrays, *ints)`: the loop's outputs (a tuple) computed by its C function, or
    None when that is not ready, an argument is not the array the program declares, another
    thread is running it, or the C raised a floating-point flag NumPy would report (the
    Python loop runs instead).

    The C function reads and writes buffers made once (their addresses are its argument):
    copying the few elements in and out costs less than handing `ctypes` each array. `run`
    is generated for the loop's arguments, as its overhead is most of the call. `stats`:
    the counts of native and NumPy calls to add to; `error_mask()`: the flag bits NumPy
    would report (`native_build.py`); `contiguous`: the indices of the arrays that must come
    C-contiguous (a mean reads them: NumPy sums another layout in another order)."""
    inputs = [np.empty(shape, dt) for _, dt, shape in plan.arrays]
    outputs = [np.empty(shape, dt) for _, dt, shape in plan.outputs]
    state = np.zeros(max(8, plan.state_bytes), np.uint8)
    ints = np.zeros(len(plan.ints) + 1, np.int64)  # (the last: resume a paused loop)
    buffers = [state, ints] + inputs + outputs
    pointers = (ctypes.c_void_p * len(buffers))(
        *[b.__array_interface__["data"][0] for b in buffers])
    function = []

    def starting(p):
        """The C function's first call, once it is ready (-1 until then)."""
        fn = holder.fn
        if fn is None:
            return -1
        fn.argtypes = None  # (the one argument is a ctypes array: passed as its address)
        fn.restype = ctypes.c_int
        function[0] = fn
        return fn(p)

    function.append(starting)
    lock = threading.Lock()
    ns = {"ndarray": np.ndarray, "F": function, "P": pointers, "ints": ints,
          "acquire": lock.acquire, "release": lock.release, "stats": stats,
          "mask": error_mask, "PAUSED": PAUSED,
          "buffers": buffers}  # (kept alive with `run`: the C code holds their addresses)
    names = [f"a{k}" for k in range(len(inputs))] + [f"n{k}" for k in range(len(plan.ints))]
    lines = [f"def run({', '.join(names)}):"]
    for k, b in enumerate(inputs):
        ns[f"b{k}"], ns[f"D{k}"] = b, b.dtype
        lines.append(f"    if a{k}.__class__ is not ndarray or a{k}.dtype is not D{k} or "
                     f"a{k}.shape != {b.shape!r}: return None")
        if k in contiguous:
            lines.append(f"    if not a{k}.flags.c_contiguous: return None")
    lines += ["    if not acquire(False): return None", "    try:"]
    lines += [f"        b{k}[...] = a{k}" for k in range(len(inputs))]
    lines += [f"        ints[{k}] = n{k}" for k in range(len(plan.ints))]
    lines += ["        flags = F[0](P)",
              "        while flags >= PAUSED:  # (Python sees Ctrl-C between the calls)",
              f"            ints[{len(plan.ints)}] = 1",
              "            flags = (flags - PAUSED) | F[0](P)",
              "        if flags and (flags < 0 or flags & mask()):",
              "            stats['numpy_calls'] += 1",
              "            return None",
              "        stats['native_calls'] += 1"]
    for k, b in enumerate(outputs):
        ns[f"o{k}"] = b
    lines.append("        return (" + "".join(f"o{k}.copy(), " for k in range(len(outputs)))
                 + ")")
    lines += ["    finally:", "        release()"]
    exec(compile("\n".join(lines) + "\n", f"<d2s native loop {plan.name}>", "exec"), ns)  # noqa: S102
    return ns["run"]


def _exact(g, ops, native_build) -> bool:
    """Whether the C code of `ops` (a loop and the ops before it) computes NumPy's bits (only
    + - * /, sqrt, max, min..., comparisons and logic, means summed as NumPy sums, `if`s of
    those): then it may be built in the background while the Python code runs, else it is
    built before the first call (`native_build`'s determinism rule)."""
    exact = native_build.SAME_BITS_AS_NUMPY | set(COMPARE) | set(LOGICAL) | {"mean"}
    return all(_all_exact(g, o, exact) for o in ops)


def _all_exact(g, op, exact) -> bool:
    if op.type not in ("while", "cond"):
        return op.type in exact or id(op) in g.replaced
    return all(_all_exact(g, o, exact) for i in op.blocks for o in g.program.blocks[i].ops)


def native_device() -> bool:
    """Whether loops may run as native code on the device in force: C on NumPy, one CUDA
    kernel on CuPy (`cuda_loops.py`)."""
    return backend.XP is np or cuda_loops.enabled()


def emit_while(g, op, block, indent: str) -> None:
    """A `while` op as one call of its C function (its CUDA kernel on CuPy) where it fits
    (see the module doc), with the Python loop (`codegen_loops.emit_while`) as the fallback;
    else the Python loop."""
    planned = plan(g, op, block) if native_device() else None
    inside = indent + "    " if emit_call(g, op, block, indent, planned, [op]) else indent
    codegen_loops.emit_while(g, op, block, inside)


def emit_call(g, op, block, indent: str, planned, ops) -> bool:
    """The call of the C function of `planned` (the `WhilePlan` of `while` op `op` and the
    ops before it in `ops`; None: no plan), its results assigned and the other values `ops`
    make set to None, then `else:`: True. False (nothing emitted) when there is no C
    function. The caller writes the fallback under the `else:`."""
    run = _runner(g, planned, ops) if planned is not None else None
    if run is None:
        return False
    entry = ("op", op, block)
    fn = g.const(run, "NL")
    args = [expr for expr, _, _ in planned.arrays] + planned.ints
    g.emit(indent, f"r_loop = {fn}({', '.join(args)})", entry)
    g.emit(indent, "if r_loop is not None:", entry)
    written = [o.name for o in planned.outputs]
    if written:
        g.emit(indent + "    ", f"{', '.join(g.ident(x) for x in written)}, = r_loop", entry)
    counter = g.counters.get(id(op))
    kept = op.outputs[counter.slot] if counter is not None and not counter.read_after else None
    made = [x for o in ops for x in o.outputs]
    unread = list(dict.fromkeys(g.ident(x) for x in made
                                if x not in written and x not in g.virtual and x != kept))
    if unread:  # (assigned as the Python code assigns them, for the `del`s after it; the
        # counter the Python loop keeps as an int is never assigned)
        g.emit(indent + "    ", f"{' = '.join(unread)} = None", entry)
    if not written and not unread:  # (a loop carrying only its index: nothing to assign)
        g.emit(indent + "    ", "pass", entry)
    g.emit(indent, "else:", entry)
    return True


def _runner(g, planned, ops):
    """The function running `planned` natively (see `caller`, `cuda_loops.caller`), or None:
    native code off, no C compiler or its build failed."""
    # (imported here: the compiler machinery, subprocess and ctypes, which only a program
    # with such a loop needs; its counts are the fused runs', `native_build.stats`)
    from . import native_build
    if backend.XP is not np:
        return cuda_loops.caller(planned, native_build._stats)
    found = native_loops_emit.emit(planned)
    how = native_build.mode()
    holder = native_build.holder_of(found, how, _exact(g, ops, native_build)) if (
        how is not None) else None
    if holder is None:
        return None
    return caller(holder, found, native_build._stats, native_build.error_mask,
                  planned.contiguous)
