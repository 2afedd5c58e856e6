"""`Program.verify()`: structural checks; errors print the program.

Checked: every name an op reads is defined (a `data` input, a persistable, a block param, or
an op output) and, when defined in the same block, defined before it is read; every op type is
registered; sub-block references point at existing child blocks (`recompute` re-runs a forward loop
body, which is not its child); each ordinary op's recorded
output dtypes and shapes agree with what its inference rule says for its inputs now (catches a
producer and consumer that disagree).
"""
from __future__ import annotations

from ..ops import registry
from .literal import Literal

_STRUCTURAL = {"cond", "while", "switch_case", "recompute", "write_persistable",
               "create_array", "array_write"}


class ProgramError(ValueError):
    """A malformed program (a bug in whatever built or transformed it)."""


def _fail(program, msg: str) -> None:
    raise ProgramError(f"{msg}\n--- program ---\n{program}")


def verify(program) -> None:
    defined_anywhere = set(program.inputs) | set(program.tensors)
    for b in program.blocks:
        defined_anywhere.update(b.params)
        for op in b.ops:
            defined_anywhere.update(op.outputs)
    for b in program.blocks:
        if b.idx and (b.parent is None or not 0 <= b.parent < len(program.blocks)):
            _fail(program, f"block {b.idx} has no valid parent ({b.parent})")
        seen = set(b.params)
        for op in b.ops:
            if op.type not in registry.OPS:
                _fail(program, f"op type {op.type!r} (block {b.idx}) is not registered")
            for n in op.input_names():
                if n not in defined_anywhere:
                    _fail(program, f"{op.type} in block {b.idx} reads %{n}, which is never "
                                   "defined")
                if n in b.vars and n not in seen and not b.vars[n].persistable \
                        and n not in program.inputs:
                    _fail(program, f"{op.type} in block {b.idx} reads %{n} before it is "
                                   "defined")
            for idx in op.blocks:
                if not 0 < idx < len(program.blocks) or (
                        op.type != "recompute" and program.blocks[idx].parent != b.idx):
                    _fail(program, f"{op.type} in block {b.idx} refers to block {idx}, which "
                                   f"is not a child of block {b.idx}")
            if op.type not in _STRUCTURAL:
                _check_inference(program, b, op)
            seen.update(op.outputs)
        for r in b.results:
            if r.__class__ is str and r not in defined_anywhere:
                _fail(program, f"block {b.idx} yields %{r}, which is never defined")


def _check_inference(program, block, op) -> None:
    def value(x):
        if x.__class__ is str:
            return block.var(x)
        if isinstance(x, list):
            return [value(t) for t in x]
        return x.value if isinstance(x, Literal) else x

    try:
        metas = registry.infer_outputs(registry.OPS[op.type], [value(x) for x in op.inputs],
                                       op.attrs)
    except (registry.OpError, registry.OpTypeError) as e:
        _fail(program, f"{op.type} in block {block.idx}: its inputs no longer fit: {e}")
        return
    except Exception as e:  # noqa: BLE001  (a rule that crashes on them: they do not fit)
        _fail(program, f"{op.type} in block {block.idx}: its inference rule fails on its "
                       f"inputs and attributes ({type(e).__name__}: {e})")
        return
    for name, m in zip(op.outputs, metas):
        v = block.var(name)
        if v.kind != "tensor" or m is None:
            continue
        if m.dtype != v.dtype or len(m.shape) != len(v._static_shape) or any(
                a != b and a != -1 and b != -1 for a, b in zip(m.shape, v._static_shape)):
            got = f"{m.dtype.short}[{','.join(str(d) for d in m.shape)}]"
            _fail(program, f"%{name} is recorded as {v.type_str()} but {op.type} produces {got}")
