"""Folding an inference-mode BatchNorm into the convolution or linear layer that feeds it.

In eval mode BatchNorm is an affine map per channel, `y = (x - mean) * s + beta` with
`s = gamma / sqrt(var + epsilon)`, so after a layer whose output channel k is linear in its
weight's slice k, it moves into that weight and a bias:

    %t0 = conv2d(%x, %W)                            %t0 = conv2d(%x, %W.folded_0)
    %t1 = add(%t0, %b)           (optional)    =>   %y  = add(%t0, %W.folded_bias_0)
    %y, %m, %v = batch_norm(%t1, %mean, %var, %gamma, %beta) {training=False}

    %t0 = linear(%x, %W, %b)                   =>   %y  = linear(%x, %W.folded_0, %W.folded_bias_0)
    %y, %m, %v = batch_norm(%t0, ...) {training=False}

The producer is `conv2d` (any groups), `conv2d_transpose` (any groups), `linear` or a
`matmul` by a 2-D constant. Between it and the BatchNorm there may be adds of constants that
are the same along all but the channel axis (a conv bias), and `transpose`, `squeeze` and
`unsqueeze` that move the channel axis to where the BatchNorm has it (NHWC, `Conv1D`); the adds
go into the new bias, the layout ops stay. Nothing folds unless every value in between is read
once, only there and is not in `keep` (a fetched value keeps its own value), the BatchNorm's
statistics outputs are unused, and the weights, biases and BatchNorm parameters are constants:
tensors of the program that no op writes, or pure ops over them (`reshape` of a bias).

Parameters are treated as frozen: this is a pass for an inference program (what `d2s.save`
writes), not for one that is still trained. The ops that computed the old weights are left
for `eliminate_dead_code`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ... import backend, core
from ...ops import registry
from ..ir import Literal, Op, Program
from .common import is_pure, start

_UNKNOWN = object()  # a value that is not a constant


def _scaled_conv(w, s, attrs):
    """conv2d's weight is [out, in / groups, kh, kw]: output channel k is w[k]."""
    return w * s.reshape(-1, 1, 1, 1)


