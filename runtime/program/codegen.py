"""Compile a program into one Python function (what the executor runs).

Every value is a local variable, every kernel a closure constant, control flow is Python
`if`/`while` around the inlined sub-blocks, and a value is `del`eted right after its last use.
So running an op costs about as much as calling its kernel. Each generated line is mapped back
to the op it runs, which is how the executor names the failing op and its user source line.
"""
from __future__ import annotations

import functools
import itertools
import linecache
import math
import re
import weakref

import numpy as _np

from .. import backend
from ..ops.linalg import matmul_rows
from ..ops.registry import OPS
from . import (
    codegen_direct,
    codegen_loops,
    fused_function,
    fusion,
    fusion_gpu,
    inplace,
    native_loops,
    native_region,
)
from .ir import Block, Literal, Op, Program, block_free

_ids = itertools.count()


class Compiled:
    """A compiled program: `fn(feed) -> tuple of fetched values`, plus its line map.
    `body(*arrays)` runs it on the arrays of the feeds named `body_feeds` (in that order),
    without checking them: for callers that checked shapes and dtypes themselves."""

    def __init__(self, fn, filename, line_map, source, idents, version, fetch):
        self.fn = fn
        self.filename = filename
        self.line_map = line_map  # line number -> ("op", op, block) or ("feed", name)
        self.source = source
        self.idents = idents  # variable name -> local identifier in the generated code
        self.version = version
        self.fetch = fetch
        self.body = None
        self.body_feeds: tuple = ()

    def ready(self) -> Compiled:
        """Itself (what `interpreter.FirstRun.ready` gives once it has compiled)."""
        return self


