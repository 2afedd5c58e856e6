"""Run a network once, eagerly, on made-up inputs and record what chosen layers received and
returned: what `rt.summary` and `rt.flops` report.

A converted network (`d2s.to_static`) keeps its StaticFunction in the instance's `forward`;
while recording it is set aside so the Python forward runs and every sublayer's hooks see
real shapes (a cached program would call no sublayer at all), and put back afterwards.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..autograd import no_grad
from ..dtypes import convert_dtype
from ..nn import Layer
from ..static import InputSpec
from ..tensor import Tensor, to_tensor
from .static_converter import is_converted


class LayerCall(NamedTuple):
    layer: object
    inputs: tuple      # the positional inputs the layer received
    output: object     # what it returned


def input_shapes(input_size) -> list[list[int]]:
    """`(1, 28, 28)`, `[(1, 28, 28), (1, 10)]` or InputSpecs -> one shape per input; an
    unknown (None / -1) dimension becomes 1."""
    if isinstance(input_size, InputSpec):
        input_size = [input_size]
    if isinstance(input_size, (list, tuple)) and input_size and all(
            isinstance(d, (int, np.integer)) or d is None for d in input_size):
        input_size = [input_size]
    shapes = []
    for item in input_size:
        dims = item.shape if isinstance(item, InputSpec) else item
        shapes.append([1 if d is None or d == -1 else int(d) for d in dims])
    return shapes


def make_inputs(input_size, dtypes=None) -> list[Tensor]:
    """Random inputs of the given shapes: floats from a normal distribution, integer
    dtypes as zeros (valid ids for embeddings)."""
    shapes = input_shapes(input_size)
    if dtypes is None:
        dtypes = [s.dtype for s in input_size] if isinstance(input_size, list) and all(
            isinstance(s, InputSpec) for s in input_size) else ["float32"]
    dtypes = [dtypes] if isinstance(dtypes, str) or not isinstance(dtypes, (list, tuple)) \
        else list(dtypes)
    if len(dtypes) == 1:
        dtypes = dtypes * len(shapes)
    if len(dtypes) != len(shapes):
        raise ValueError(f"{len(shapes)} input shapes but {len(dtypes)} dtypes")
    rng = np.random.RandomState(0)
    out = []
    for shape, dtype in zip(shapes, dtypes, strict=True):
        name = convert_dtype(dtype).name
        values = rng.standard_normal(shape) if "float" in name else np.zeros(shape)
        out.append(to_tensor(values.astype(name if name != "bfloat16" else "float32"),
                             dtype=name))
    return out


@contextlib.contextmanager
def eager_forwards(network):
    """Every converted forward in `network` set aside for the duration."""
    kept = [(layer, layer.__dict__.pop("forward")) for layer in
            network.sublayers(include_self=True) if is_converted(layer)]
    try:
        yield
    finally:
        for layer, forward in kept:
            layer.__dict__["forward"] = forward


def record_calls(network, inputs: list, chosen: Callable, caller: str) -> list[LayerCall]:
    """Call `network(*inputs)` once in eval mode without gradients, recording the calls of
    the layers for which `chosen(layer)` holds, in the order they returned."""
    if not isinstance(network, Layer):
        raise TypeError(f"{caller}: net must be an rt.nn.Layer, got {type(network).__name__} "
                        "(measuring a static Program is not provided)")
    calls = []

    def record(layer, layer_inputs, output):
        calls.append(LayerCall(layer, tuple(layer_inputs), output))

    handles = [layer.register_forward_post_hook(record)
               for layer in network.sublayers(include_self=True) if chosen(layer)]
    training = network.training
    network.eval()
    try:
        with eager_forwards(network), no_grad():
            network(*inputs)
    finally:
        for h in handles:
            h.remove()
        if training:
            network.train()
    return calls


def parameter_totals(net) -> tuple[int, int]:
    """(all, trainable) parameter counts of the network, a shared parameter once."""
    sizes = [(int(np.prod(p.shape)), not p.stop_gradient) for p in net.parameters()]
    return sum(n for n, _ in sizes), sum(n for n, trainable in sizes if trainable)


def shape_of(value):
    """A tensor's shape as a list; a list of shapes for a tuple/list of outputs."""
    if isinstance(value, Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [shape_of(v) for v in value]
    return []
