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
branch of a top-level tensor `if` frees the graph on the runs that take that branch; one
taken deeper (a nested `if`, a graph loop's body) on the runs where that block ran (a flag
the caller has the program compute). A second gradient through a graph an earlier one in its
block (or a block around it) freed raises eager's error (`frees_again`).

A value's graph is followed through values that carry a gradient (stop_gradient False): a
detached value, one built under `no_grad` and the inputs and parameters themselves (leaves)
hold no graph, in both modes. A tensor `if`'s result is followed into the results of its
branches, a graph loop's variable into its entry value and the body's result for it (one
trip's values standing for every trip's: `value_graph`); another op with sub-blocks stands for
all of them.

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

from typing import NamedTuple

from .ir import Program, block_free, defined_under


class GradientWalk(NamedTuple):
    """A gradient taken while building (`Program.gradient_walks`, in the order taken)."""

    block: int
    position: int  # (of its first op in the block)
    names: frozenset  # what it walks (`walked`)
    origin: tuple | None  # the user's line
    frees: bool  # without retain_graph


def insert_ops(program: Program, block: int, position: int, ops: list) -> None:
    """Put `ops` into block `block` at `position`, moving the gradients noted after it."""
    program.blocks[block].ops[position:position] = ops
    program.gradient_walks = [w._replace(position=w.position + len(ops))
                              if w.block == block and w.position >= position else w
                              for w in program.gradient_walks]


def free_graph(program: Program, targets, block: int) -> None:
    """Note the values with a graph that `targets` (Variables of `program`) were computed
    from, themselves included, as freed by a gradient taken in block `block`. A loop body's
    parameter (its loop op not built yet while the body is traced) stands for the graph the
    loop carries in (`_complete` follows it once the program is whole)."""
    graph = value_graph(program)
    params = _params(program)
    for name in walk(program, graph, [t.name for t in targets]):
        if name in graph or name in params:
            program.freed.setdefault(name, {})[block] = None


def walked(program: Program, targets) -> frozenset:
    """The names holding a graph that `targets` (Variables) were computed from, themselves
    included: what a gradient through them walks (a loop body being built: up to its
    parameters)."""
    return frozenset(walk(program, value_graph(program), [t.name for t in targets]))


def frees_again(program: Program, names, block: int) -> bool:
    """Whether a gradient taken in block `block` that walks `names` (`walked`) meets a value
    that a gradient taken before it in that block, or in a block around it, freed: eager
    raises "already freed" on every run that takes it."""
    around = set()
    idx = block
    while idx is not None:
        around.add(idx)
        idx = program.blocks[idx].parent
    freed = program.freed
    return any(not around.isdisjoint(freed.get(n, ())) for n in names)


def overwrite(program: Program, name: str, block: int, writer: str | None = None) -> None:
    """The value `name` is written in place (`x[i] = v` by the op that makes `writer`,
    `rt.assign(v, output=x)`) in block `block`: the ops that read it before (other than that
    op: a setitem reads what it writes into) give no gradient, as eager's version check says.
    Resolved when the program's results are asked about (`freed_conditions`)."""
    program.overwritten.append((name, block, writer))


def freed_conditions(program: Program, names: list, ran=None, loops=None) -> list:
    """For each of `names`: None where its graph holds no freed value, else the list of
    `(top-level predicate name or None, truth, why)`: the value is freed on the runs where the
    predicate equals `truth` (None: every run); `why` is None for a freed graph, or
    (op type, shape, behind) for an op whose input was written in place after it read it
    (`behind`: `name` is computed from that op's result, not the result itself). A value
    freed in a graph loop's body, or in an `if` nested in another, is freed on the runs where
    that block ran: `ran(program, block)` gives a top-level flag for it (None where it
    cannot: the value is left as it is; `reach_values.block_ran`); for a loop body in
    `loops` (`freed_loops.follow_loop_frees`), on the runs where a loop variable it is
    computed from holds a value a trip's gradient freed."""
    freed = _with_overwrites(program)
    if not freed:
        return [None] * len(names)
    graph = value_graph(program)
    freed = _complete(program, graph, freed)
    branches = _top_level_branches(program)
    flags: dict = {}
    out = []
    for name in names:
        conds = []
        reached = None
        for b, why in _freeing_blocks(program, graph, freed, name).items():
            if b == 0 or b in branches:
                conds.append((*branches.get(b, (None, True)), why))
                continue
            if why is None and loops and b in loops:
                reached = walk(program, graph, [name]) if reached is None else reached
                holds = [flag for out, flag in loops[b].items() if out in reached]
                if holds:
                    conds.extend((flag, True, None) for flag in holds)
                    continue
            if b not in flags:
                flag = None if ran is None else ran(program, b)
                flags[b] = None if flag is None else flag.name
            if flags[b] is not None:
                conds.append((flags[b], True, why))
        out.append(conds or None)
    return out


