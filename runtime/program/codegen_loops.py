"""Loop counters as Python ints in compiled `while` loops (used by `codegen.emit_while`).

A `for i in range(n)` with a tensor `n`, or `while i < n: ...; i += 1`, becomes a `while` op
whose counter is a 0-d or 1-element integer tensor: each iteration makes two NumPy calls on
it (the comparison and the increment), which on small loops cost more than the body. When
the counter is used only that way (compared with a loop-invariant integer, stepped by a
Python int), the compiled loop keeps it as a Python int instead:

    c = v_i.item(); m = v_n.item()
    while True:
        v_cond = c < m                      # was: v_cond = less(v_i, v_n)
        if not v_cond: break
        ...body...
        c = c + 1                           # was: v_i2 = add(v_i, 1, out=...)
        if c > 9223372036854775807: c -= 18446744073709551616

The results are exactly the array code's: comparisons of two signed integers are exact in
both, and the increment wraps around the counter's dtype as NumPy's integer arithmetic does.
Where the body reads the counter as a tensor, or the loop's final counter is read after it,
an array of the counter's dtype and shape is made from the int there. Loops that keep
per-iteration values for a backward pass (training programs) are left as they are.
"""
from __future__ import annotations

from .ir import Block, Op

BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
SYMBOL = {"less_than": "<", "less_equal": "<=", "greater_than": ">", "greater_equal": ">=",
          "equal": "==", "not_equal": "!="}
_SHAPES = ((), (1,))


class Counter:
    """One `while` op's counter kept as a Python int (see the module doc)."""

    def __init__(self, slot, compare, side, bound, step_op, step, bits, read_in_body,
                 read_after):
        self.slot = slot  # index among the loop's carried values
        self.compare = compare  # the cond block's comparison op
        self.side = side  # the counter's operand index in it
        self.bound = bound  # the other operand: a name defined before the loop, or an int
        self.step_op = step_op  # the body op `add(i, s)` / `subtract(i, s)`
        self.step = step
        self.bits = bits
        self.read_in_body = read_in_body  # the body reads the counter as a tensor
        self.read_after = read_after  # the loop's final counter is read after it
        self.start = None  # the op `full(<int>)` making the start, left out (`prepare`)
        self.bound_maker = None  # the op `maximum(n, 0)` making the bound, made an int there


def _int_var(block: Block, name) -> bool:
    if name.__class__ is not str:
        return False
    v = block.var(name)
    return v.kind == "tensor" and v.dtype.name in BITS and \
        tuple(v._static_shape) in _SHAPES


def _in_range(x, bits: int) -> bool:
    return x.__class__ is int and -(1 << (bits - 1)) <= x < (1 << (bits - 1))


def _only_reader(g, block: Block, name: str, op: Op) -> bool:
    """Whether `op` is the one op of `block` reading `name` (and no result yields it)."""
    return name not in block.results and not any(
        o is not op and name in g.op_uses(o) for o in block.ops)


def find(g, op: Op, block: Block):
    """The counter of `while` op `op` that can be a Python int, or None."""
    prog = g.program
    cblk, bblk = (prog.blocks[i] for i in op.blocks)
    n = len(bblk.params)
    if len(op.outputs) != n or len(cblk.results) != 1 or cblk.results[0].__class__ is not str:
        return None  # values saved per iteration (training), or an unusual condition
    res = cblk.results[0]
    compare = next((o for o in cblk.ops if res in o.outputs), None)
    if compare is None or compare.type not in SYMBOL or compare.attrs or \
            len(compare.inputs) != 2 or len(compare.outputs) != 1 or \
            any(res in g.op_uses(o) for o in cblk.ops):
        return None
    for side in (0, 1):
        q, bound = compare.inputs[side], compare.inputs[1 - side]
        if q.__class__ is not str or q not in cblk.params or not _int_var(cblk, q):
            continue
        k = cblk.params.index(q)
        bits = BITS[cblk.var(q).dtype.name]
        if not _only_reader(g, cblk, q, compare):
            continue
        if bound.__class__ is str:
            if not _int_var(cblk, bound) or bound in prog.tensors or \
                    g.defined_in.get(bound) in (cblk.idx, bblk.idx) or \
                    any(g._descends(g.defined_in.get(bound, 0), b)
                        for b in (cblk.idx, bblk.idx)):
                continue
        elif not _in_range(bound, bits):
            continue
        found = _step(g, op, bblk, k, bits)
        if found is None:
            continue
        step_op, step, read_in_body = found
        first = op.inputs[k]
        if not (_int_var(block, first) and block.var(first).dtype == cblk.var(q).dtype
                or _in_range(first, bits)):
            continue
        out = op.outputs[k]
        read_after = out in g.reads_in or out in g.fetch
        found = Counter(k, compare, side, bound, step_op, step, bits, read_in_body, read_after)
        found.start = _full_read_only_by(g, block, first, op, block, bits)
        found.bound_maker = _maximum_bound(g, block, bound, compare, cblk)
        return found
    return None


