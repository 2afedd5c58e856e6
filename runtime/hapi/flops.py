"""`rt.flops`: the floating-point operations of one forward pass, counted per layer as
Paddle's `paddle.flops` counts them (multiplications mostly; see `FLOP_RULES`).

>>> import runtime as rt
>>> net = rt.nn.Sequential(rt.nn.Conv2D(1, 6, 3, padding=1), rt.nn.ReLU())
>>> rt.flops(net, [1, 1, 28, 28])
Total Flops: 47040     Total Params: 60
47040
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..nn import (
    AdaptiveAvgPool1D,
    AdaptiveAvgPool2D,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    BatchNorm,
    BatchNorm2D,
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Dropout,
    LeakyReLU,
    Linear,
    ReLU,
    ReLU6,
)
from .layer_calls import make_inputs, parameter_totals, record_calls, shape_of


def numel(x) -> int:
    return int(np.prod(x.shape))


def conv_flops(layer, inputs, output) -> int:
    """Per output value: a multiply per kernel tap and input channel of its group, plus the
    bias."""
    groups = getattr(layer, "_groups", None) or getattr(layer, "groups", 1)
    kernel = int(np.prod(layer.weight.shape[2:]))
    bias = 1 if getattr(layer, "bias", None) is not None else 0
    return int(numel(output) * (inputs[0].shape[1] / groups * kernel + bias))


def linear_flops(layer, inputs, output) -> int:
    return int(layer.weight.shape[0]) * numel(output)  # in_features per output value


def batch_norm_flops(layer, inputs, output) -> int:
    return 2 * numel(inputs[0])  # eval mode: a scale and a shift per value


def avg_pool_flops(layer, inputs, output) -> int:
    return numel(output)


def adaptive_avg_pool_flops(layer, inputs, output) -> int:
    kernel = np.array(inputs[0].shape[2:]) // np.array(output.shape[2:])
    return int((int(np.prod(kernel)) + 1) * numel(output))  # the adds, then one divide


def leaky_relu_flops(layer, inputs, output) -> int:
    return numel(inputs[0])


def no_flops(layer, inputs, output) -> int:
    return 0


# Paddle's table (paddle/hapi/dynamic_flops.py's choices, counted the same way). A leaf
# layer of another type counts zero, with a printed notice, as in Paddle.
FLOP_RULES: dict[type, Callable] = {
    Conv1D: conv_flops, Conv2D: conv_flops, Conv3D: conv_flops, Conv2DTranspose: conv_flops,
    BatchNorm2D: batch_norm_flops, BatchNorm: batch_norm_flops,
    ReLU: no_flops, ReLU6: no_flops, Dropout: no_flops, LeakyReLU: leaky_relu_flops,
    Linear: linear_flops,
    AvgPool1D: avg_pool_flops, AvgPool2D: avg_pool_flops, AvgPool3D: avg_pool_flops,
    AdaptiveAvgPool1D: adaptive_avg_pool_flops, AdaptiveAvgPool2D: adaptive_avg_pool_flops,
}


def flops(net, input_size, custom_ops: dict | None = None, print_detail: bool = False) -> int:
    """The FLOPs of `net` on one input of shape `input_size` (random normal values), summed
    over its leaf layers by `FLOP_RULES`; `custom_ops` maps more layer types to
    `fn(layer, inputs, output) -> int`. Prints the totals (every parameter of `net` once;
    with `print_detail` also a row per layer call: name, input and output shape,
    parameters, FLOPs) and returns the total FLOPs."""
    rules = {**FLOP_RULES, **(custom_ops or {})}
    calls = record_calls(net, make_inputs(list(input_size)), lambda layer: not layer.sublayers(),
                         "flops")
    rows, total_flops, unknown, measured = [], 0, [], set()
    for call in calls:
        kind = type(call.layer)
        rule = rules.get(kind)
        if rule is None and kind not in unknown:
            unknown.append(kind)
        count = int(rule(call.layer, call.inputs, call.output)) if rule else 0
        # a layer called twice costs twice, but its parameters count once
        params = sum(numel(p) for p in call.layer.parameters()) \
            if id(call.layer) not in measured else 0
        measured.add(id(call.layer))
        total_flops += count
        rows.append([call.layer.full_name(), str(shape_of(call.inputs[0])),
                     str(shape_of(call.output)), str(params), str(count)])
    for kind in unknown:
        print(f"Cannot find suitable count function for {kind.__name__}. Treat it as zero "
              "FLOPs.")
    if print_detail:
        print_rows(["Layer Name", "Input Shape", "Output Shape", "Params", "Flops"], rows)
    print(f"Total Flops: {total_flops}     Total Params: {parameter_totals(net)[0]}")
    return total_flops


def print_rows(header: list, rows: list) -> None:
    widths = [max(len(r[i]) for r in [header] + rows) + 2 for i in range(len(header))]
    rule = "+" + "+".join("-" * w for w in widths) + "+"
    def line(cells):
        return "|" + "|".join(c.center(w) for c, w in zip(cells, widths, strict=True)) + "|"
    print("\n".join([rule, line(header), rule] + [line(r) for r in rows] + [rule]))
