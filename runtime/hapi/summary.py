"""`rt.summary`: the layer table of a network (each layer's output shape and parameter
count) and its totals, as Paddle's `paddle.summary` prints them.

>>> import runtime as rt
>>> net = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.ReLU(), rt.nn.Linear(8, 2))
>>> info = rt.summary(net, (1, 4))  # doctest: +ELLIPSIS
---------------------------------------------------------------------------
  Layer (type)     Input Shape         Output Shape        Param #
===========================================================================
    Linear-1         [[1, 4]]             [1, 8]              40
     ReLU-1          [[1, 8]]             [1, 8]              0
    Linear-2         [[1, 8]]             [1, 2]              18
===========================================================================
Total params: 58
Trainable params: 58
Non-trainable params: 0
...
>>> info
{'total_params': 58, 'trainable_params': 58}
"""
from __future__ import annotations

import numpy as np

from ..nn.container import LayerDict, LayerList, Sequential
from .layer_calls import make_inputs, parameter_totals, record_calls, shape_of

CONTAINERS = (Sequential, LayerList, LayerDict)  # they compute nothing of their own
COLUMNS = (("Layer (type)", 15), ("Input Shape", 20), ("Output Shape", 20), ("Param #", 15))
BYTES = 4  # Paddle's size estimates count every value as float32


def own_parameters(layer) -> int:
    """The parameter count of the layer itself (not of its sublayers)."""
    return sum(int(np.prod(p.shape)) for p in layer._parameters.values() if p is not None)


def summary(net, input_size=None, dtypes=None, input=None) -> dict:
    """Run `net` once on inputs of `input_size` (a shape, a list of shapes, or InputSpecs;
    None / -1 dims become 1) of `dtypes` (default float32), or on the tensors `input`, and
    print each layer's output shape and parameter count, then the totals (every parameter
    of `net` once) and size estimates. Returns `{'total_params': n, 'trainable_params': m}`."""
    if input is not None:
        inputs = list(input) if isinstance(input, (list, tuple)) else [input]
    elif input_size is not None:
        inputs = make_inputs(input_size, dtypes)
    else:
        raise ValueError("summary: give input_size or input")
    def chosen(layer):  # the network itself when it has no sublayers or holds parameters
        return not isinstance(layer, CONTAINERS) and (
            layer is not net or not net.sublayers() or own_parameters(net) > 0)

    calls = record_calls(net, inputs, chosen, "summary")
    seen: dict[str, int] = {}
    measured: set[int] = set()  # a layer called twice shows its parameters once
    rows, activations = [], 0
    for call in calls:
        kind = type(call.layer).__name__
        seen[kind] = seen.get(kind, 0) + 1
        n_all = own_parameters(call.layer) if id(call.layer) not in measured else 0
        measured.add(id(call.layer))
        out_shape = shape_of(call.output)
        activations += sum(int(np.prod(s)) for s in flat_shapes(out_shape))
        rows.append((f"{kind}-{seen[kind]}", str([shape_of(x) for x in call.inputs]),
                     str(out_shape), f"{n_all:,}"))
    input_values = sum(int(np.prod(x.shape)) for x in inputs)
    total, trainable = parameter_totals(net)
    print_table(rows, total, trainable, input_values, activations)
    return {"total_params": total, "trainable_params": trainable}


def flat_shapes(shape) -> list:
    if shape and isinstance(shape[0], list):
        return [s for sub in shape for s in flat_shapes(sub)]
    return [shape]


def print_table(rows, total, trainable, input_values, activations) -> None:
    width = sum(w for _, w in COLUMNS) + 5
    header = "".join(name.center(w) for name, w in COLUMNS)
    lines = ["-" * width, header.rstrip(), "=" * width]
    lines += ["".join(cell.center(w) for cell, (_, w) in zip(row, COLUMNS, strict=True)).rstrip()
              for row in rows]
    mb = BYTES / 1024 ** 2
    input_mb, pass_mb, params_mb = input_values * mb, 2 * activations * mb, total * mb
    lines += ["=" * width, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}", "-" * width,
              f"Input size (MB): {input_mb:.2f}",
              f"Forward/backward pass size (MB): {pass_mb:.2f}",
              f"Params size (MB): {params_mb:.2f}",
              f"Estimated Total Size (MB): {input_mb + pass_mb + params_mb:.2f}", "-" * width]
    print("\n".join(lines))
