"""Dead-code elimination."""
from __future__ import annotations

from ..ir import Program
from .common import has_effects, reachable_blocks, start


def eliminate_dead_code(program: Program, keep=()) -> Program:
    """Remove ops none of whose outputs is needed by `keep` (names or Variables), by an op
    with effects, or by a block result.

    >>> import runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [2], 'float32')
    ...     y, unused = x + 1.0, x * 3.0
    >>> rt.static.passes.eliminate_dead_code(main, keep=[y]).num_ops()
    1
    """
    new = start(program, "eliminate_dead_code")
    keep = {k if isinstance(k, str) else k.name for k in keep}
    changed = True
    while changed:
        changed = False
        blocks = reachable_blocks(new)
        used = set(keep)
        for idx in blocks:
            b = new.blocks[idx]
            for op in b.ops:
                used.update(op.input_names())
            used.update(r for r in b.results if r.__class__ is str)
        for idx in blocks:
            b = new.blocks[idx]
            live = [op for op in b.ops
                    if has_effects(new, op) or any(o in used for o in op.outputs)]
            if len(live) != len(b.ops):
                for op in b.ops:
                    if op not in live:
                        for o in op.outputs:
                            b.vars.pop(o, None)
                b.ops = live
                changed = True
    new.touch()
    return new
