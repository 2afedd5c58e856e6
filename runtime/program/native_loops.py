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
cos come from the C library (a few units in the last place from NumPy's).

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
from . import codegen_loops
from .native_emit import C_BINARY, C_UNARY, _const

MAX_ELEMENTS = 4096  # per value: the buffers live on the C stack
MAX_BYTES = 1 << 18  # all buffers together
# Iterations per C call: between calls the Python caller sees Ctrl-C (a loop that never
# ends stays interruptible); the call after resumes from the carried values.
TRIPS_PER_CALL = 1 << 20
PAUSED = 16  # returned (with the flags) when the loop stopped after TRIPS_PER_CALL

CTYPES = {"float32": "float", "float64": "double", "int32": "int32_t", "int64": "int64_t",
          "bool": "unsigned char"}
_UNSIGNED = {"int32_t": "uint32_t", "int64_t": "uint64_t"}
FLOAT_OPS = set(C_UNARY) | set(C_BINARY)
INT_OPS = {"add": "+", "subtract": "-", "multiply": "*"}
INT_UNARY = {"neg", "maximum", "minimum"}
COMPARE = codegen_loops.SYMBOL
LOGICAL = {"logical_and": "({0} && {1})", "logical_or": "({0} || {1})",
           "logical_not": "(!{0})"}

_ids = itertools.count()


class LoopPlan:
    """The C function of one `while` op: its `source` and `name`, the Python expressions of
    its array arguments (`arrays`: (expr, dtype, shape)) and int arguments (`ints`), the
    loop outputs it writes (`outputs`: (name, dtype, shape)) and the bytes its carried
    values take (`state_bytes`: the caller keeps them, so that a call can resume)."""

    def __init__(self, name, source, arrays, ints, outputs, state_bytes):
        self.name = name
        self.source = source
        self.arrays = arrays
        self.ints = ints
        self.outputs = outputs
        self.state_bytes = state_bytes


def _shape(var) -> tuple:
    return tuple(var._static_shape)


class _Planner:
    """Walks a `while` op's blocks and writes its C, or gives up (`_Unfit`)."""

    def __init__(self, g, op, block):
        self.g, self.op, self.block = g, op, block
        prog = g.program
        self.cblk, self.bblk = (prog.blocks[i] for i in op.blocks)
        self.counter = g.counters.get(id(op))
        self.place: dict = {}  # name -> (C array, dtype name, shape)
        self.arrays: list = []  # (python expr, dtype, shape)
        self.ints: list = []  # python exprs of int64 arguments
        self.decls: list = []
        self.nbytes = 0
        self.state_bytes = 0
        self.tmp = itertools.count()

    # ---- values -------------------------------------------------------------------------
    def _value(self, blk, name) -> tuple:
        """(C array, dtype, shape) of `name` read in `blk`: a buffer made in the loop, else an
        argument (an array, or for a loop bound kept as a Python int, an int64)."""
        if name in self.place:
            return self.place[name]
        c = self.counter
        if c is not None and c.bound_maker is not None and name == c.bound:
            self.ints.append(f"m_{self.g.ident(name)}")
            place = (f"n{len(self.ints) - 1}", "int64", ())
        else:
            if name in self.g.virtual:
                raise _Unfit
            var = blk.var(name)
            dt, shape = self._check(var)
            self.arrays.append((self.g.ident(name), dt, shape))
            place = (f"a{len(self.arrays) - 1}", dt, shape)
        self.place[name] = place
        return place

    def _check(self, var) -> tuple:
        if var.kind != "tensor" or var.dtype.name not in CTYPES:
            raise _Unfit
        shape = _shape(var)
        if -1 in shape or math.prod(shape) > MAX_ELEMENTS:
            raise _Unfit
        return var.dtype.name, shape

    def _buffer(self, dt, shape) -> str:
        name = f"b{next(self.tmp)}"
        self.nbytes += np.dtype(dt).itemsize * max(1, math.prod(shape))
        if self.nbytes > MAX_BYTES:
            raise _Unfit
        self.decls.append(f"    {CTYPES[dt]} {name}[{max(1, math.prod(shape))}];")
        return name

    # ---- ops ----------------------------------------------------------------------------
    def _op(self, blk, o) -> list:
        """The C lines computing op `o` of `blk` into a new buffer."""
        if o.blocks or o.attrs or len(o.outputs) != 1 or \
                any(isinstance(x, list) for x in o.inputs):
            raise _Unfit
        dt, shape = self._check(blk.var(o.outputs[0]))
        n = math.prod(shape)
        args, dts = [], []
        for x in o.inputs:
            if x.__class__ is str:
                arr, xdt, xshape = self._value(blk, x)
                args.append(f"{arr}{_index(xshape, shape)}")
                dts.append(xdt)
            elif isinstance(x, (bool, int, float)):
                args.append(x)
                dts.append(None)
            else:
                raise _Unfit
        expr = _expression(o.type, dt, args, dts)
        out = self._buffer(dt, shape)
        self.place[o.outputs[0]] = (out, dt, shape)
        return [f"        for (int64_t j = 0; j < {n}; j++) {out}[j] = {expr};"]

    def plan(self) -> LoopPlan:
        op, cblk, bblk = self.op, self.cblk, self.bblk
        n = len(bblk.params)
        if len(op.outputs) != n or len(cblk.params) != n or len(cblk.results) != 1 or \
                len(op.inputs) != n or len(bblk.results) != n:
            raise _Unfit  # values saved per iteration (a backward pass), or unusual
        lines, states = [], []
        for k in range(n):  # the carried values, in buffers made from the loop's inputs
            dt, shape = self._check(bblk.var(bblk.params[k]))
            for other in (cblk.var(cblk.params[k]), self.block.var(op.outputs[k])):
                if self._check(other) != (dt, shape):
                    raise _Unfit
            s = f"s{k}"  # (8-byte aligned in the caller's state buffer)
            self.decls.append(f"    {CTYPES[dt]} *restrict {s} = ({CTYPES[dt]} *)"
                              f"(p[0] + {self.state_bytes});")
            self.state_bytes += -(-np.dtype(dt).itemsize * max(1, math.prod(shape)) // 8) * 8
            states.append(s)
            lines += self._init(k, s, dt, shape)
        for k in range(n):
            self.place[bblk.params[k]] = self.place[cblk.params[k]] = \
                (states[k], *self._check(bblk.var(bblk.params[k])))
        lines.append("    for (;;) {")
        for o in cblk.ops:
            lines += self._op(cblk, o)
        cond = cblk.results[0]
        if cond.__class__ is not str:
            raise _Unfit
        arr, _, cshape = self._value(cblk, cond)
        if math.prod(cshape) != 1:
            raise _Unfit
        lines.append(f"        if (!{arr}[0]) break;")
        for o in bblk.ops:
            lines += self._op(bblk, o)
        lines += self._next(states)
        lines.append(f"        if (++trips == {TRIPS_PER_CALL}) return {PAUSED} | d2s_flags();")
        lines.append("    }")
        outputs = []
        for k, out in enumerate(op.outputs):
            if out in self.g.reads_in or out in self.g.fetch:
                dt, shape = self._check(self.block.var(out))
                outputs.append((out, dt, shape))
                m = math.prod(shape)
                lines.append(f"    memcpy(o{len(outputs) - 1}, {states[k]}, {m} * "
                             f"sizeof({CTYPES[dt]}));")
        name = f"d2s_loop_{next(_ids)}"
        return LoopPlan(name, _source(name, self, outputs, lines), self.arrays, self.ints,
                        outputs, self.state_bytes)

    def _init(self, k, s, dt, shape) -> list:
        c, m = self.counter, max(1, math.prod(shape))
        first = self.op.inputs[k]
        if c is not None and c.slot == k and c.start is not None:
            first = c.start.inputs[0]
        if first.__class__ is str:
            arr, xdt, xshape = self._value(self.block, first)
            if (xdt, xshape) != (dt, shape):
                raise _Unfit
            return [f"    if (!resume) memcpy({s}, {arr}, {m} * sizeof({CTYPES[dt]}));"]
        if not isinstance(first, (bool, int, float)):
            raise _Unfit
        fill = f"for (int64_t j = 0; j < {m}; j++) {s}[j] = {_literal(first, dt)};"
        return [f"    if (!resume) {fill}"]

    def _next(self, states) -> list:
        """The carried values of the next iteration: a result that is a carried value is
        copied aside first (another may overwrite it)."""
        bblk = self.bblk
        first, last = [], []
        for k, r in enumerate(bblk.results):
            dt, shape = self._check(bblk.var(bblk.params[k]))
            m = max(1, math.prod(shape))
            if r.__class__ is not str:
                first.append(f"        for (int64_t j = 0; j < {m}; j++) {states[k]}[j] = "
                             f"{_literal(r, dt)};")
                continue
            arr, rdt, rshape = self._value(bblk, r)
            if (rdt, rshape) != (dt, shape):
                raise _Unfit
            if arr == states[k]:
                continue
            copy = f"sizeof({CTYPES[dt]}) * {m}"
            if arr in states:
                aside = self._buffer(dt, shape)
                first.append(f"        memcpy({aside}, {arr}, {copy});")
                last.append(f"        memcpy({states[k]}, {aside}, {copy});")
            else:
                last.append(f"        memcpy({states[k]}, {arr}, {copy});")
        return first + last


class _Unfit(Exception):
    """The loop does not fit what `native_loops.py` writes (the Python loop runs)."""


def _index(xshape, shape) -> str:
    """How an operand of `xshape` is read at element j of a result of `shape`: the same
    element, its only element, or (trailing dimensions) element j modulo its size."""
    m, n = math.prod(xshape), math.prod(shape)
    if m == 1:
        return "[0]"
    core = tuple(xshape)
    while core and core[0] == 1:
        core = core[1:]
    if len(core) > len(shape) or tuple(shape[len(shape) - len(core):]) != core:
        raise _Unfit
    return "[j]" if m == n else f"[j % {m}]"


def _literal(x, dt) -> str:
    if dt in ("float32", "float64"):
        return _const(float(x), CTYPES[dt])
    if dt == "bool":
        return "1" if x else "0"
    if isinstance(x, float) or not (np.iinfo(dt).min <= x <= np.iinfo(dt).max):
        raise _Unfit
    return f"(({CTYPES[dt]}){int(x)}LL)"


def _expression(kind, dt, args, dts) -> str:
    """C for one element of op `kind` (result dtype `dt`) of operands `args` (C text, or a
    Python number where `dts` has None)."""
    tensors = {d for d in dts if d is not None}
    if kind in COMPARE or kind in LOGICAL:
        if dt != "bool" or len(tensors) != 1:
            raise _Unfit
        (odt,) = tensors
        if kind in LOGICAL and odt != "bool":
            raise _Unfit
        text = [a if d is not None else _literal(a, odt) for a, d in zip(args, dts)]
        if kind in LOGICAL:
            return LOGICAL[kind].format(*text) if len(text) == (1 if kind == "logical_not"
                                                                 else 2) else _bad()
        return f"({text[0]} {COMPARE[kind]} {text[1]})" if len(text) == 2 else _bad()
    if tensors != {dt}:
        raise _Unfit  # (no dtype promotion inside the loop)
    text = [a if d is not None else _literal(a, dt) for a, d in zip(args, dts)]
    T = CTYPES[dt]
    if dt in ("float32", "float64") and kind in FLOAT_OPS:
        table = C_UNARY if kind in C_UNARY else C_BINARY
        want = 1 if table is C_UNARY else 2
        if len(text) != want:
            raise _Unfit
        expr = table[kind].format(*text, T=T, f="f" if T == "float" else "", F="f")
        # (each value has its own C type here: the max/min helpers are named by it)
        return expr.replace("d2s_max(", f"d2s_max_{T}(").replace("d2s_min(", f"d2s_min_{T}(")
    if T in _UNSIGNED and len(text) == 2 and kind in INT_OPS:
        U = _UNSIGNED[T]  # wraps around as NumPy's integer arithmetic does
        return f"(({T})(({U}){text[0]} {INT_OPS[kind]} ({U}){text[1]}))"
    if T in _UNSIGNED and kind == "neg" and len(text) == 1:
        return f"(({T})(-({_UNSIGNED[T]}){text[0]}))"
    if T in _UNSIGNED and kind in ("maximum", "minimum") and len(text) == 2:
        sym = ">" if kind == "maximum" else "<"
        return f"({text[0]} {sym} {text[1]} ? {text[0]} : {text[1]})"
    raise _Unfit


def _bad():
    raise _Unfit


def _source(name, planner, outputs, lines) -> str:
    """The C function `int name(char **p)`: `p` holds the carried values' buffer, the int64
    buffer (the int arguments, then the flag saying the call resumes a paused loop), the
    array arguments and the outputs. It returns the floating-point flags it raised, with
    PAUSED when it stopped after TRIPS_PER_CALL iterations."""
    head = [
        "/* generated by d2s (runtime/program/native_loops.py) from one tensor loop */",
        "#include <math.h>", "#include <fenv.h>", "#include <stdint.h>", "#include <string.h>",
        "static int d2s_flags(void) {",
        "    int fl = fetestexcept(FE_ALL_EXCEPT);",
        "    return ((fl & FE_INVALID) ? 1 : 0) | ((fl & FE_DIVBYZERO) ? 2 : 0) |",
        "        ((fl & FE_OVERFLOW) ? 4 : 0) | ((fl & FE_UNDERFLOW) ? 8 : 0);",
        "}",
    ]
    for T in ("float", "double"):
        head += [f"static inline {T} d2s_{fn}_{T}({T} a, {T} b) "
                 f"{{ return (a {sym} b || a != a) ? a : b; }}"
                 for fn, sym in (("max", ">"), ("min", "<"))]
    na, ni = len(planner.arrays), len(planner.ints)
    body = [f"int {name}(char **p) {{",
            "    int64_t *restrict ints = (int64_t *)p[1];",
            f"    const int resume = (int)ints[{ni}];",
            f"    ints[{ni}] = 0;",
            "    int64_t trips = 0;"]
    for k, (_, dt, _shape) in enumerate(planner.arrays):
        T = CTYPES[dt]
        body.append(f"    const {T} *restrict a{k} = (const {T} *)p[{2 + k}];")
    for k, (_, dt, _shape) in enumerate(outputs):
        body.append(f"    {CTYPES[dt]} *restrict o{k} = ({CTYPES[dt]} *)p[{2 + na + k}];")
    body += [f"    const int64_t n{k}[1] = {{ints[{k}]}};" for k in range(ni)]
    body += planner.decls
    body.append("    feclearexcept(FE_ALL_EXCEPT);")
    body += lines
    body += ["    return d2s_flags();", "}"]
    return "\n".join(head + body) + "\n"


def plan(g, op, block) -> LoopPlan | None:
    """The `LoopPlan` of `while` op `op` of `block` (`g`: the program's code generator), or
    None when it does not fit (see the module doc)."""
    try:
        return _Planner(g, op, block).plan()
    except _Unfit:
        return None


def caller(holder, plan, stats: dict, error_mask):
    """`run(*arrays, *ints)`: the loop's outputs (a tuple) computed by its C function, or
    None when that is not ready, an argument is not the array the program declares, another
    thread is running it, or the C raised a floating-point flag NumPy would report (the
    Python loop runs instead).

    The C function reads and writes buffers made once (their addresses are its argument):
    copying the few elements in and out costs less than handing `ctypes` each array. `run`
    is generated for the loop's arguments, as its overhead is most of the call. `stats`:
    the counts of native and NumPy calls to add to; `error_mask()`: the flag bits NumPy
    would report (`native_build.py`)."""
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
          "mask": error_mask, "PAUSED": PAUSED}
    names = [f"a{k}" for k in range(len(inputs))] + [f"n{k}" for k in range(len(plan.ints))]
    lines = [f"def run({', '.join(names)}):"]
    for k, b in enumerate(inputs):
        ns[f"b{k}"], ns[f"D{k}"] = b, b.dtype
        lines.append(f"    if a{k}.__class__ is not ndarray or a{k}.dtype is not D{k} or "
                     f"a{k}.shape != {b.shape!r}: return None")
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


def _exact(g, op, native_build) -> bool:
    """Whether the loop's C code computes NumPy's bits (only + - * /, sqrt, max, min...,
    comparisons and logic): then it may be built in the background while the Python loop
    runs, else it is built before the first call (`native_build`'s determinism rule)."""
    exact = native_build.SAME_BITS_AS_NUMPY | set(COMPARE) | set(LOGICAL)
    return all(o.type in exact for i in op.blocks for o in g.program.blocks[i].ops)


def emit_while(g, op, block, indent: str) -> None:
    """A `while` op as one call of its C function where it fits (see the module doc), with
    the Python loop (`codegen_loops.emit_while`) as the fallback; else the Python loop."""
    found = plan(g, op, block) if backend.XP is np else None
    holder = None
    if found is not None:
        # (imported here: the compiler machinery, subprocess and ctypes, which only a
        # program with such a loop needs)
        from . import native_build
        how = native_build.mode()
        holder = native_build.holder_of(found, how, _exact(g, op, native_build)) if (
            how is not None) else None
    if holder is None:
        codegen_loops.emit_while(g, op, block, indent)
        return
    entry = ("op", op, block)
    # (the calls are counted with the fused runs', in the counts `native_build.stats` reports)
    fn = g.const(caller(holder, found, native_build._stats, native_build.error_mask), "NL")
    args = [expr for expr, _, _ in found.arrays] + found.ints
    g.emit(indent, f"r_loop = {fn}({', '.join(args)})", entry)
    g.emit(indent, "if r_loop is not None:", entry)
    written = [name for name, _, _ in found.outputs]
    if written:
        g.emit(indent + "    ", f"{', '.join(g.ident(x) for x in written)}, = r_loop", entry)
    counter = g.counters.get(id(op))
    kept = counter.slot if counter is not None and not counter.read_after else -1
    unread = [g.ident(x) for k, x in enumerate(op.outputs)
              if x not in written and x not in g.virtual and k != kept]
    if unread:  # (assigned as the Python loop assigns them, for the `del` after the loop;
        # the counter the Python loop keeps as an int is never assigned)
        g.emit(indent + "    ", f"{' = '.join(unread)} = None", entry)
    if not written and not unread:  # (a loop carrying only its index: nothing to assign)
        g.emit(indent + "    ", "pass", entry)
    g.emit(indent, "else:", entry)
    codegen_loops.emit_while(g, op, block, indent + "    ")
