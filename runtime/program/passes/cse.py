"""Common-subexpression elimination."""
from __future__ import annotations

from ..ir import Literal, Program
from .common import is_pure, rename_uses, start


def _key(x):
    if isinstance(x, list):
        return ("list",) + tuple(_key(t) for t in x)
    if isinstance(x, Literal):
        return ("lit", repr(x.value))
    return (type(x).__name__, x)


def eliminate_common_subexpressions(program: Program) -> Program:
    """Where two pure ops of one block have the same type, inputs and attrs, the second is
    dropped and its uses read the first one's outputs.

    >>> import runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [2], 'float32')
    ...     y = rt.tanh(x) + rt.tanh(x)
    >>> rt.static.passes.eliminate_common_subexpressions(main).num_ops()
    2
    """
    new = start(program, "eliminate_common_subexpressions")
    mapping: dict = {}
    for b in new.blocks:
        seen: dict = {}
        kept = []
        for op in b.ops:
            if mapping:
                rename_uses_op(op, mapping)
            if is_pure(new, op):
                key = (op.type, tuple(_key(x) for x in op.inputs), repr(sorted(op.attrs.items())))
                first = seen.get(key)
                if first is not None and len(first.outputs) == len(op.outputs):
                    mapping.update(zip(op.outputs, first.outputs))
                    for o in op.outputs:
                        b.vars.pop(o, None)
                    continue
                seen[key] = op
            kept.append(op)
        b.ops = kept
    rename_uses(new, mapping)
    new.touch()
    return new


def rename_uses_op(op, mapping: dict) -> None:
    op.inputs = [mapping.get(x, x) if x.__class__ is str else
                 ([mapping.get(t, t) if t.__class__ is str else t for t in x]
                  if isinstance(x, list) else x) for x in op.inputs]
