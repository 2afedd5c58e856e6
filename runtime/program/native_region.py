"""A tensor loop and the ops before it in its block as one C call (`native_loops.py` runs the
loop alone in C; this module widens the call backwards).

A small control-flow function, a tensor `if` on a mean and a loop on what it chose,

    if rt.mean(x) > 0:          # mean, greater, cond (two elementwise branches)
        y = x * 2.0
    else:
        y = -x
    while i < 10: y = y + 1.0   # while

compiles to one call of one C function, with the Python code of those ops as its fallback:

    r_loop = NR0(v_x)
    if r_loop is not None:
        v_y, = r_loop
        v_t0 = v_t1 = None      # (the region's other values: the `del`s after it find them)
    else:
        ...the ops as the compiled program runs them without native code...

The ops before the loop that may join it (the prologue, `loop_plan.py`): elementwise ops of
the loop's set, `mean` over all elements of a float32/float64 value (summed as NumPy sums, so
with NumPy's bits: `d2s_sum_<T>` in `native_loops_emit.py`), a tensor `if` whose branches
hold only such ops, and the ops a loop counter leaves out or makes as a Python int (those
go before the call, when they read no value of the region). A value the region makes is read
only inside it (except the loop's results). The region's start is the earliest op (of the 16
before the loop) from which the whole fits; a loop with no prologue is `native_loops.py`'s.
"""
from __future__ import annotations

import numpy as np

from . import codegen_loops, native_loops
from .loop_plan import Branch, Copy, Reduce

LOOK_BACK = 16  # ops before a loop that may join it
_JOINING = {"mean", "cond"}


class Region:
    """Ops `first`..`last` of a block (the last a `while`) and the `WhilePlan` running them."""

    def __init__(self, first: int, last: int, plan):
        self.first, self.last, self.plan = first, last, plan


class _RegionPlanner(native_loops._Planner):
    """A `_Planner` that plans ops before the loop (`prologue`) first."""

    def prologue(self, ops) -> None:
        self.out.pre_steps = [s for s in (self._pre(self.block, o) for o in ops) if s]

    def _pre(self, blk, o):
        if id(o) in self.g.replaced:
            return None  # (a loop counter's start: the loop makes it)
        if o.type == "mean":
            return self._mean(blk, o)
        if o.type == "cond":
            return self._branch(blk, o)
        return self._op(blk, o)

    def _mean(self, blk, o) -> Reduce:
        if set(o.attrs) - {"axis", "keepdim"} or o.attrs.get("axis") is not None or \
                o.attrs.get("keepdim") or len(o.inputs) != 1 or o.inputs[0].__class__ is not str \
                or not _numpy_sums_pairwise():
            raise native_loops._Unfit
        ref, dt, shape = self._value(blk, o.inputs[0])
        odt, oshape = self._check(blk.var(o.outputs[0]))
        size = int(np.prod(shape))
        if dt not in ("float32", "float64") or odt != dt or oshape != () or size == 0 or \
                ref.place == "int":
            raise native_loops._Unfit
        if ref.place == "array":
            self.out.contiguous.add(ref.index)
        out = self._buffer(dt, ())
        self.place[o.outputs[0]] = (out, dt, ())
        return Reduce(dt, size, out.index, ref)

    def _branch(self, blk, o) -> Branch:
        pred = o.inputs[0] if len(o.inputs) == 1 else None
        if pred.__class__ is not str or len(o.blocks) != 2:
            raise native_loops._Unfit
        ref, dt, shape = self._value(blk, pred)
        if dt != "bool" or int(np.prod(shape)) != 1:
            raise native_loops._Unfit
        outs = []
        for name in o.outputs:
            odt, oshape = self._check(blk.var(name))
            outs.append((self._buffer(odt, oshape), odt, oshape))
        arms = [self._arm(self.g.program.blocks[i], outs) for i in o.blocks]
        for name, place in zip(o.outputs, outs, strict=True):
            self.place[name] = place
        return Branch(ref, *arms[0], *arms[1])

    def _arm(self, sub, outs) -> tuple:
        """One branch: its steps and the copies of its results into the `if`'s buffers."""
        if sub.params or len(sub.results) != len(outs):
            raise native_loops._Unfit
        steps = [self._op(sub, o) for o in sub.ops]
        copies = []
        for r, (buf, dt, shape) in zip(sub.results, outs, strict=True):
            size = max(1, int(np.prod(shape)))
            if r.__class__ is not str:
                native_loops._check_literal(r, dt)
                copies.append(Copy(buf, r, dt, size))
                continue
            ref, rdt, rshape = self._value(sub, r)
            if (rdt, rshape) != (dt, shape) or ref.place == "int":
                raise native_loops._Unfit
            copies.append(Copy(buf, ref, dt, size))
        return steps, copies


