"""What the passes share: which ops are pure, reachability, renaming uses."""
from __future__ import annotations

from ...ops import registry
from ...ops.random import is_random
from ..debug_ops import SIDE_EFFECTS
from ..ir import Op, Program
from ..serialize import copy_program


def has_effects(program: Program, op: Op) -> bool:
    """True when running `op` matters beyond its outputs (recursively through sub-blocks)."""
    # Random ops draw when they run: running them twice (or at fold time) changes results
    if op.type in SIDE_EFFECTS or is_random(op.type):
        return True
    return any(has_effects(program, o) for idx in op.blocks for o in program.blocks[idx].ops)


def is_pure(program: Program, op: Op) -> bool:
    """An op that may be removed, merged or evaluated early."""
    return not op.blocks and not has_effects(program, op) and op.type in registry.OPS and \
        not op.type.startswith(("array_", "create_array"))


def reachable_blocks(program: Program) -> list:
    out, stack = [], [0]
    while stack:
        idx = stack.pop()
        out.append(idx)
        for op in program.blocks[idx].ops:
            stack.extend(op.blocks)
    return out


def rename_uses(program: Program, mapping: dict) -> None:
    """Make every op input and block result that reads a key of `mapping` read its value."""
    def sub(x):
        if x.__class__ is str:
            return mapping.get(x, x)
        if isinstance(x, list):
            return [sub(t) for t in x]
        return x

    for b in program.blocks:
        for op in b.ops:
            op.inputs = [sub(x) for x in op.inputs]
        b.results = [sub(r) for r in b.results]


def start(program: Program, name: str) -> Program:
    new = copy_program(program)
    new.passes.append(name)
    return new
