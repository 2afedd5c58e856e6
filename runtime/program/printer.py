"""The text form of a program (grammar in docs/ir.md). It is a contract: golden-tested.

    program(%x: f32[-1,4]) {
      param %fc.w_0: f32[4,2]
      %t0: f32[-1,2] = matmul(%x, %fc.w_0) {transpose_y=True}
      %t1: f32[-1,2] = cond(%p) {
        ^true():
          %t2: f32[-1,2] = tanh(%t0)
          yield %t2
        ^false():
          yield %t0
      }
    }
"""
from __future__ import annotations

from ..ops.registry import OPS
from . import origin as _origin
from .literal import Literal

# How the sub-blocks of each control-flow op are labelled.
BLOCK_LABELS = {"cond": ("true", "false"), "while": ("cond", "body"), "recompute": ("body",)}


def fmt_ref(x) -> str:
    """An op input: `%name`, a literal, or a list of those."""
    if x.__class__ is str:
        return "%" + x
    if isinstance(x, list):
        return "[" + ", ".join(fmt_ref(t) for t in x) + "]"
    if isinstance(x, Literal):
        return repr(x.value)
    return repr(x)


def fmt_attrs(attrs: dict) -> str:
    if not attrs:
        return ""
    return " {" + ", ".join(f"{k}={v!r}" for k, v in attrs.items()) + "}"


def fmt_decl(block, name: str) -> str:
    return f"%{name}: {block.var(name).type_str()}"


def _labels(op) -> list:
    if op.type == "switch_case":
        return [f"case {k}" for k in op.attrs["cases"]] + ["default"]
    return list(BLOCK_LABELS.get(op.type, ())) or [f"block{i}" for i in range(len(op.blocks))]


def op_lines(program, op, block, indent: str, with_origin: bool) -> list:
    """The line(s) of one op; sub-blocks follow, indented, and end with `}`."""
    lhs = ", ".join(fmt_decl(block, n) for n in op.outputs)
    opdef = OPS.get(op.type)
    if opdef is not None and opdef.printer is not None:
        rhs = opdef.printer(op, fmt_ref)
    else:
        rhs = f"{op.type}({', '.join(fmt_ref(x) for x in op.inputs)}){fmt_attrs(op.attrs)}"
    text = f"{indent}{lhs + ' = ' if lhs else ''}{rhs}"
    if op.blocks:
        text += " {"
    if with_origin and op.origin is not None:
        o = program.origins[op.origin]
        text += f"  # {_origin.short(o)}"
    lines = [text]
    if op.blocks:
        for label, idx in zip(_labels(op), op.blocks):
            if not 0 <= idx < len(program.blocks):  # printed by verify() for a broken program
                lines.append(f"{indent}  ^{label}: <missing block {idx}>")
                continue
            sub = program.blocks[idx]
            params = ", ".join(fmt_decl(sub, n) for n in sub.params)
            lines.append(f"{indent}  ^{label}({params}):")
            lines.extend(block_lines(program, sub, indent + "    ", with_origin))
        lines.append(indent + "}")
    return lines


def block_lines(program, block, indent: str, with_origin: bool) -> list:
    lines = []
    for op in block.ops:
        lines.extend(op_lines(program, op, block, indent, with_origin))
    if block.idx != 0 and block.results:
        lines.append(f"{indent}yield " + ", ".join(fmt_ref(r) for r in block.results))
    return lines


def program_to_string(program, with_origin: bool = False) -> str:
    g = program.global_block()
    header = ", ".join(fmt_decl(g, n) for n in program.inputs)
    lines = [f"program({header}) {{"]
    for name, tensor in program.tensors.items():
        if name in g.vars:
            kind = "param" if not tensor.stop_gradient else "buffer"
            lines.append(f"  {kind} {fmt_decl(g, name)}")
    lines.extend(block_lines(program, g, "  ", with_origin))
    lines.append("}")
    return "\n".join(lines)
