"""Writing a computed value into a tensor the caller already holds (`rt.assign(x, output)`).

Eager mode writes into `output`'s array when autograd tracks neither side (a mask or buffer
filled under `no_grad`, or from constants); otherwise `output` is rebound to the new value and
its history, as `x[...] = v` does. While a program is being built a Variable handle is re-pointed
at the new value, and a tensor captured from outside the program (a Layer's buffer) gets an op
that overwrites it when the program runs, as `set_value` does.
"""
from __future__ import annotations

from .. import core
from .registry import STATE


def write_into(output, value) -> None:
    """Make `output` hold `value` (the result of an op), in eager or static mode."""
    if STATE.builder is not None:
        if isinstance(output, core.VariableBase):
            write = output.__dict__.get("in_place_write")
            if write is not None and write(value):  # (`p.grad` read in a tensor `if`'s
                return  # branch: written there, `train_step`)
            STATE.builder.overwrote(output, value)  # (the op that made `value` may read
            output._inplace_update(value)             # `output`: `x.scale_(2.0)`)
        elif isinstance(output, core.TensorBase):
            output.set_value(value)
        else:
            raise TypeError(f"assign: output must be a Tensor, got {type(output).__name__}")
        return
    if not isinstance(output, core.TensorBase):
        raise TypeError(f"assign: output must be a Tensor, got {type(output).__name__}")
    tracked = not value.stop_gradient and STATE.grad_enabled
    if output._node is None and not tracked:
        output._data = value._data
        output._version += 1
        return
    output._inplace_update(value)
