"""The graph a gradient taken inside a program frees, as eager autograd frees it.

Eager `rt.grad(loss, x)` (and `backward()`) without `retain_graph` frees the recorded graph
behind `loss`: a later backward through any tensor computed from that graph raises "backward
through a graph that was already freed". A converted function that takes such a gradient
returns tensors whose graph eager code has freed; `free_graph` notes, while the program is
built, which values that graph held and in which block the gradient was taken
(`Program.freed`), and `freed_conditions` tells which of the program's results depend on one
of them, on which runs, so the converted call can leave those results as eager code does
(d2s/running.py). A tensor written in place (`x[i] = v`) after an op read it is the same
story with eager's version check: `overwrite` notes the write (`Program.overwritten`), and
the results of the ops that read the value before count as freed. A gradient taken on a
branch of a top-level tensor `if` frees the graph on the runs that take that branch; one taken deeper (a nested `if`, a graph loop's body) is not
followed: the graph stays as it is.

A value's graph is followed through values that carry a gradient (stop_gradient False): a
detached value, one built under `no_grad` and the inputs and parameters themselves (leaves)
hold no graph, in both modes. An op with sub-blocks (a tensor `if`, a graph loop) stands for
all of them: its results are computed from everything its blocks read.

>>> import runtime as rt
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [2], 'float32')
...     x.stop_gradient = False
...     y = rt.tanh(x)
...     z = x * 2
...     (g,) = rt.grad(y.sum(), x)
>>> freed_conditions(main, [y.name, z.name, g.name])
[[(None, True, None)], None, None]
"""
from __future__ import annotations

from .ir import Program, block_free, defined_under


def free_graph(program: Program, targets, block: int) -> None:
    """Note the values with a graph that `targets` (Variables of `program`) were computed
    from, themselves included, as freed by a gradient taken in block `block`."""
    made = _producers(program)
    cache: dict = {}
    todo = [t.name for t in targets]
    seen = set()
    while todo:
        name = todo.pop()
        op = made.get(name)
        if name in seen or op is None or _holds_no_graph(program, name):
            continue
        seen.add(name)
        program.freed.setdefault(name, {})[block] = None
        todo.extend(_reads(program, op, cache))


def overwrite(program: Program, name: str, block: int, writer: str | None = None) -> None:
    """The value `name` is written in place (`x[i] = v` by the op that makes `writer`,
    `rt.assign(v, output=x)`) in block `block`: the ops that read it before (other than that
    op: a setitem reads what it writes into) give no gradient, as eager's version check says.
    Resolved when the program's results are asked about (`freed_conditions`)."""
    program.overwritten.append((name, block, writer))


def freed_conditions(program: Program, names: list) -> list:
    """For each of `names`: None where its graph holds no freed value, else the list of
    `(top-level predicate name or None, truth, why)`: the value is freed on the runs where the
    predicate equals `truth` (None: every run); `why` is None for a freed graph, or
    (op type, shape, behind) for an op whose input was written in place after it read it
    (`behind`: `name` is computed from that op's result, not the result itself)."""
    freed = _with_overwrites(program)
    if not freed:
        return [None] * len(names)
    made = _producers(program)
    cache: dict = {}
    memo: dict = {}
    branches = _top_level_branches(program)
    out = []
    for name in names:
        found = _freeing_blocks(program, freed, name, made, cache, memo)
        conds = [(None, True, why) for b, why in found.items() if b == 0] + [
            (*branches[b], why) for b, why in found.items() if b in branches]
        out.append(conds or None)
    return out


def _with_overwrites(program: Program) -> dict:
    """`Program.freed` and the results of the ops that read a value before it was written in
    place (in the block nested in the other of the read and the write)."""
    if not program.overwritten:
        return program.freed
    freed = {name: dict(blocks) for name, blocks in program.freed.items()}
    written = {}
    for name, block, writer in program.overwritten:
        written.setdefault(name, []).append((block, writer))
    for b in program.blocks:
        for op in b.ops:
            if op.blocks or op.type == "getitem":  # (eager's reads a handle on the value)
                continue
            for name in set(op.input_names()) & written.keys():
                v = program.find_var(name)
                why = (op.type, tuple(v._static_shape or ()) if v is not None else (), False)
                for block, writer in written[name]:
                    where = _deeper(program, b.idx, block)
                    if where is None or writer in op.outputs:
                        continue
                    for out in op.outputs:
                        if not _holds_no_graph(program, out):
                            freed.setdefault(out, {}).setdefault(where, why)
    return freed