class _Gen:
    def __init__(self, program: Program, fetch: tuple):
        self.program = program
        self.fetch = fetch
        self.lines: list[str] = []
        self.line_map: dict = {}
        self.consts: dict = {}  # closure name -> object
        self._const_names: dict = {}  # (what `const` keys an object by) -> its name
        self.idents: dict = {}
        self._used_idents: set = set()
        self.tensor_ids: dict = {}  # persistable name -> closure name of its Tensor
        self.outlined: list = []  # (function name, block, parameters) still to emit
        self.dying = ()  # the values whose last use is the op being emitted
        self.replaced: dict = {}  # id(op) -> the lines emitted instead (`codegen_loops.py`)
        self.virtual: set = set()  # names never assigned (loop counters kept as ints)
        self.counters: dict = {}  # id(while op) -> its Counter or None (`codegen_loops.py`)
        how = fusion.mode()  # (once per program: the blocks' search only where it can find)
        self.fusion = how if fusion.may_fuse(program, how) else None
        self._analyse()

    # ---- names ----------------------------------------------------------------------------
    def ident(self, name: str) -> str:
        i = self.idents.get(name)
        if i is None:
            base = "v_" + (name if name.isidentifier() and name.isascii() else  # (no regex)
                           re.sub(r"\W", "_", name))
            i = base
            n = 1
            while i in self._used_idents:
                i = f"{base}_{n}"
                n += 1
            self._used_idents.add(i)
            self.idents[name] = i
        return i

    def const(self, obj, prefix: str = "C") -> str:
        """The global the generated code reads `obj` by: one per object (`consts` keeps it
        alive, so its id is not reused), and one per NumPy scalar's type and bytes."""
        key = (obj.__class__, obj.tobytes(), prefix) if isinstance(obj, _np.generic) else \
            (id(obj), prefix)
        name = self._const_names.get(key)
        if name is None:
            name = self._const_names[key] = f"{prefix}{len(self.consts)}"
            self.consts[name] = obj
        return name

    def lit(self, v) -> str:
        """Source text for a literal (constants that do not round-trip become closure cells)."""
        if v is None or v.__class__ in (bool, int, str):
            return repr(v)
        if v.__class__ is float:
            return repr(v) if math.isfinite(v) else self.const(v)
        if isinstance(v, (list, tuple)):
            inner = ", ".join(self.lit(t) for t in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
        if isinstance(v, Literal):
            return self.lit(v.value)
        return self.const(v)

    def arg(self, x) -> str:
        if x.__class__ is str:
            return self.ident(x)
        if isinstance(x, list):
            return "[" + ", ".join(self.arg(t) for t in x) + "]"
        return self.lit(x)

    # ---- liveness -------------------------------------------------------------------------
    def _analyse(self):
        prog = self.program
        self.reads_in: dict = {}  # name -> set of block idx reading it
        self.free: dict = {}  # block idx -> names it (and its sub-blocks) read from outside
        for b in prog.blocks:
            for op in b.ops:
                for n in op.input_names():
                    self.reads_in.setdefault(n, set()).add(b.idx)
            for r in b.results:
                if r.__class__ is str:
                    self.reads_in.setdefault(r, set()).add(b.idx)
        for b in prog.blocks:  # a `recompute` emits its block again where it stands, so what
            for op in b.ops:  # that block reads from outside is read there too (a loop body
                if op.type == "recompute":  # recomputed in a backward loop reads values of
                    for n in self.block_free(op.blocks[0]):  # the loop around it)
                        self.reads_in.setdefault(n, set()).add(b.idx)
        self.defined_in: dict = {}
        for b in prog.blocks:
            for n in b.params:
                self.defined_in[n] = b.idx
            for op in b.ops:
                for n in op.outputs:
                    self.defined_in[n] = b.idx
        self.parent = {b.idx: b.parent for b in prog.blocks}

    def _descends(self, idx: int, ancestor: int) -> bool:
        while idx is not None:
            if idx == ancestor:
                return True
            idx = self.parent[idx]
        return False

    def block_free(self, idx: int) -> set:
        return block_free(self.program, idx, self.free)

    def op_uses(self, op: Op) -> set:
        uses = set(op.input_names())
        for sub in op.blocks:
            uses |= self.block_free(sub)
        return uses

    def deletions(self, block: Block) -> dict:
        """op index -> names to `del` after it."""
        last: dict = {}
        for j, op in enumerate(block.ops):
            for n in op.outputs:
                last.setdefault(n, j)
            for n in self.op_uses(op):
                if self.defined_in.get(n) == block.idx:
                    last[n] = j
        keep = {r for r in block.results if r.__class__ is str}
        if block.idx == 0:
            keep.update(self.fetch)
        out: dict = {}
        for n, j in last.items():
            if n in keep or any(not self._descends(r, block.idx)
                                for r in self.reads_in.get(n, ())):
                continue
            out.setdefault(j, []).append(n)
        return out

    # ---- emission -------------------------------------------------------------------------
    def emit(self, indent: str, text: str, entry=None) -> None:
        self.lines.append(indent + text)
        if entry is not None:
            self.line_map[len(self.lines)] = entry

    def emit_block(self, block: Block, indent: str) -> None:
        dels = self.deletions(block)
        start = len(self.lines)
        codegen_loops.prepare(self, block)
        fused, inside = {}, set()  # first op index -> group; outputs never materialised
        how = self.fusion
        if how is not None:
            users = self._users(block)
            for group in fusion.find_groups(block, lambda n, a, b: self._read_outside(
                    block, users, n, a, b), gpu=how == "gpu"):
                if any(id(block.ops[j]) in self.replaced for j in group.ops):
                    continue
                fused[group.ops[0]] = group
                inside.update(block.ops[j].outputs[0] for j in group.ops)
                inside.difference_update(group.outputs)
        skip = set()
        regions = native_region.find(self, block, {j for g in fused.values() for j in g.ops}) \
            if native_loops.native_device() else {}
        for j, op in enumerate(block.ops):
            group = fused.get(j)
            lines = self.replaced.get(id(op))
            region = regions.get(j)
            if region is not None:  # (a loop and ops before it as one C call)
                native_region.emit(self, block, region, indent, lambda o, ind: EMITTERS.get(
                    o.type, emit_generic)(self, o, block, ind))
                skip.update(range(j + 1, region.last + 1))
            elif j in skip:
                pass
            elif lines is not None:  # (an op on a loop counter kept as an int)
                for line in lines:
                    self.emit(indent, line, ("op", op, block))
            elif group is not None:
                self.emit_fused(group, block, indent)
                skip.update(group.ops[1:])
            else:
                self.dying = dels.get(j, ())
                EMITTERS.get(op.type, emit_generic)(self, op, block, indent)
            names = [n for n in dels.get(j, ()) if n not in inside and n not in self.virtual]
            if names:
                self.emit(indent, "del " + ", ".join(self.ident(n) for n in sorted(names)))
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def _users(self, block: Block) -> dict:
        """name -> indices of the ops of `block` that read it (also through sub-blocks)."""
        users: dict = {}
        for j, op in enumerate(block.ops):
            for n in self.op_uses(op):
                users.setdefault(n, []).append(j)
        return users

    def _read_outside(self, block: Block, users: dict, name: str, first: int,
                      last: int) -> bool:
        """Whether `name` is read anywhere but by ops first..last of `block`."""
        if any(b != block.idx for b in self.reads_in.get(name, ())):
            return True
        if name in block.results or (block.idx == 0 and name in self.fetch):
            return True
        return any(j < first or j > last for j in users.get(name, ()))

    def emit_fused(self, group, block: Block, indent: str) -> None:
        """One call computing a fused chain of elementwise ops and row reductions
        (`fusion.py`), assigning the values read after it."""
        if fusion.mode() == "gpu":
            fn = self.const(fusion_gpu.build(group, block), "FU")
        else:
            fn = self.const(fused_function.build(group, block, self.ident), "FU")
        last = block.ops[group.ops[-1]]
        args = ", ".join(self.ident(n) for n in group.inputs)
        outs = ", ".join(self.ident(n) for n in group.outputs)
        if len(group.outputs) > 1:
            outs += ","
        guard = fusion.run_time_guard(group, self.ident)
        if guard is None:
            self.emit(indent, f"{outs} = {fn}({args})", ("op", last, block))
            return
        self.emit(indent, f"if {guard}:", ("op", last, block))
        self.emit(indent + "    ", f"{outs} = {fn}({args})", ("op", last, block))
        self.emit(indent, "else:")  # (the ops unfused, as without fusion)
        for j in group.ops:
            self.dying = ()
            op = block.ops[j]
            EMITTERS.get(op.type, emit_generic)(self, op, block, indent + "    ")
        inside = [block.ops[j].outputs[0] for j in group.ops]
        inside = [self.ident(n) for n in inside if n not in group.outputs]
        if inside:
            self.emit(indent + "    ", "del " + ", ".join(inside))

    def outline(self, sub: Block, outs: list) -> str:
        """The statement that runs block `sub` as a function of its own (emitted later by
        `emit_outlined`) and assigns its results to `outs`."""
        name = f"_block_{sub.idx}"
        params = sorted({self.ident(n) for n in self.block_free(sub.idx)})
        self.outlined.append((name, sub, params))
        call = f"{name}({', '.join(params)})"
        return f"{', '.join(outs)}, = {call}" if outs else call

    def assign(self, indent: str, targets: list, values: list, entry=None) -> None:
        if targets:
            self.emit(indent, ", ".join(targets) + " = " + ", ".join(values), entry)


# When all tensor inputs share one floating dtype (and there are no attrs), these kernels
# reduce to a single array-module call: calling it directly skips the kernel's Python-level
# type promotion, which is most of the per-op cost on small tensors. An entry is the function
# name plus trailing constant arguments (cast to the input dtype). tests/static/test_codegen.py
# checks each against its registered kernel.
DIRECT_CALLS = {"add": ("add",), "subtract": ("subtract",), "multiply": ("multiply",),
                "divide": ("divide",), "neg": ("negative",), "tanh": ("tanh",),
                "exp": ("exp",), "maximum": ("maximum",), "minimum": ("minimum",),
                "matmul": ("matmul",), "relu": ("maximum", 0)}


# Integer arithmetic that the array module computes exactly as the kernel does (same dtype in
# and out; a Python int operand is weak, NEP 50): loop counters and index arithmetic.
EXACT_ON_INTEGERS = frozenset(("add", "subtract", "multiply", "maximum", "minimum", "neg"))


# Comparisons of operands that Paddle's promotion leaves as they are (two tensors of one
# dtype, or a tensor and a Python number of its kind): the kernel calls exactly this.
COMPARISONS = {"equal": "equal", "not_equal": "not_equal", "less_than": "less",
               "less_equal": "less_equal", "greater_than": "greater",
               "greater_equal": "greater_equal"}


def direct_comparison(op: Op, block: Block):
    if op.attrs or len(op.inputs) != 2:
        return None
    dtypes, literals = set(), []
    for x in op.inputs:
        if x.__class__ is str:
            v = block.var(x)
            if v.kind != "tensor":
                return None
            dtypes.add(v.dtype)
        elif x.__class__ in (int, float):
            literals.append(x)
        else:
            return None
    if len(dtypes) != 1:
        return None
    dt = next(iter(dtypes))
    if not (dt.is_floating or dt.is_integer) or \
            any(c.__class__ is float and not dt.is_floating for c in literals):
        return None
    return getattr(backend.XP, COMPARISONS[op.type]), []


def direct_call(op: Op, block: Block):
    """(array-module function, constant trailing args) that compute `op` exactly, or None."""
    if op.type in COMPARISONS:
        return direct_comparison(op, block)
    entry = DIRECT_CALLS.get(op.type)
    if entry is None or op.attrs:
        return None
    dtypes = set()
    for x in op.inputs:
        if x.__class__ is str:
            v = block.var(x)
            if v.kind != "tensor" or (op.type == "matmul" and not v._static_shape):
                return None
            dtypes.add(v.dtype)
        elif x.__class__ not in (int, float):
            return None
    if len(dtypes) != 1:
        return None
    dt = next(iter(dtypes))
    if not (dt.is_floating or (dt.is_integer and op.type in EXACT_ON_INTEGERS)):
        return None
    if block.var(op.outputs[0]).dtype != dt:
        return None
    if op.type == "matmul":
        if dt.name == "bfloat16":
            return None  # NumPy's bfloat16 matmul returns float32: the kernel casts back
        return matmul_call(*(block.var(x)._static_shape for x in op.inputs)), []
    return getattr(backend.XP, entry[0]), [dt.np.type(c) for c in entry[1:]]


def matmul_call(x_shape: tuple, y_shape: tuple):
    """The array module's matmul, or `matmul_rows` (one GEMM over all rows) where x has batch
    dims and y is a matrix."""
    if len(x_shape) > 2 and len(y_shape) == 2:
        return functools.partial(matmul_rows, backend.XP)
    return backend.XP.matmul


def reusable_input(g: _Gen, op: Op, block: Block):
    """A tensor input of an elementwise direct call whose last use is this op and whose
    array the result may overwrite (same static shape, large enough to matter), or None.
    Whether nothing else references the array is checked when the program runs
    (`inplace.py`)."""
    if op.type not in inplace.ELEMENTWISE or not g.dying:
        return None
    shape = block.var(op.outputs[0])._static_shape
    if not shape or -1 in shape or math.prod(shape) < inplace.MIN_ELEMENTS:
        return None
    for x in op.inputs:
        if x.__class__ is str and x in g.dying and x not in g.program.tensors and \
                x not in g.program.inputs and block.var(x)._static_shape == shape:
            return x
    return None


def typed_literal(g: _Gen, x, op: Op, block: Block) -> str:
    """An operand of a direct call. A Python number beside float32/float64/int64/int32
    tensors becomes a NumPy scalar of their dtype: the value NumPy's weak-scalar rule (NEP 50)
    would convert it to at every call (ints only where they fit), 0.2 us less per call."""
    if x.__class__ not in (int, float):
        return g.arg(x)
    dt = next(block.var(v).dtype for v in op.inputs if v.__class__ is str).np
    kind = dt.type  # (NumPy's `dtype.name` and `iinfo` are slow Python code)
    if kind in _FLOAT_TYPES and (x.__class__ is int or math.isfinite(x)):
        return g.const(kind(x))
    bounds = _INT_BOUNDS.get(kind)
    if bounds is not None and x.__class__ is int and bounds[0] <= x <= bounds[1]:
        return g.const(kind(x))
    return g.arg(x)


_FLOAT_TYPES = (_np.float32, _np.float64)
_INT_BOUNDS = {t: (int(_np.iinfo(t).min), int(_np.iinfo(t).max)) for t in (_np.int64, _np.int32)}


def emit_generic(g: _Gen, op: Op, block: Block, indent: str) -> None:
    fast = direct_call(op, block)
    arrays = False  # the call returns arrays, also for 0-d results
    if fast is not None:
        fn, extra = fast
        args = [typed_literal(g, x, op, block) for x in op.inputs] + [g.const(c) for c in extra]
        reuse = reusable_input(g, op, block)
        if reuse is not None:  # the result goes into the dying input's array when it can
            count = sum(x == reuse for x in op.inputs)
            args.append(f"out={g.const(inplace.owner_test(count), 'R')}({g.ident(reuse)})")
        elif codegen_direct.array_out(fn, op, block):
            args.append("out=...")
            arrays = True
        call = f"{g.const(fn, 'F')}({', '.join(args)})"
    else:
        k = g.const(OPS[op.type].kernel, "K")
        args = ["xp"] + [g.arg(x) for x in op.inputs]
        args += [f"{key}={g.lit(v)}" for key, v in op.attrs.items()]
        call = f"{k}({', '.join(args)})"
    outs = [g.ident(n) for n in op.outputs]
    entry = ("op", op, block)
    g.emit(indent, (", ".join(outs) + " = " if outs else "") + call, entry)
    for n, o in zip(op.outputs, outs):
        v = block.var(n)
        if v._static_shape == () and v.kind == "tensor" and not arrays:
            # NumPy returns 0-d results as scalars; keep them arrays like eager mode does
            g.emit(indent, f"if {o}.__class__ is not ndarray: {o} = asarray({o})", entry)


def emit_block_results(g: _Gen, block: Block, targets: list, indent: str, entry) -> None:
    g.assign(indent, targets, [g.arg(r) for r in block.results], entry)


# Python refuses code nested deeper than 100 levels of indentation; a branch nested deeper
# than this becomes a function of its own (called where it would have been inlined), so a
# chain of 100 `elif`s, which Python compiles, also compiles as a program.
MAX_INLINE_DEPTH = 40


def emit_branches(g: _Gen, op: Op, indent: str, entry, outs: list, headers: list) -> None:
    """Block i of `op` under `headers[i]` (an if / elif / else line), its results into outs."""
    outline = len(indent) // 4 >= MAX_INLINE_DEPTH
    for header, idx in zip(headers, op.blocks):
        g.emit(indent, header, entry)
        sub = g.program.blocks[idx]
        if outline:
            g.emit(indent + "    ", g.outline(sub, outs), entry)
        else:
            g.emit_block(sub, indent + "    ")
            emit_block_results(g, sub, outs, indent + "    ", entry)


def emit_outlined(g: _Gen, name: str, sub: Block, params: list) -> None:
    """The function `g.outline` promised: block `sub` run on its free values, returning its
    results (emitted beside `_run`, at the top of the nesting)."""
    g.emit("", f"def {name}({', '.join(params)}):")
    g.emit_block(sub, "    ")
    results = [g.arg(r) for r in sub.results]
    g.emit("    ", "return (" + "".join(r + ", " for r in results) + ")")


def emit_cond(g: _Gen, op: Op, block: Block, indent: str) -> None:
    outs = [g.ident(n) for n in op.outputs]
    emit_branches(g, op, indent, ("op", op, block), outs,
                  [f"if {g.arg(op.inputs[0])}:", "else:"])


def emit_switch(g: _Gen, op: Op, block: Block, indent: str) -> None:
    entry = ("op", op, block)
    outs = [g.ident(n) for n in op.outputs]
    sel = g.ident(op.outputs[0] + "@index") if op.outputs else "_switch_index"
    g.emit(indent, f"{sel} = int({g.arg(op.inputs[0])})", entry)
    headers = [f"{'if' if i == 0 else 'elif'} {sel} == {case!r}:"
               for i, case in enumerate(op.attrs["cases"])]
    emit_branches(g, op, indent, entry, outs, headers + ["else:"])


def emit_recompute(g: _Gen, op: Op, block: Block, indent: str) -> None:
    sub = g.program.blocks[op.blocks[0]]
    g.assign(indent, [g.ident(p) for p in sub.params], [g.arg(x) for x in op.inputs],
             ("op", op, block))
    g.emit_block(sub, indent)


def emit_write(g: _Gen, op: Op, block: Block, indent: str) -> None:
    target, value = op.inputs
    t = g.tensor_ids[target]
    entry = ("op", op, block)
    g.emit(indent, f"{t}._data = {g.arg(value)}", entry)
    g.emit(indent, f"{t}._version += 1", entry)
    # Later reads of the persistable (the next iteration of a loop) see the new value.
    g.emit(indent, f"{g.ident(target)} = {t}._data", entry)


def emit_linear(g: _Gen, op: Op, block: Block, indent: str) -> None:
    """`linear` as its kernel computes it, without the kernel call: the matmul, then the
    bias added in place, when x, weight and bias share one floating dtype other than
    bfloat16 (whose matmul comes back float32; the kernel casts it)."""
    x, w, b = (op.inputs + [None])[:3]
    names = [v for v in (x, w, b) if v is not None]
    if op.attrs or any(v.__class__ is not str for v in names):
        return emit_generic(g, op, block, indent)
    vs = [block.var(v) for v in names]
    dt = vs[0].dtype
    if any(v.kind != "tensor" or v.dtype != dt for v in vs) or not dt.is_floating or \
            dt.name == "bfloat16" or not vs[0]._static_shape or \
            block.var(op.outputs[0]).dtype != dt:
        return emit_generic(g, op, block, indent)
    xp = backend.XP
    out, entry = g.ident(op.outputs[0]), ("op", op, block)
    matmul = matmul_call(vs[0]._static_shape, vs[1]._static_shape)
    g.emit(indent, f"{out} = {g.const(matmul, 'F')}({g.ident(x)}, {g.ident(w)})", entry)
    if b is not None:
        g.emit(indent, f"{g.const(xp.add, 'F')}({out}, {g.ident(b)}, out={out})", entry)


EMITTERS = {"linear": emit_linear, "cond": emit_cond, "while": native_loops.emit_while,
            "switch_case": emit_switch, "recompute": emit_recompute,
            "write_persistable": emit_write,
            "full": codegen_direct.emitter(codegen_direct.full, emit_generic, False),
            "mean": codegen_direct.emitter(codegen_direct.mean, emit_generic, True)}


def compile_program(program: Program, fetch: tuple, feed_check) -> Compiled:
    """Generate, compile and return the function that runs `program` and returns `fetch`."""
    g = _Gen(program, fetch)
    g.lines.append("def _run(feed):")
    body = "    "
    used = set()
    for b in program.blocks:
        for op in b.ops:
            used.update(op.input_names())
        used.update(r for r in b.results if r.__class__ is str)
    used.update(fetch)
    gblk = program.global_block()
    fed = [n for n in program.inputs if n in used]
    g.emit(body, f"if len(feed) != {len(fed)}: _check_names(feed)")
    for name in fed:
        v = gblk.vars[name]
        i = g.ident(name)
        g.emit(body, f"{i} = feed[{name!r}]", ("feed", name))
        d = g.const(v.dtype.np, "D")
        g.emit(body, f"if {i}.__class__ is not ndarray: {i} = _to_array({i}, {name!r}, {d})",
               ("feed", name))
        if -1 in v._static_shape:
            cond = [f"{i}.dtype is not {d}", f"{i}.ndim != {len(v._static_shape)}"]
            cond += [f"{i}.shape[{k}] != {s}" for k, s in enumerate(v._static_shape)
                     if s >= 0]
        else:  # one tuple comparison: shorter to compile, faster to run
            cond = [f"{i}.dtype is not {d}", f"{i}.shape != {tuple(v._static_shape)!r}"]
        g.emit(body, f"if {' or '.join(cond)}: _check_feed({i}, {name!r})", ("feed", name))
    # the program proper takes the checked feeds as arguments: a caller that has checked
    # them itself (a d2s call of a known signature) calls `_body` directly
    params = ", ".join(g.ident(n) for n in fed)
    g.emit(body, f"return _body({params})")
    g.lines.append(f"def _body({params}):")
    for name, tensor in program.tensors.items():
        if name in gblk.vars:
            g.tensor_ids[name] = g.const(tensor, "T")
            if name in used:
                g.emit(body, f"{g.ident(name)} = {g.tensor_ids[name]}._data")
    g.emit_block(gblk, body)
    rets = [f"{g.tensor_ids[n]}._data" if n in g.tensor_ids else g.ident(n) for n in fetch]
    g.emit(body, "return (" + "".join(r + ", " for r in rets) + ")")
    while g.outlined:
        emit_outlined(g, *g.outlined.pop(0))
    xp = backend.XP
    closure = dict(g.consts)
    closure.update(xp=xp, ndarray=xp.ndarray, asarray=xp.asarray,
                   _to_array=feed_check.to_array, _check_feed=feed_check.check,
                   _check_names=feed_check.check_names)
    # The constants are the globals of the generated functions, not parameters of a
    # function making them: CPython parses and compiles a function of thousands of
    # parameters (and closure cells) in time that grows faster than its size.
    src = "\n".join(g.lines) + "\n"
    filename = f"<static program {next(_ids)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = closure
    exec(compile(src, filename, "exec"), ns)  # noqa: S102  (our own generated code)
    fn, body_fn = ns["_run"], ns["_body"]
    compiled = Compiled(fn, filename, dict(g.line_map), src, g.idents, program.version, fetch)
    compiled.body = body_fn
    compiled.body_feeds = tuple(fed)
    # the source stays readable (tracebacks, pdb) while the compiled program lives
    weakref.finalize(compiled, linecache.cache.pop, filename, None)
    return compiled
