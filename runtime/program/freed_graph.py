"""The graph a gradient taken inside a program frees, as eager autograd frees it.

Eager `rt.grad(loss, x)` (and `backward()`) without `retain_graph` frees the recorded graph
behind `loss`: a later backward through any tensor computed from that graph raises "backward
through a graph that was already freed". A converted function that takes such a gradient
returns tensors whose graph eager code has freed; `free_graph` notes, while the program is
built, which values that graph held (`Program.freed`), and `computed_from_freed` tells which
of the program's results depend on one of them, so the converted call can leave those results
as eager code does (d2s/running.py).

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
>>> computed_from_freed(main, [y.name, z.name, g.name])
[True, False, False]
"""
from __future__ import annotations

from .ir import Program, block_free


def free_graph(program: Program, targets) -> None:
    """Note the values with a graph that `targets` (Variables of `program`) were computed
    from, themselves included, as freed."""
    made = _producers(program)
    cache: dict = {}
    todo = [t.name for t in targets]
    while todo:
        name = todo.pop()
        op = made.get(name)
        if name in program.freed or op is None or _holds_no_graph(program, name):
            continue
        program.freed.add(name)
        todo.extend(_reads(program, op, cache))


def computed_from_freed(program: Program, names: list) -> list:
    """For each of `names`, whether its graph holds a value `free_graph` freed."""
    if not program.freed:
        return [False] * len(names)
    made = _producers(program)
    cache: dict = {}
    verdict: dict = {}
    return [_from_freed(program, name, made, cache, verdict) for name in names]


def _from_freed(program, name, made, cache, verdict) -> bool:
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen or _holds_no_graph(program, n):
            continue
        if n in program.freed or verdict.get(n):
            verdict[name] = True
            return True
        seen.add(n)
        op = made.get(n)
        if op is not None:
            todo.extend(_reads(program, op, cache))
    verdict[name] = False
    return False


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