def _freeing_blocks(program, freed, name, made, cache, memo) -> dict:
    """block -> why, for the blocks whose gradients (or in-place writes) freed a value in the
    graph of `name` (memoised in `memo` over the names the walk meets)."""
    todo, entered = [(name, False)], set()
    while todo:
        n, done = todo.pop()
        if n in memo or (not done and n in entered):  # (a graph loop's values read each other)
            continue
        entered.add(n)
        op = made.get(n)
        reads = [] if op is None else [r for r in _computed_from(program, op, cache)
                                       if not _holds_no_graph(program, r)]
        if not done:
            todo.append((n, True))
            todo.extend((r, False) for r in reads if r not in memo)
            continue
        blocks = dict(freed.get(n, {}))
        for r in reads:
            for b, why in memo.get(r, {}).items():  # (`why[2]`: computed after that op)
                blocks.setdefault(b, why if why is None else (*why[:2], True))
        memo[n] = blocks
    return memo[name] if not _holds_no_graph(program, name) else {}


def _deeper(program: Program, a: int, b: int):
    """Of blocks `a` and `b`, the one nested in the other (None when neither is)."""
    for inner, outer in ((a, b), (b, a)):
        idx = inner
        while idx is not None:
            if idx == outer:
                return inner
            idx = program.blocks[idx].parent
    return None


def _top_level_branches(program: Program) -> dict:
    """block index -> (predicate name, truth) for the branches of top-level `cond` ops."""
    out = {}
    for op in program.global_block().ops:
        if op.type == "cond" and op.inputs[0].__class__ is str:
            for idx, truth in zip(op.blocks, (True, False), strict=True):
                out[idx] = (op.inputs[0], truth)
    return out


def _holds_no_graph(program: Program, name: str) -> bool:
    v = program.find_var(name)
    return v is None or v.stop_gradient


def _producers(program: Program) -> dict:
    """name -> the op that makes it (a loop body's parameters: the loop op)."""
    made = {}
    for b in program.blocks:
        for op in b.ops:
            for n in op.outputs:
                made[n] = op
            for sub in op.blocks:
                for n in program.blocks[sub].params:
                    made[n] = op
    return made


def _reads(program: Program, op, cache: dict) -> set:
    names = set(op.input_names())
    for sub in op.blocks:
        names |= block_free(program, sub, cache)
    return names


def _computed_from(program: Program, op, cache: dict) -> set:
    """What the results of `op` are computed from: its inputs and, for an op with blocks,
    everything the blocks read or compute (a value its branch wrote after a read)."""
    got = cache.get(("op", id(op)))
    if got is None:
        got = _reads(program, op, cache)
        for sub in op.blocks:
            got |= defined_under(program, sub)
        cache[("op", id(op))] = got
    return got


def graph_ops(program: Program, names: list) -> list:
    """For each of `names`: the ops of `program` in its graph (those it is computed from
    through values that carry a gradient), as a frozenset of (block index, op index): what a
    backward() through it frees. A tensor `if` is followed into the ops of its branches that
    compute the result asked for (both branches'), a graph loop counts as one op."""
    made = {}
    for b in program.blocks:
        for j, op in enumerate(b.ops):
            for n in op.outputs:
                made[n] = (b.idx, j)
            for sub in op.blocks:
                for n in program.blocks[sub].params:
                    made[n] = (b.idx, j)
    cache: dict = {}
    out = []
    for name in names:
        seen, todo, found = set(), [name], set()
        while todo:
            n = todo.pop()
            at = made.get(n)
            if n in seen or at is None or _holds_no_graph(program, n):
                continue
            seen.add(n)
            op = program.blocks[at[0]].ops[at[1]]
            if op.type == "cond" and n in op.outputs:  # (the branches' results for `n`)
                k = op.outputs.index(n)
                todo.extend(r for r in (program.blocks[sub].results[k] for sub in op.blocks)
                            if r.__class__ is str)
                continue
            found.add(at)
            todo.extend(_reads(program, op, cache))
        out.append(frozenset(found))
    return out