def prepare(g, block: Block) -> None:
    """Before `block` is emitted: find the counters of its `while` ops (`g.counters`), and
    leave out the ops making their starts."""
    for op in block.ops:
        if op.type == "while":
            counter = g.counters[id(op)] = find(g, op, block)
            if counter is None:
                continue
            if counter.start is not None:
                g.replaced[id(counter.start)] = []
                g.virtual.add(counter.start.outputs[0])
            maker = counter.bound_maker
            if maker is not None:  # the bound as an int, made where the op was
                parts = []
                for x in maker.inputs:
                    full = _full_read_only_by(g, block, x, maker, block,
                                              BITS[block.var(counter.bound).dtype.name])
                    if full is not None:
                        g.replaced[id(full)] = []
                        g.virtual.add(x)
                        x = full.inputs[0]
                    parts.append(f"{g.ident(x)}.item()" if x.__class__ is str else repr(x))
                g.replaced[id(maker)] = [f"m_{g.ident(counter.bound)} = max({', '.join(parts)})"]
                g.virtual.add(counter.bound)


def _only_read_by(g, name, op: Op, op_block: Block) -> bool:
    """Whether `op` (of `op_block`) is the only reader of `name` in the program."""
    return name not in g.fetch and name not in op_block.results and \
        all(b == op_block.idx for b in g.reads_in.get(name, ())) and \
        not any(o is not op and name in g.op_uses(o) for o in op_block.ops)


def _maker(block: Block, name):
    return next((o for o in block.ops if name in o.outputs), None) \
        if name.__class__ is str else None


def _full_read_only_by(g, block: Block, name, op: Op, op_block: Block, bits: int):
    """The op of `block` making `name` as `full(<int>)` when `op` is its only reader (the
    int is used instead, and the op is not emitted), or None."""
    maker = _maker(block, name)
    if maker is None or maker.type != "full" or len(maker.inputs) != 1 or \
            set(maker.attrs) != {"shape", "dtype"} or not _int_var(block, name) or \
            not _in_range(maker.inputs[0], min(bits, BITS[block.var(name).dtype.name])) or \
            not _only_read_by(g, name, op, op_block):
        return None
    return maker


def _maximum_bound(g, block: Block, bound, compare: Op, cblk: Block):
    """The op of `block` making the loop's bound as `maximum` of two integers, when the
    comparison is its only reader (a `range(n)` loop's `maximum(n, 0)`): the bound is then
    made as a Python int by `max`, where the op was. None otherwise."""
    maker = _maker(block, bound)
    if maker is None or maker.type != "maximum" or maker.attrs or len(maker.inputs) != 2 or \
            not _only_read_by(g, bound, compare, cblk):
        return None
    bits = BITS[block.var(bound).dtype.name]
    for x in maker.inputs:
        if not (_int_var(block, x) or _in_range(x, bits)):
            return None
    return maker


def _step(g, op: Op, bblk: Block, k: int, bits: int):
    """(the op stepping carried value k by a Python int, the step, whether the body reads
    the counter otherwise), or None."""
    p, r = bblk.params[k], bblk.results[k]
    if r.__class__ is not str or bblk.results.count(r) != 1 or \
            any(b != bblk.idx for b in g.reads_in.get(r, ())):
        return None
    step_op = next((o for o in bblk.ops if r in o.outputs), None)
    if step_op is None or step_op.attrs or len(step_op.outputs) != 1 or \
            any(r in g.op_uses(o) for o in bblk.ops):
        return None
    a, b = step_op.inputs if len(step_op.inputs) == 2 else (None, None)
    if step_op.type == "add" and a == p and _in_range(b, bits):
        step = b
    elif step_op.type == "add" and b == p and _in_range(a, bits):
        step = a
    elif step_op.type == "subtract" and a == p and _in_range(b, bits) and \
            _in_range(-b, bits):
        step = -b
    else:
        return None
    pv, rv = bblk.var(p), bblk.var(r)
    if not _int_var(bblk, p) or BITS[pv.dtype.name] != bits or rv.dtype != pv.dtype or \
            tuple(rv._static_shape) != tuple(pv._static_shape):
        return None
    read = p in bblk.results or any(o is not step_op and p in g.op_uses(o) for o in bblk.ops)
    return step_op, step, read


