"""Constant folding."""
from __future__ import annotations

from ... import backend, core
from ...ops import registry
from ..ir import Literal, Program
from .common import is_pure, rename_uses, start


def _constant_value(program: Program, x, consts: dict):
    """The value of an op input if it is a constant, else raises KeyError."""
    if x.__class__ is str:
        return consts[x]
    if isinstance(x, list):
        return [_constant_value(program, t, consts) for t in x]
    return x.value if isinstance(x, Literal) else x


def fold_constants(program: Program) -> Program:
    """Evaluate, once, the top-level pure ops whose inputs are literals or captured constant
    tensors (plain Tensors that are not parameters or buffers and are never written), and
    read the result as a new constant.

    >>> import runtime as rt
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [2], 'float32')
    ...     y = x + rt.tanh(rt.to_tensor([1.0, 2.0]))
    >>> rt.static.passes.fold_constants(main).num_ops()
    1
    """
    new = start(program, "fold_constants")
    written = {op.inputs[0] for op in new.ops() if op.type == "write_persistable"}
    consts = {n: t._data for n, t in new.tensors.items()
              if not t.persistable and n not in written}
    g = new.global_block()
    mapping: dict = {}
    kept = []
    wrap = core.wrap
    for op in g.ops:
        if is_pure(new, op) and op.outputs:
            try:
                values = [_constant_value(new, mapping.get(x, x) if x.__class__ is str else x,
                                          consts) for x in op.inputs]
            except KeyError:
                values = None
            if values is not None:
                out = registry.OPS[op.type].kernel(backend.XP, *values, **op.attrs)
                outs = out if isinstance(out, tuple) else (out,)
                for name, value in zip(op.outputs, outs):
                    v = g.vars.pop(name)
                    t = wrap(backend.XP.asarray(value, dtype=v.dtype.np))
                    cname = new.fresh_name("folded_")
                    g.new_var(cname, v._static_shape, v.dtype, persistable=True)
                    new.tensors[cname] = t
                    consts[cname] = t._data
                    mapping[name] = cname
                continue
        kept.append(op)
    g.ops = kept
    rename_uses(new, mapping)
    new.touch()
    return new
