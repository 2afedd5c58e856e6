"""Which values a run of a program reaches: the branch conditions under which a value (a
parameter, an input) is read.

Eager autograd gives a parameter a gradient only when the call used it: one read only on the
branch of a tensor `if` that this input did not take keeps `.grad is None`, and an optimizer
with weight decay or momentum leaves it alone. The program's gradient has a value for it on
every run (zeros from the branch not taken), so the caller needs, per run, whether the value
was read. `branch_conditions` finds, for each name read only inside the branches of top-level
`cond` ops, the `(predicate name, branch)` pairs under which it is read; the name was reached
on a run when any pair holds (the predicate's value equals the branch's truth). A name read at
the top level, or inside a loop body or `switch_case` case, is reached on every run (a loop
that runs zero times still gives zeros: not told apart here).

>>> import runtime as rt
>>> from runtime.program.reached import branch_conditions
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [2], 'float32')
...     a = rt.static.data('a', [2], 'float32')
...     b = rt.static.data('b', [2], 'float32')
...     y = rt.static.nn.cond(x.sum() > 0, lambda: x * a, lambda: x - b)
>>> branch_conditions(main, ['x', 'a', 'b'])
{'a': [('t1', True)], 'b': [('t1', False)]}
"""
from __future__ import annotations

from .ir import Program


def branch_conditions(program: Program, names) -> dict:
    """`name -> [(predicate name, branch truth), ...]` for each of `names` read only inside
    branches of top-level `cond` ops (in any block below a branch); names read elsewhere, or
    not at all, are left out."""
    wanted = set(names)
    under: dict = {}  # name -> the (pred, truth) pairs of the branches that read it
    everywhere: set = set()  # names read where every run reads them
    for op in program.global_block().ops:
        everywhere.update(n for n in op.input_names() if n in wanted)
        if op.type == "cond":
            pred = op.inputs[0]
            for idx, truth in zip(op.blocks, (True, False), strict=True):
                for name in _reads_below(program, idx) & wanted:
                    under.setdefault(name, []).append((pred, truth))
        else:
            for idx in op.blocks:
                everywhere.update(_reads_below(program, idx) & wanted)
    return {n: pairs for n, pairs in under.items() if n not in everywhere}


def _reads_below(program: Program, idx: int) -> set:
    """The names the ops of block `idx` and of the blocks below it read."""
    reads: set = set()
    stack = [idx]
    while stack:
        block = program.block(stack.pop())
        for op in block.ops:
            reads.update(op.input_names())
            stack.extend(op.blocks)
        reads.update(r for r in block.results if r.__class__ is str)
    return reads