def _numpy_sums_pairwise() -> bool:
    """Whether this NumPy's `add.reduce` sums as `d2s_sum_<T>` does (checked once, on sizes
    whose orders differ from a sum in order and from a sum starting at the first element)."""
    if _PAIRWISE:
        return _PAIRWISE[0]
    rs = np.random.RandomState(7)
    ok = True
    for n in (5, 9, 64, 131, 300):
        for dt in (np.float32, np.float64):
            a = (rs.standard_normal(n) * 10.0 ** rs.uniform(-6, 6, n)).astype(dt)
            ok = ok and np.add.reduce(a) == _pairwise(a, dt)
    _PAIRWISE.append(bool(ok))
    return _PAIRWISE[0]


_PAIRWISE: list = []


def _pairwise(a, T):
    """`d2s_sum_<T>` in Python (the identity 0 plus the pairwise sum)."""
    def pw(a):
        n = len(a)
        if n < 8:
            r = T(0)
            for v in a:
                r = T(r + v)
            return r
        if n <= 128:
            r = list(a[:8])
            i = 8
            while i < n - n % 8:
                r = [T(r[k] + a[i + k]) for k in range(8)]
                i += 8
            s = T(T(T(r[0] + r[1]) + T(r[2] + r[3])) + T(T(r[4] + r[5]) + T(r[6] + r[7])))
            for v in a[i:]:
                s = T(s + v)
            return s
        h = n // 2
        h -= h % 8
        return T(pw(a[:h]) + pw(a[h:]))
    return T(T(0) + pw(a))


def find(g, block, fused: set) -> dict:
    """first op index -> `Region`, for the loops of `block` that ops before them join
    (`fused`: the indices of ops in fused runs, which stay out)."""
    regions = {}
    users = None
    for w, op in enumerate(block.ops):
        if op.type != "while" or w in fused or id(op) in g.replaced:
            continue
        first = w
        while first > 0 and w - first < LOOK_BACK and _may_join(g, block.ops[first - 1]) \
                and first - 1 not in fused:
            first -= 1
        if users is None:
            users = g._users(block)
        for start in range(first, w):
            if id(block.ops[start]) in g.replaced:
                continue
            plan = _plan(g, block, start, w, users)
            if plan is not None:
                regions[start] = Region(start, w, plan)
                break
    return regions


def _may_join(g, op) -> bool:
    if id(op) in g.replaced:
        return True  # (its lines, if any, go before the call: `_plan` checks its inputs)
    return op.type in _JOINING or (not op.blocks and op.type in _ELEMENTWISE)


_ELEMENTWISE = native_loops.FLOAT_OPS | set(native_loops.COMPARE) | \
    set(native_loops.LOGICAL) | set(native_loops.INT_OPS) | {"neg", "maximum", "minimum"}


def _plan(g, block, start, w, users):
    """The `WhilePlan` of ops start..w of `block`, or None."""
    made = [n for o in block.ops[start:w] for n in o.outputs]
    if any(g.replaced.get(id(o)) and (set(o.input_names()) & set(made)) - g.virtual
           for o in block.ops[start:w]):
        return None  # (a loop bound made from the region's values: it cannot go first)
    for n in made:  # (read only inside the region)
        if n in g.fetch or n in block.results or any(j > w for j in users.get(n, ())) or \
                any(b != block.idx and not _inside(g, b, block.ops[start:w + 1])
                    for b in g.reads_in.get(n, ())):
            return None
    planner = _RegionPlanner(g, block.ops[w], block)
    try:
        planner.prologue(block.ops[start:w])
        return planner.plan()
    except native_loops._Unfit:
        return None


def _inside(g, idx, ops) -> bool:
    """Whether block `idx` is (inside) a block of one of `ops`."""
    return any(g._descends(idx, b) for o in ops for b in o.blocks)


def emit(g, block, region, indent: str, emit_op) -> None:
    """The region's call, its results assigned, and its ops' Python code as the fallback
    (without the `del`s: `emit_block` writes those after the region). `emit_op(op, indent)`
    writes one op as the program runs it without native code."""
    ops = block.ops[region.first:region.last + 1]
    for o in ops:  # (a loop bound made as an int: the call reads it)
        for line in g.replaced.get(id(o)) or ():
            g.emit(indent, line, ("op", o, block))
    if native_loops.emit_call(g, ops[-1], block, indent, region.plan, ops):
        indent += "    "
    g.dying = ()  # (no value is overwritten in place: the `del`s come after the region)
    for o in ops:
        if id(o) in g.replaced:
            continue
        if o.type == "while":
            codegen_loops.emit_while(g, o, block, indent)
        else:
            emit_op(o, indent)