def _with_overwrites(program: Program) -> dict:
    """`Program.freed` and the results of the ops that read a value before it was written in
    place (in the block nested in the other of the read and the write)."""
    if not program.overwritten:
        return program.freed
    freed = {name: dict(blocks) for name, blocks in program.freed.items()}
    written = {}
    entries = _loop_entries(program)
    for name, block, writer in program.overwritten:
        while name is not None:  # (a loop variable written on a trip: its entry value too)
            written.setdefault(name, []).append((block, writer))
            name = entries.get(name)
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


def _loop_entries(program: Program) -> dict:
    """A graph loop body's parameter -> the value the loop enters with (its first trip's)."""
    out = {}
    for b in program.blocks:
        for op in b.ops:
            if op.type == "while" and len(op.blocks) == 2:
                for n, x in zip(program.blocks[op.blocks[1]].params, op.inputs):
                    if x.__class__ is str:
                        out[n] = x
    return out


def _freeing_blocks(program, graph, freed, name) -> dict:
    """block -> why, for the blocks whose gradients (or in-place writes) freed a value in the
    graph of `name`."""
    blocks = dict(freed.get(name, {}))
    for n in walk(program, graph, [name]):
        if n != name:
            for b, why in freed.get(n, {}).items():  # (`why[2]`: computed after that op)
                blocks.setdefault(b, why if why is None else (*why[:2], True))
    return blocks if not _holds_no_graph(program, name) else {}


def _complete(program, graph, freed) -> dict:
    """`freed` with, for a loop body's parameter freed there, the graph its loop carries
    into it (traced before the loop op was built)."""
    params = {n for n in _params(program) if n in freed and n in graph}
    if not params:
        return freed
    freed = {name: dict(blocks) for name, blocks in freed.items()}
    for p in params:
        for n in walk(program, graph, [p]):
            if n in graph:
                for b, why in freed[p].items():
                    freed.setdefault(n, {}).setdefault(b, why)
    return freed


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


def _params(program: Program) -> set:
    return {n for b in program.blocks for n in b.params}


def value_graph(program: Program) -> dict:
    """name -> (the names it is computed from, the (block index, op index) of the op that
    computes it, or None for a value a control-flow op only passes on). A `cond` op's result
    is its branches' results; a `while` op's result, and its blocks' parameter, is its entry
    value and the body's result (one trip's values stand for every trip's), so each loop
    variable is followed on its own path through the body. Another op with blocks computes
    its results from everything its blocks read or compute. What `detach()` made is a leaf,
    as eagerly, also where user code then sets its stop_gradient False."""
    graph: dict = {}
    cache: dict = {}
    for b in program.blocks:
        for j, op in enumerate(b.ops):
            per_output = _passed_on(program, op)
            whole = None
            for k, n in enumerate(op.outputs):
                v = b.vars.get(n)
                if v is not None and v.detached:  # (a leaf)
                    continue
                if k < len(per_output):
                    graph[n] = (per_output[k], None)
                    continue
                if whole is None:
                    whole = list(_computed_from(program, op, cache))
                graph[n] = (whole, (b.idx, j))
            if op.type == "while" and per_output:
                for sub in op.blocks:
                    for k, n in enumerate(program.blocks[sub].params[:len(per_output)]):
                        graph[n] = (per_output[k], None)
    return graph


def _passed_on(program: Program, op) -> list:
    """For a `cond` or `while` op: per result, the names it is one of (see `value_graph`)."""
    if op.type == "cond":
        results = [program.blocks[sub].results for sub in op.blocks]
        return [[r[k] for r in results if k < len(r) and r[k].__class__ is str]
                for k in range(min(map(len, results), default=0))]
    if op.type == "while" and len(op.blocks) == 2:
        body = program.blocks[op.blocks[1]]
        n = min(len(body.params), len(body.results), len(op.inputs))
        return [[x for x in (op.inputs[k], body.results[k]) if x.__class__ is str]
                for k in range(n)]
    return []


def walk(program: Program, graph: dict, names, stop=()) -> set:
    """The names holding a graph that `names` are computed from, themselves included, in
    `graph` (`value_graph`); names in `stop` are not followed further."""
    seen: set = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in seen or _holds_no_graph(program, n):
            continue
        seen.add(n)
        got = graph.get(n)
        if got is not None and n not in stop:
            todo.extend(got[0])
    return seen


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
    compute the result asked for (both branches'), a graph loop into the ops of its body that
    compute the loop variable asked for (`value_graph`)."""
    graph = value_graph(program)
    return [frozenset(graph[n][1] for n in walk(program, graph, [name])
                      if n in graph and graph[n][1] is not None) for name in names]
