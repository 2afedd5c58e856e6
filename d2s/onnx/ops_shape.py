"""Shape, creation and indexing ops -> ONNX (registered in `ops.TABLE`)."""
from __future__ import annotations

import numpy as np

from .graph import ELEM, OpArgs
from .ops import converter


def _norm(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _shape_input(a: OpArgs, attr, first: int) -> str:
    """The target shape of reshape/full (`attr`: ints with None for tensor dims, or None when
    the whole shape is the tensor input `first`) as a 1-D int64 ONNX value."""
    g = a.g
    if attr is None:
        return g.one("Cast", [a.name(first)], to=ELEM["int64"])
    if all(d is not None for d in attr):
        return g.ints(list(attr))
    parts, k = [], first
    for d in attr:
        if d is None:
            v = g.one("Cast", [a.name(k)], to=ELEM["int64"])
            parts.append(g.one("Reshape", [v, g.ints([1])]))
            k += 1
        else:
            parts.append(g.ints([d]))
    return g.one("Concat", parts, axis=0)


@converter("reshape")
def _reshape(a):
    return a.g.one("Reshape", [a.name(0), _shape_input(a, a.attrs.get("shape"), 1)])


@converter("transpose")
def _transpose(a):
    return a.g.one("Transpose", [a.name(0)], perm=[int(p) for p in a.attrs["perm"]])


@converter("flatten")
def _flatten(a):
    g, rank = a.g, a.rank(0)
    if rank == 0:
        return g.one("Reshape", [a.name(0), g.ints([1])])
    start = _norm(int(a.attrs.get("start_axis", 0)), rank)
    stop = _norm(int(a.attrs.get("stop_axis", -1)), rank)
    if start == 1 and stop == rank - 1:
        return g.one("Flatten", [a.name(0)], axis=1)
    shape = g.one("Shape", [a.name(0)])
    parts = [g.one("Slice", [shape, g.ints([0]), g.ints([start])]), g.ints([-1]),
             g.one("Slice", [shape, g.ints([stop + 1]), g.ints([rank])])]
    return g.one("Reshape", [a.name(0), g.one("Concat", parts, axis=0)])


@converter("squeeze")
def _squeeze(a):
    shape = a.shape(0)
    axis = a.attrs.get("axis")
    rank = len(shape)
    axes = range(rank) if axis is None else sorted({_norm(int(x), rank) for x in axis})
    drop = [i for i in axes if shape[i] == 1]
    if not drop:
        return a.g.one("Identity", [a.name(0)])
    return a.g.one("Squeeze", [a.name(0), a.g.ints(drop)])


@converter("unsqueeze")
def _unsqueeze(a):
    x = a.name(0)
    axis = a.attrs["axis"]
    for ax in (axis if isinstance(axis, (list, tuple)) else [axis]):
        x = a.g.one("Unsqueeze", [x, a.g.ints([int(ax)])])  # one after another, as Paddle
    return x


@converter("concat")
def _concat(a):
    axis = a.attrs.get("axis", 0)
    if not isinstance(axis, int):
        raise a.error("the axis must be a Python int")
    d = a.out_dtype()
    names = []
    for t in a.ir(0):
        n = a.resolve(t)
        if a.var(t).dtype is not d:
            n = a.g.one("Cast", [n], to=ELEM[d.name])
        names.append(n)
    return a.g.one("Concat", names, axis=axis)


@converter("stack")
def _stack(a):
    axis = int(a.attrs.get("axis", 0))
    return a.g.one("Concat", [a.g.one("Unsqueeze", [n, a.g.ints([axis])])
                              for n in a.names(0)], axis=axis)


@converter("split")
def _split(a):
    axis = int(a.attrs.get("axis", 0))
    sizes = [a.out_shape(k) for k in range(len(a.op.outputs))]
    ax = _norm(axis, a.rank(0))
    lens = [s[ax] for s in sizes]
    if all(n >= 0 for n in lens):
        return a.g.node("Split", [a.name(0), a.g.ints(lens)], len(lens), axis=axis)
    if a.attrs.get("num") is not None:
        return a.g.node("Split", [a.name(0)], len(lens), axis=axis, num_outputs=len(lens))
    raise a.error("split sections of unknown size")


@converter("unstack")
def _unstack(a):
    axis = int(a.attrs.get("axis", 0))
    n = len(a.op.outputs)
    parts = a.g.node("Split", [a.name(0)], n, axis=axis, num_outputs=n) if n > 1 else \
        [a.name(0)]
    return [a.g.one("Squeeze", [p, a.g.ints([axis])]) for p in parts]


@converter("tile")
def _tile(a):
    reps = [int(r) for r in a.attrs["repeat_times"]]
    rank = a.rank(0)
    x = a.name(0)
    if len(reps) > rank:  # NumPy's rule: x gains leading dims
        x = a.g.one("Unsqueeze", [x, a.g.ints(list(range(len(reps) - rank)))])
    reps = [1] * (rank - len(reps)) + reps
    return a.g.one("Tile", [x, a.g.ints(reps)])


@converter("expand", "broadcast_to")
def _expand(a):
    return a.g.one("Expand", [a.name(0), _shape_input(a, a.attrs.get("shape"), 1)])


@converter("shape")
def _shape(a):
    out = a.g.one("Shape", [a.name(0)])
    d = a.out_dtype()
    return out if d.name == "int64" else a.g.one("Cast", [out], to=ELEM[d.name])


@converter("gather")
def _gather(a):
    return a.g.one("Gather", [a.name(0), a.name(1)], axis=int(a.attrs.get("axis", 0)))


# ---- creation --------------------------------------------------------------------------------

def _value(a: OpArgs, i: int, dtype) -> str:
    """A scalar fill value (literal or one-element tensor) of `dtype`, shape []."""
    if a.is_tensor(i):
        return a.g.one("Reshape", [a.tensor(i, dtype), a.g.ints([])])
    return a.g.const(a.ir(i), dtype.np)


@converter("full")
def _full(a):
    d = a.out_dtype()
    shape = a.attrs.get("shape")
    if len(a) == 1 and not a.is_tensor(0) and shape is not None:
        return a.g.const(np.full(tuple(shape), a.ir(0), d.np), d.np)
    return a.g.one("Expand", [_value(a, 0, d), _shape_input(a, shape, 1)])


@converter("full_like")
def _full_like(a):
    d = a.out_dtype()
    return a.g.one("Expand", [_value(a, 1, d), a.g.one("Shape", [a.name(0)])])


@converter("zeros_like", "ones_like")
def _zeros_like(a):
    d = a.out_dtype()
    v = a.g.const(0 if a.op.type == "zeros_like" else 1, d.np)
    return a.g.one("Expand", [v, a.g.one("Shape", [a.name(0)])])


@converter("arange")
def _arange(a):
    d = a.out_dtype()
    return a.g.one("Range", [_value(a, 0, d), _value(a, 1, d), _value(a, 2, d)])


# ---- indexing --------------------------------------------------------------------------------

@converter("getitem")
def _getitem(a):
    """Basic indexing (ints, slices with int or tensor bounds, None, ...) and one int tensor
    index; other advanced indexing is refused."""
    g, spec = a.g, list(a.attrs["index"])
    rank = a.rank(0)
    x = a.name(0)
    advanced = [it for it in spec if it[0] in ("tensor", "array")]
    consumed = sum(1 for it in spec if it[0] in ("int", "slice", "tensor", "array"))
    if any(it[0] == "tensor" and a.dtype(1 + it[1]).name == "bool" for it in advanced) or \
            any(it[0] == "array" for it in advanced) or len(advanced) > 1:
        raise a.error("indexing with bool masks, lists or several index tensors has no ONNX "
                      "mapping here; use gather / where")
    if sum(1 for it in spec if it[0] == "ellipsis") == 1:
        k = next(i for i, it in enumerate(spec) if it[0] == "ellipsis")
        spec[k:k + 1] = [("slice", None, None, None)] * (rank - consumed)
    spec += [("slice", None, None, None)] * (rank - sum(
        1 for it in spec if it[0] in ("int", "slice", "tensor")))

    def bound(v, default):
        if v is None:
            return g.ints([default])
        if isinstance(v, (tuple, list)):
            t = g.one("Cast", [a.name(1 + v[1])], to=ELEM["int64"])
            return g.one("Reshape", [t, g.ints([1])])
        return g.ints([v])

    starts, ends, axes, steps, squeeze, news = [], [], [], [], [], []
    dim, out_dim, gather = 0, 0, None
    big = np.iinfo(np.int64).max
    for it in spec:
        kind = it[0]
        if kind == "none":
            news.append(out_dim)
            out_dim += 1
            continue
        if kind == "int":
            i = int(it[1])
            starts.append(g.ints([i]))
            ends.append(g.ints([i + 1 if i != -1 else big]))
            steps.append(g.ints([1]))
            axes.append(dim)
            squeeze.append(dim)
        elif kind == "slice":
            _, start, stop, step = it
            neg = isinstance(step, int) and step < 0
            if step is not None and not isinstance(step, int):
                raise a.error("a slice step must be a Python int")
            starts.append(bound(start, -1 if neg else 0))
            ends.append(bound(stop, -big if neg else big))
            steps.append(g.ints([step or 1]))
            axes.append(dim)
            out_dim += 1
        else:  # one int tensor
            gather = (dim, a.name(1 + it[1]))
            out_dim += a.rank(1 + it[1])
        dim += 1
    if starts:
        x = g.one("Slice", [x, g.one("Concat", starts, axis=0), g.one("Concat", ends, axis=0),
                            g.ints(axes), g.one("Concat", steps, axis=0)])
    if gather is not None:
        if squeeze:
            raise a.error("mixing int and tensor indices has no ONNX mapping here")
        x = g.one("Gather", [x, gather[1]], axis=gather[0])  # NumPy's rule for one index
    if squeeze:
        x = g.one("Squeeze", [x, g.ints(squeeze)])
    for pos in news:
        x = g.one("Unsqueeze", [x, g.ints([pos])])
    return x
