"""Python text from a `ChunkPlan` (`fusion_chunks.py`): the emitter of a fused run's NumPy
code. It decides nothing; it writes the plan's calls in its chunk loop. The text names
`_np`, `_empty`, `_run_rows`, the `_kernel_*` functions (`fused_kernels.py`), `_dtype`, `_spare`, `_new` and the plan's constants, which
`fused_function.py` puts in its namespace.
"""
from __future__ import annotations


def numpy_source(plan) -> tuple:
    """`(source, {line: op index})`: the function's text and the block op each line of a
    call computes (how the executor names the op that failed)."""
    lines = [f"def {plan.name}({', '.join(plan.params)}):"]
    for ident, shape in plan.reshaped:  # the leading axes as one: views of contiguous inputs
        lines.append(f"    {ident} = {ident}.reshape({shape!r})")
    if plan.rows == -1:  # (rows known at run time: every output has them first)
        lines.append(f"    rows = {plan.sliced[0][1]}.shape[0]")
        for array, shape, _ in plan.outputs:
            lines.append(f"    {array} = _empty((rows,) + {tuple(shape[1:])!r}, _dtype)")
    else:
        lines.append(f"    rows = {plan.rows}")
        for array, shape, _ in plan.outputs:
            lines.append(f"    {array} = _empty({shape!r}, _dtype)")
    lines.append("    def part(lo, hi):")
    lines.append("        full = _spare.pop() if _spare else _new()")
    n = len(plan.buffers)
    lines += [f"        f{i} = full[{i}]" for i in range(n)]
    lines.append(f"        for s in range(lo, hi, {plan.step}):")
    lines.append(f"            e = s + {plan.step} if s + {plan.step} < hi else hi")
    if n:
        lines.append("            n = e - s")
        lines.append("            " + ", ".join(f"b{i}" for i in range(n)) + " = " +
                     ", ".join(f"f{i}[:n]" for i in range(n)))
    if plan.sliced:
        lines.append("            " + ", ".join(v for v, _ in plan.sliced) + " = " +
                     ", ".join(f"{ident}[s:e]" for _, ident in plan.sliced))
    line_ops = {}
    for call in plan.calls:
        if call.output is not None:
            lines.append(f"            {call.dest} = {call.output}[s:e]")
        lines.append("            " + _call_text(call))
        line_ops[len(lines)] = call.op
    lines.append("        _spare.append(full)")
    lines.append(f"    _run_rows(part, rows, {plan.step}, rows >= {plan.parallel_rows})")
    rets = [array if back is None else f"{array}.reshape({back!r})"
            for array, _, back in plan.outputs]
    lines.append("    return " + (rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ",)"))
    return "\n".join(lines) + "\n", line_ops


def _call_text(call) -> str:
    if call.axes is None:
        func = call.func if call.func.startswith("_kernel_") else f"_np.{call.func}"
        return f"{func}({', '.join(call.args)}, out={call.dest})"
    text = f"_np.{call.func}.reduce({call.args[0]}, axis={call.axes!r}, " \
           f"keepdims={call.keepdims}, out={call.dest})"
    if call.count is not None:
        text += f"; _np.true_divide({call.dest}, {call.count}, out={call.dest}, " \
                "casting='unsafe')"
    return text
