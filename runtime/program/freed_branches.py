"""A gradient that walks what a gradient on an earlier tensor `if` branch freed raises as eagerly.

Eager `rt.grad` without `retain_graph` frees the graph it walks; a later gradient through it
raises "backward through a graph that was already freed". Where the first gradient is taken
in the same block as the second, or in a block around it, every run that reaches the second
has taken the first (`Builder.check_not_freed` raises then). Where it was taken on a branch
of an earlier tensor `if` (`if use_gp: gp = rt.grad(...)`, then `if use_r1: r1 = rt.grad(...)`
through the same output), only the run tells: `follow_branch_frees` has the branch's `cond`
op report whether it ran that branch (`reach_values.branch_output`) and raises eager's error
before the second gradient on the runs where it did (`raise_before`, at the user's line).
A first gradient inside a graph loop's body, seen from after the loop, is left out here
(`freed_loops` follows what the trips free).
"""
from __future__ import annotations

import functools

from ..ops.logic import logical_or
from ..ops.registry import STATE
from .control_flow import cond
from .debug_ops import raise_error
from .freed_graph import insert_ops, value_graph
from .ir import Program
from .origin import short
from .reach_values import branch_output, building


def follow_branch_frees(program: Program, error) -> None:
    """Raise `error()` before each gradient of `program` that walks what a gradient on a
    branch of an earlier tensor `if` freed, on the runs that took that branch."""
    walks = program.gradient_walks
    if not any(w.frees for w in walks):
        return
    graph = value_graph(program)
    params = {n for b in program.blocks for n in b.params}
    owners = {sub: (op, blk) for blk in program.blocks for op in blk.ops for sub in op.blocks}
    found = []
    for k, later in enumerate(walks):
        blocks = [w.block for w in walks[:k] if w.frees and not encloses(
            program, w.block, later.block) and not later.names.isdisjoint(
                n for n in w.names if n in graph or n in params)]
        if blocks:
            found.append((later, blocks))
    with building(program):
        for later, blocks in sorted(found, key=lambda f: -f[0].position):
            flags = [v for v in (ran_before(program, owners, b, later.block)
                                 for b in dict.fromkeys(blocks)) if v is not None]
            if flags:
                raise_before(program, later.block, later.position, flags, later.origin,
                             error)


def raise_before(program: Program, block: int, position: int, flags: list, origin,
                 error) -> None:
    """A `cond` op at `position` of block `block` raising `error()` on the runs where one
    of `flags` (0-d bools block `block` can read) holds; its ops carry `origin` (the line
    of the user's gradient). The active builder builds `program`."""
    b = STATE.builder
    blk = program.blocks[block]
    mark, first_block = len(blk.ops), len(program.blocks)
    prev, b.block = b.block, blk
    try:
        cond(functools.reduce(logical_or, flags),
             lambda: raise_error(error(), at=short(origin)), lambda: None)
    finally:
        b.block = prev
    made = blk.ops[mark:]  # (the flags' ops and the cond op: moved before the gradient's)
    del blk.ops[mark:]
    insert_ops(program, block, position, made)
    at = program.add_origin(origin)
    for op in made + [op for sub in program.blocks[first_block:] for op in sub.ops]:
        op.origin = at
    program.touch()


def ran_before(program: Program, owners: dict, idx: int, later: int):
    """A bool of the block around both branch `idx` and block `later`: whether the run took
    branch `idx` (None where a loop, or another op than a `cond`, is between them, or where
    `later` is in another branch of a `cond` op around `idx`: never on one run)."""
    around = set()
    b = later
    while b is not None:
        around.add(b)
        b = program.blocks[b].parent
    v, block = True, program.blocks[idx]
    while block.idx not in around:
        op, parent = owners[block.idx]
        if op.type != "cond" or not around.isdisjoint(op.blocks):  # (or its other branch)
            return None
        v = branch_output(program, op, block, v)
        block = parent
    return None if v is True else v


def encloses(program: Program, outer: int, idx: int) -> bool:
    """Whether block `outer` is block `idx` or a block around it."""
    while idx is not None:
        if idx == outer:
            return True
        idx = program.blocks[idx].parent
    return False
