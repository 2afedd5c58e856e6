"""The graph a gradient taken inside a program frees, as eager autograd frees it.

Eager `rt.grad(loss, x)` (and `backward()`) without `retain_graph` frees the recorded graph
behind `loss`: a later backward through any tensor computed from that graph raises "backward
through a graph that was already freed". A converted function that takes such a gradient
returns tensors whose graph eager code has freed; `free_graph` notes, while the program is
built, which values that graph held and in which block the gradient was taken
(`Program.freed`), and `freed_conditions` tells which of the program's results depend on one
of them, on which runs, so the converted call can leave those results as eager code does
(d2s/running.py). A gradient taken on a branch of a top-level tensor `if` frees the graph on
the runs that take that branch; one taken deeper (a nested `if`, a graph loop's body) is not
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
[[], None, None]
"""
from __future__ import annotations

from .ir import Program, block_free


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
        program.freed.setdefault(name, set()).add(block)
        todo.extend(_reads(program, op, cache))


def freed_conditions(program: Program, names: list) -> list:
    """For each of `names`: None where its graph holds no freed value, else the conditions
    `(top-level predicate name, truth)` one of which holds on the runs that free it (an empty
    list: every run)."""
    if not program.freed:
        return [None] * len(names)
    made = _producers(program)
    cache: dict = {}
    branches = _top_level_branches(program)
    out = []
    for name in names:
        blocks = _freeing_blocks(program, name, made, cache)
        conds = [branches[b] for b in blocks if b in branches]
        out.append([] if 0 in blocks else (conds or None))
    return out


def _freeing_blocks(program, name, made, cache) -> set:
    """The blocks whose gradients freed a value in the graph of `name`."""
    seen, todo, blocks = set(), [name], set()
    while todo:
        n = todo.pop()
        if n in seen or _holds_no_graph(program, n):
            continue
        seen.add(n)
        blocks |= program.freed.get(n, set())
        op = made.get(n)
        if op is not None:
            todo.extend(_reads(program, op, cache))
    return blocks


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