def _scaled_conv_transpose(w, s, attrs):
    """conv2d_transpose's weight is [in, out / groups, kh, kw]: group g's output channel j is
    w[g * in / groups: (g + 1) * in / groups, j]."""
    g = attrs.get("groups", 1)
    cin, per_group = w.shape[0], w.shape[1]
    grouped = w.reshape(g, cin // g, per_group, *w.shape[2:])
    return (grouped * s.reshape(g, 1, per_group, 1, 1)).reshape(w.shape)


def _scaled_columns(w, s, attrs):
    """linear's weight is [in, out] (matmul's too, unless `transpose_y`: [out, in])."""
    return w * (s.reshape(-1, 1) if attrs.get("transpose_y") else s)


@dataclass(frozen=True)
class _Producer:
    weight: int  # index of the weight among the op's inputs
    bias: int | None  # index of its bias input, where it has one
    channel: int  # the axis of its output that holds the output channels
    ndim: int  # how many dims its weight must have
    scaled: Callable  # (weight, per-channel scale, attrs) -> the weight with channel k scaled


PRODUCERS = {
    "conv2d": _Producer(weight=1, bias=None, channel=1, ndim=4, scaled=_scaled_conv),
    "conv2d_transpose": _Producer(weight=1, bias=None, channel=1, ndim=4,
                                  scaled=_scaled_conv_transpose),
    "linear": _Producer(weight=1, bias=2, channel=-1, ndim=2, scaled=_scaled_columns),
    "matmul": _Producer(weight=1, bias=None, channel=-1, ndim=2, scaled=_scaled_columns),
}


def _transposed(op: Op, shape: tuple, channel: int) -> int:
    return [p % len(shape) for p in op.attrs["perm"]].index(channel)


def _squeezed(op: Op, shape: tuple, channel: int) -> int | None:
    nd, axes = len(shape), op.attrs.get("axis")
    picked = range(nd) if axes is None else {a % nd for a in axes}
    dropped = [i for i in picked if shape[i] == 1]
    return None if channel in dropped else channel - sum(i < channel for i in dropped)


def _unsqueezed(op: Op, shape: tuple, channel: int) -> int:
    axes = list(range(len(shape)))
    for a in op.attrs["axis"]:  # inserted one after another, as the op does
        axes.insert(a % (len(axes) + 1), None)
    return axes.index(channel)


# op type -> (its op, its input's shape, the channel axis there) -> the channel axis after it
LAYOUT_OPS = {"transpose": _transposed, "squeeze": _squeezed, "unsqueeze": _unsqueezed}


def _channel_vector(xp, value, shape: tuple, channel: int):
    """`value` (added to a tensor of `shape`) as one float64 number per channel, or None when
    it differs along another axis or would broaden the tensor."""
    a = xp.asarray(value)
    if a.ndim > len(shape):
        return None
    full = (1,) * (len(shape) - a.ndim) + tuple(a.shape)
    size = shape[channel]
    if any(d != 1 for i, d in enumerate(full) if i != channel) or full[channel] not in (1, size):
        return None
    return xp.broadcast_to(a.reshape(-1).astype(xp.float64), (size,))


class _Constants:
    """The values of a program's constants: tensors no op writes, and pure ops over them."""

    def __init__(self, program: Program):
        written = {op.inputs[0] for op in program.ops() if op.type == "write_persistable"}
        self.values = {n: t._data for n, t in program.tensors.items() if n not in written}
        self.defs = {o: op for op in program.ops() for o in op.outputs}
        self.program = program

    def value(self, x):
        """The constant `x` (an op input), or `_UNKNOWN`."""
        if isinstance(x, list):
            items = [self.value(t) for t in x]
            return _UNKNOWN if any(t is _UNKNOWN for t in items) else items
        if x.__class__ is not str:
            return x.value if isinstance(x, Literal) else x
        if x not in self.values:
            self.values[x] = self._computed(x)
        return self.values[x]

    def _computed(self, name: str):
        op = self.defs.get(name)
        if op is None or len(op.outputs) != 1 or not is_pure(self.program, op):
            return _UNKNOWN
        args = [self.value(x) for x in op.inputs]
        if any(a is _UNKNOWN for a in args):
            return _UNKNOWN
        out = registry.OPS[op.type].kernel(backend.XP, *args, **op.attrs)
        return backend.XP.asarray(out, dtype=self.program.find_var(name).dtype.np)

    def add(self, name: str, value) -> None:
        self.values[name] = value

    def source(self, name: str) -> str:
        """The tensor a computed constant comes from (`W` for `unsqueeze(W)`), to name what
        replaces it."""
        while name not in self.program.tensors and name in self.defs:
            name = next(self.defs[name].input_names(), name)
        return name


@dataclass
class _Match:
    """One BatchNorm to fold: its producer, the ops in between (in program order), the bias
    they add (float64, one number per channel) and the channel axis at the BatchNorm."""

    producer: Op
    between: list
    bias: object
    channel: int


def fold_batch_norm(program: Program, keep=()) -> Program:
    """Fold each eval-mode `batch_norm` that follows a convolution or linear layer into that
    layer's weight and bias (see the module docstring for the patterns). `keep` names the
    values that must keep their own values (the fetches).

    >>> import runtime as rt
    >>> conv, bn = rt.nn.Conv2D(3, 4, 3), rt.nn.BatchNorm2D(4).eval()
    >>> main = rt.static.Program()
    >>> with rt.static.program_guard(main):
    ...     x = rt.static.data('x', [-1, 3, 8, 8], 'float32')
    ...     y = bn(conv(x))
    >>> folded = rt.static.passes.fold_batch_norm(main, keep=[y])
    >>> [op.type for op in folded.global_block().ops if op.type in ('conv2d', 'batch_norm')]
    ['conv2d']
    """
    new = start(program, "fold_batch_norm")
    _Folder(new, {k if isinstance(k, str) else k.name for k in keep}).run()
    new.touch()
    return new


class _Folder:
    """Finds the patterns (`match`) and rewrites them (`rewrite`), one BatchNorm at a time in
    program order, so that a BatchNorm right after a folded one folds too."""

    def __init__(self, program: Program, keep: set):
        self.program = program
        self.keep = keep
        self.constants = _Constants(program)
        self.reads = Counter()
        for b in program.blocks:
            for op in b.ops:
                self.reads.update(op.input_names())
            self.reads.update(r for r in b.results if r.__class__ is str)
        self.block_of = {id(op): b.idx for b in program.blocks for op in b.ops}
        self.xp = backend.XP

    def run(self) -> None:
        for block in self.program.blocks:
            self.block = block
            for op in list(block.ops):
                if op.type == "batch_norm" and not op.attrs.get("training", False):
                    match = self.match(op)
                    if match is not None:
                        self.rewrite(op, match)

    def shape(self, name: str) -> tuple:
        return self.block.var(name)._static_shape or ()

    def made_here_read_once(self, name) -> Op | None:
        """The op of this block that makes `name`, when one op reads it and no one fetches it."""
        if name.__class__ is not str or self.reads[name] != 1 or name in self.keep:
            return None
        op = self.constants.defs.get(name)
        return op if op is not None and self.block_of.get(id(op)) == self.block.idx else None

    def match(self, bn: Op) -> _Match | None:
        x, mean, var, *affine = bn.inputs
        if mean is None or var is None or any(self.reads[o] or o in self.keep
                                              for o in bn.outputs[1:]) or any(
                self.constants.value(p) is _UNKNOWN for p in (mean, var, *affine)):
            return None
        between = []
        op = self.made_here_read_once(x)
        while op is not None and op.type not in PRODUCERS:
            if op.type != "add" and op.type not in LAYOUT_OPS:
                return None
            between.insert(0, op)
            op = self.made_here_read_once(self.passed_on(op))
        if op is None or not self.is_foldable_producer(op):
            return None
        return self.channel_and_bias(op, between, bn)

    def passed_on(self, op: Op):
        """The input an `add` or layout op passes on (an add's other input is a constant)."""
        if op.type != "add":
            return op.inputs[0]
        computed = [x for x in op.inputs if self.constants.value(x) is _UNKNOWN]
        return computed[0] if len(computed) == 1 and len(op.inputs) == 2 else None

    def is_foldable_producer(self, op: Op) -> bool:
        p = PRODUCERS[op.type]
        w = self.constants.value(op.inputs[p.weight])
        return len(op.outputs) == 1 and getattr(w, "ndim", 0) == p.ndim and (
            p.bias is None or len(op.inputs) > p.bias and
            self.constants.value(op.inputs[p.bias]) is not _UNKNOWN)

    def channel_and_bias(self, producer: Op, between: list, bn: Op) -> _Match | None:
        """Follow the channel axis from the producer to the BatchNorm, summing the adds."""
        shape = self.shape(producer.outputs[0])
        channel = PRODUCERS[producer.type].channel % len(shape)
        size = shape[channel]
        if size == -1:
            return None
        bias = self.xp.zeros((size,), self.xp.float64)
        for op in between:
            x = self.passed_on(op)
            shape = self.shape(x)
            if op.type == "add":
                other = op.inputs[1 - op.inputs.index(x)]
                added = _channel_vector(self.xp, self.constants.value(other), shape, channel)
                same = self.block.var(op.outputs[0])
                if added is None or same._static_shape != shape or \
                        same.dtype is not self.block.var(x).dtype:
                    return None
                bias = bias + added
            else:
                channel = LAYOUT_OPS[op.type](op, shape, channel)
                if channel is None:
                    return None
        shape = self.shape(bn.inputs[0])
        at = 1 if bn.attrs.get("data_format", "NCHW").startswith("NC") else len(shape) - 1
        if channel != at or shape[at] != size:
            return None
        return _Match(producer, between, bias, channel)

    def scale_and_bias(self, bn: Op, m: _Match) -> tuple:
        """Per output channel (float64): what the weight is multiplied by, the new bias."""
        xp = self.xp
        mean, var, gamma, beta = (None if x is None else
                                  xp.asarray(self.constants.value(x)).astype(xp.float64)
                                  for x in bn.inputs[1:])
        scale = 1.0 / xp.sqrt(var + bn.attrs.get("epsilon", 1e-5))
        if gamma is not None:
            scale = scale * gamma
        bias = m.bias
        p = PRODUCERS[m.producer.type]
        if p.bias is not None and m.producer.inputs[p.bias] is not None:
            bias = bias + xp.asarray(self.constants.value(m.producer.inputs[p.bias])
                                     ).astype(xp.float64)
        bias = (bias - mean) * scale
        return scale, bias if beta is None else bias + beta

    def rewrite(self, bn: Op, m: _Match) -> None:
        scale, bias = self.scale_and_bias(bn, m)
        p, producer = PRODUCERS[m.producer.type], m.producer
        weight = self.constants.value(producer.inputs[p.weight])
        w_name = self.constants.source(producer.inputs[p.weight])
        producer.inputs[p.weight] = self.constant(
            f"{w_name}.folded_", p.scaled(weight.astype(self.xp.float64), scale, producer.attrs),
            weight.dtype)
        adds = [op for op in m.between if op.type == "add"]
        for op in adds:  # its one reader reads what it added to instead
            reader = next(r for r in m.between + [bn] if op.outputs[0] in r.input_names())
            reader.inputs = [self.passed_on(op) if x == op.outputs[0] else x
                             for x in reader.inputs]
        y = bn.outputs[0]
        dtype = self.block.var(y).dtype.np
        dropped = bn.outputs[1:] + [o for op in adds for o in op.outputs]
        if p.bias is not None and len(adds) == len(m.between):  # linear: the bias is its own
            dropped += producer.outputs
            producer.inputs[p.bias] = self.constant(f"{w_name}.folded_bias_", bias, dtype)
            producer.outputs = [y]
            made_y, removed = producer, adds + [bn]
        else:
            if p.bias is not None:  # (added in the new bias)
                producer.inputs[p.bias] = None
            shape = [1] * len(self.shape(y))
            shape[m.channel] = -1
            name = self.constant(f"{w_name}.folded_bias_", bias.reshape(shape), dtype)
            made_y, removed = Op("add", [bn.inputs[0], name], [y], {}, origin=bn.origin), adds
            self.block.ops[self.block.ops.index(bn)] = made_y
            self.block_of[id(made_y)] = self.block.idx
        gone = {id(op) for op in removed}
        self.block.ops = [op for op in self.block.ops if id(op) not in gone]
        for n in dropped:
            self.block.vars.pop(n, None)
        self.constants.defs[y] = made_y

    def constant(self, prefix: str, value, dtype) -> str:
        """A new persistable constant of the program: `value` as `dtype`."""
        name = self.program.fresh_name(prefix)
        tensor = core.wrap(self.xp.ascontiguousarray(self.xp.asarray(value).astype(dtype)))
        tensor.persistable = True
        self.program.global_block().new_var(name, tensor.shape, tensor.dtype, persistable=True)
        self.program.tensors[name] = tensor
        self.constants.add(name, tensor._data)
        return name