def array_of(g, var, ci: str) -> str:
    """Source making the counter's array (its dtype and shape) from the int `ci`."""
    d = g.const(var.dtype.np, "D")
    return f"asarray({ci}, {d})" if tuple(var._static_shape) == () else \
        f"asarray([{ci}], {d})"


def step_lines(counter: Counter, ci: str) -> list[str]:
    """The increment of the int `ci`, wrapping around as the dtype's arithmetic does."""
    half, full = 1 << (counter.bits - 1), 1 << counter.bits
    lines = [f"{ci} = {ci} + {counter.step}"]
    if counter.step > 0:
        lines.append(f"if {ci} > {half - 1}: {ci} -= {full}")
    elif counter.step < 0:
        lines.append(f"if {ci} < {-half}: {ci} += {full}")
    return lines


def emit_while(g, op: Op, block: Block, indent: str) -> None:
    """A `while` op as a Python `while True:` loop around its inlined cond and body blocks
    (values saved per iteration for a backward pass appended to lists), with its counter
    as a Python int where `find` allows."""
    entry = ("op", op, block)
    cblk, bblk = (g.program.blocks[i] for i in op.blocks)
    counter = g.counters.get(id(op))
    k = counter.slot if counter is not None else -1  # the carried value kept as an int

    def but_k(values):
        return [v for i, v in enumerate(values) if i != k]

    carried = [g.ident(n) for n in bblk.params]
    g.assign(indent, but_k(carried), but_k([g.arg(x) for x in op.inputs]), entry)
    if counter is not None:
        ci = f"i_{carried[k]}"
        first = op.inputs[k] if counter.start is None else counter.start.inputs[0]
        g.emit(indent, f"{ci} = {g.ident(first)}.item()" if first.__class__ is str
               else f"{ci} = {first!r}", entry)
        bound = counter.bound
        if bound.__class__ is str:
            if counter.bound_maker is None:
                g.emit(indent, f"m_{g.ident(bound)} = {g.ident(bound)}.item()", entry)
            bound = f"m_{g.ident(bound)}"
        sides = [ci, str(bound)] if counter.side == 0 else [str(bound), ci]
        sym = SYMBOL[counter.compare.type]
        g.replaced[id(counter.compare)] = [
            f"{g.ident(counter.compare.outputs[0])} = {sides[0]} {sym} {sides[1]}"]
        g.replaced[id(counter.step_op)] = step_lines(counter, ci)
        g.virtual.update((cblk.params[k], counter.step_op.outputs[0]))
        if not counter.read_in_body:
            g.virtual.add(bblk.params[k])
        if not counter.read_after:
            g.virtual.add(op.outputs[k])
    n = len(bblk.params)
    saves = [g.ident(s) for s in op.outputs[n:]]
    for s in saves:
        g.emit(indent, f"{s} = []", entry)
    g.emit(indent, "while True:", entry)
    inner = indent + "    "
    # (a condition parameter nothing reads, such as the loop's tensor, is not assigned)
    read = [i for i, p in enumerate(cblk.params) if i != k and p in g.reads_in]
    g.assign(inner, [g.ident(cblk.params[i]) for i in read], [carried[i] for i in read], entry)
    g.emit_block(cblk, inner)
    g.emit(inner, f"if not {g.arg(cblk.results[0])}:", entry)
    g.emit(inner, "    break", entry)
    for s, c in zip(saves, carried):
        g.emit(inner, f"{s}.append({c})", entry)
    if counter is not None and counter.read_in_body:
        var = bblk.var(bblk.params[k])
        g.emit(inner, f"{carried[k]} = {array_of(g, var, ci)}", entry)
    g.emit_block(bblk, inner)
    g.assign(inner, but_k(carried), but_k([g.arg(r) for r in bblk.results]), entry)
    g.assign(indent, but_k([g.ident(o) for o in op.outputs[:n]]), but_k(carried), entry)
    if counter is not None and counter.read_after:
        out = op.outputs[k]
        g.emit(indent, f"{g.ident(out)} = {array_of(g, block.var(out), ci)}",
               entry)
