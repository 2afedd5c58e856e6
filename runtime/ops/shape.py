"""Shape ops: reshape, transpose, concat / stack / split, squeeze / unsqueeze / flatten,
expand / broadcast_to, flip, roll, shape, numel (tile: `tiling.py`).

Gradient rules never bake in a shape: in static mode a dim may be -1 until run time, so the
grads of reshape-like ops use `reshape_as(g, x)` (x's shape read at run time) and the grads of
concat use `split_like(g, xs)`. Indexing, gathering and sorting ops are in `index.py`.
"""
from __future__ import annotations

import math as _pymath

from ..core import is_variable
from ..dtypes import int64
from . import infer as I
from .combine import concat
from .creation import arange, full, infer_shape, is_tensor, resolve_shape, shape_args
from .elementwise import sum_to_like
from .gather import index_select, scatter_add
from .registry import Meta, OpError, OpTypeError, bind, register


def _known_prod(dims) -> int:
    """The product of dims, or -1 when one is unknown."""
    return -1 if -1 in dims else _pymath.prod(dims)


# ---- reshape ---------------------------------------------------------------------------------

def _reshape_target(op: str, xshape: tuple, target: tuple, unknown: tuple = ()) -> tuple:
    """Paddle's reshape rule: 0 copies x's dim at that position, one -1 is inferred.
    `unknown` holds the positions whose value is a run-time tensor (static -1)."""
    out, infer_at = [], None
    for i, d in enumerate(target):
        if i in unknown:
            out.append(-1)
        elif d == 0:
            if i >= len(xshape):
                raise OpError(f"{op}: shape {list(target)} has 0 at position {i}, but x has "
                              f"only {len(xshape)} dims (shape {I.fmt(xshape)})")
            out.append(xshape[i])
        elif d == -1:
            if infer_at is not None:
                raise OpError(f"{op}: shape {list(target)} has more than one -1")
            infer_at = i
            out.append(-1)
        elif d < -1:
            raise OpError(f"{op}: shape {list(target)} has an invalid dim {d}")
        else:
            out.append(d)
    # An unknown dim of x copied by a 0 cancels out, so the rest can still be checked.
    copied = {i for i, d in enumerate(target) if d == 0 and i not in unknown and xshape[i] == -1}
    total = _known_prod([d for i, d in enumerate(xshape) if i not in copied])
    rest = _known_prod([d for i, d in enumerate(out) if i != infer_at and i not in copied])
    if total == -1 or rest == -1 or unknown:
        return tuple(out)
    if infer_at is not None:
        if rest == 0 or total % rest:
            raise OpError(f"{op}: cannot reshape x of shape {I.fmt(xshape)} ({total} elements) "
                          f"to {list(target)}")
        out[infer_at] = total // rest
    elif rest != total:
        raise OpError(f"{op}: cannot reshape x of shape {I.fmt(xshape)} ({total} elements) to "
                      f"{list(target)} ({rest} elements)")
    return tuple(out)


def _reshape_kernel(xp, x, *dims, shape):
    target = resolve_shape(shape, dims)
    if 0 in target:
        target = tuple(x.shape[i] if d == 0 else d for i, d in enumerate(target))
    return x.reshape(target)


def _reshape_infer(x, *dims, shape):
    I.check_tensor("reshape", "x", x)
    target = infer_shape("reshape", shape, dims)
    unknown = tuple(i for i, d in enumerate(target) if shape is None or shape[i] is None)
    return Meta(_reshape_target("reshape", x.shape, target, unknown), x.dtype)


def _reshape_grad(ins, outs, gs, a):
    return [reshape_as(gs[0], ins[0])] + [None] * (len(ins) - 1)


RESHAPE = register("reshape", kernel=_reshape_kernel, infer=_reshape_infer, grad=_reshape_grad,
                   amp="keep", doc="Paddle's reshape: 0 keeps x's dim, one -1 is inferred.")

RESHAPE_AS = register(
    "reshape_as", kernel=lambda xp, x, like: x.reshape(like.shape),
    infer=lambda x, like: Meta(like.shape, x.dtype),
    grad=lambda ins, outs, gs, a: [reshape_as(gs[0], ins[0]), None], amp="keep",
    doc="x reshaped to the run-time shape of `like` (grads of reshape-like ops).")


def reshape(x, shape, name=None):
    """x with a new shape of the same size: 0 keeps x's dim at that position, one -1 is
    inferred. Entries may be int tensors, or `shape` one 1-D int tensor.

    >>> import runtime as rt
    >>> rt.reshape(rt.ones([2, 3]), [0, -1, 1]).shape
    [2, 3, 1]
    """
    attr, dims = shape_args("reshape", shape)
    return bind(RESHAPE, (x, *dims), {"shape": attr})


def reshape_as(x, like):
    return bind(RESHAPE_AS, (x, like), {})


# ---- transpose -------------------------------------------------------------------------------

def _transpose_infer(x, perm):
    I.check_tensor("transpose", "x", x)
    nd = len(x.shape)
    if sorted(p % nd if nd and -nd <= p < nd else p for p in perm) != list(range(nd)):
        raise OpError(f"transpose: perm {list(perm)} is not a permutation of the {nd} axes of "
                      f"x (shape {I.fmt(x.shape)})")
    return Meta(tuple(x.shape[p] for p in perm), x.dtype)


def _inverse(perm):
    nd = len(perm)
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p % nd] = i
    return inv


TRANSPOSE = register(
    "transpose", kernel=lambda xp, x, perm: xp.transpose(x, perm), infer=_transpose_infer,
    grad=lambda ins, outs, gs, a: [transpose(gs[0], _inverse(a["perm"]))], amp="keep")


def transpose(x, perm, name=None):
    """Permute the axes of x: output axis i is input axis perm[i].

    >>> import runtime as rt
    >>> rt.transpose(rt.ones([2, 3, 4]), [2, 0, 1]).shape
    [4, 2, 3]
    """
    perm = tuple(perm)
    if not all(p.__class__ is int for p in perm):
        perm = tuple(int(p) for p in perm)
    return bind(TRANSPOSE, (x,), {"perm": perm})


def _T(x):
    return transpose(x, range(x.ndim - 1, -1, -1))


def t(input, name=None):
    """The transpose of a matrix; a 0-D or 1-D tensor is returned as it is (Paddle's `t`).

    >>> import runtime as rt
    >>> rt.t(rt.ones([2, 3])).shape
    [3, 2]
    """
    if input.ndim > 2:
        raise ValueError(f"t: the input has {input.ndim} dimensions, t takes at most 2 "
                         "(use transpose with a permutation)")
    return transpose(input, [1, 0]) if input.ndim == 2 else input


def moveaxis(x, source, destination, name=None):
    """Move axes of x to new positions (the others keep their order).

    >>> import runtime as rt
    >>> rt.moveaxis(rt.ones([2, 3, 4]), 0, -1).shape
    [3, 4, 2]
    """
    nd = x.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [I.norm_axis("moveaxis", s, nd, "source") for s in src]
    dst = [I.norm_axis("moveaxis", d, nd, "destination") for d in dst]
    rest = [i for i in range(nd) if i not in src]
    perm = [None] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    return transpose(x, [p if p is not None else next(it) for p in perm])


# ---- squeeze / unsqueeze / flatten -----------------------------------------------------------

def _squeeze_shape(op: str, shape: tuple, axis) -> tuple:
    nd = len(shape)
    if axis is None:
        if -1 in shape:
            raise OpError(f"{op}: x has shape {I.fmt(shape)} with unknown dims, so which axes "
                          "have size 1 is not known until run time; pass axis=")
        return tuple(d for d in shape if d != 1)
    axes = {I.norm_axis(op, a, nd) for a in axis}
    unknown = sorted(i for i in axes if shape[i] == -1)
    if unknown:  # squeezing is a no-op on a dim that is not 1, so the rank would be unknown
        raise OpError(f"{op}: axis {unknown[0]} of x (shape {I.fmt(shape)}) has an unknown size, "
                      "so whether it is dropped is not known until run time; give that dim a "
                      "known size (InputSpec) or use reshape")
    return tuple(d for i, d in enumerate(shape) if not (i in axes and d == 1))


def _unsqueeze_shape(op: str, shape: tuple, axis) -> tuple:
    out = list(shape)
    for a in axis:
        nd = len(out) + 1
        if not isinstance(a, int) or not -nd <= a < nd:
            raise OpError(f"{op}: axis {a} is out of range for inserting into shape "
                          f"{I.fmt(out)} (valid: {-nd} .. {nd - 1})")
        out.insert(a % nd, 1)
    return tuple(out)


def _flatten_shape(op: str, shape: tuple, start_axis: int, stop_axis: int) -> tuple:
    if not shape:
        return (1,)
    s = I.norm_axis(op, start_axis, len(shape), "start_axis")
    e = I.norm_axis(op, stop_axis, len(shape), "stop_axis")
    if s > e:
        raise OpError(f"{op}: start_axis {start_axis} is after stop_axis {stop_axis} for x of "
                      f"shape {I.fmt(shape)}")
    return shape[:s] + (_known_prod(shape[s:e + 1]),) + shape[e + 1:]


def _reshaping(name, shape_fn, doc):
    """An op whose output is x reshaped by `shape_fn(op, shape, **attrs)`."""
    return register(
        name, kernel=lambda xp, x, **a: x.reshape(shape_fn(name, x.shape, **a)),
        infer=lambda x, **a: Meta(shape_fn(name, x.shape, **a), x.dtype),
        grad=lambda ins, outs, gs, a: [reshape_as(gs[0], ins[0])], amp="keep", doc=doc)


SQUEEZE = _reshaping("squeeze", _squeeze_shape, "Drop size-1 axes (all, or those in `axis`).")
UNSQUEEZE = _reshaping("unsqueeze", _unsqueeze_shape, "Insert size-1 axes, one after another.")
FLATTEN = _reshaping("flatten", _flatten_shape, "Merge axes start_axis..stop_axis into one.")


def _axis_list(axis) -> tuple:
    if isinstance(axis, int):
        return (axis,)
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    raise OpTypeError(f"axis must be an int or a list of ints, got {axis!r}")


def squeeze(x, axis=None, name=None):
    """Remove size-1 axes: all of them, or those listed in `axis` (others are kept).

    >>> import runtime as rt
    >>> rt.squeeze(rt.ones([2, 1, 3, 1]), axis=1).shape
    [2, 3, 1]
    """
    return bind(SQUEEZE, (x,), {"axis": None if axis is None else _axis_list(axis)})


def unsqueeze(x, axis, name=None):
    """Insert size-1 axes at `axis` (a list inserts one after another, as in Paddle).

    >>> import runtime as rt
    >>> rt.unsqueeze(rt.ones([3]), [0, 2]).shape
    [1, 3, 1]
    """
    return bind(UNSQUEEZE, (x,), {"axis": _axis_list(axis)})


def flatten(x, start_axis: int = 0, stop_axis: int = -1, name=None):
    """Merge the axes from start_axis to stop_axis (inclusive) into one.

    >>> import runtime as rt
    >>> rt.flatten(rt.ones([2, 3, 4]), 1).shape
    [2, 12]
    """
    return bind(FLATTEN, (x,), {"start_axis": start_axis, "stop_axis": stop_axis})


# ---- expand / broadcast_to --------------------------------------------------------------------

def _expand_target(op: str, xshape: tuple, target: tuple) -> tuple:
    """Paddle's expand rule: -1 keeps x's dim; other dims must equal x's or x's must be 1."""
    lead = len(target) - len(xshape)
    if lead < 0:
        raise OpError(f"{op}: shape {list(target)} has fewer dims than x (shape "
                      f"{I.fmt(xshape)})")
    out = []
    for i, t in enumerate(target):
        d = xshape[i - lead] if i >= lead else None
        if t == -1:
            if d is None:
                raise OpError(f"{op}: shape {list(target)} has -1 at new leading dim {i}")
            out.append(d)
        elif d is None or d in (1, t, -1) or t == -2:
            out.append(-1 if t == -2 else t)
        else:
            raise OpError(f"{op}: cannot expand x of shape {I.fmt(xshape)} to {list(target)}: "
                          f"dim {i - lead} of x is {d}, which is neither 1 nor {t}")
    return tuple(out)


def _expand_kernel(xp, x, *dims, shape):
    target = resolve_shape(shape, dims)
    return xp.broadcast_to(x, _expand_target("expand", x.shape, target))


def _expand_infer(x, *dims, shape):
    I.check_tensor("expand", "x", x)
    target = infer_shape("expand", shape, dims)
    unknown = [shape is None or shape[i] is None for i in range(len(target))]
    target = tuple(-2 if u else t for t, u in zip(target, unknown))
    return Meta(_expand_target("expand", x.shape, target), x.dtype)


EXPAND = register(
    "expand", kernel=_expand_kernel, infer=_expand_infer,
    grad=lambda ins, outs, gs, a: [sum_to_like(gs[0], ins[0])] + [None] * (len(ins) - 1),
    amp="keep", doc="Broadcast x to `shape` (-1 keeps x's dim).")


def expand(x, shape, name=None):
    """Broadcast x to `shape`; -1 keeps x's dim. Entries may be int tensors.

    >>> import runtime as rt
    >>> rt.expand(rt.ones([3, 1]), [2, -1, 4]).shape
    [2, 3, 4]
    """
    attr, dims = shape_args("expand", shape)
    return bind(EXPAND, (x, *dims), {"shape": attr})


broadcast_to = expand


# ---- flip / roll -----------------------------------------------------------------------------

def _axes_infer(op):
    def rule(x, axis=None, **_):
        I.check_tensor(op, "x", x)
        if axis is not None:
            for a in axis:
                I.norm_axis(op, a, len(x.shape))
        return Meta(x.shape, x.dtype)
    return rule


FLIP = register("flip", kernel=lambda xp, x, axis: xp.flip(x, axis), infer=_axes_infer("flip"),
                grad=lambda ins, outs, gs, a: [flip(gs[0], a["axis"])], amp="keep")


def _check_roll(shifts, axis):
    if (axis is None and len(shifts) != 1) or (axis is not None and len(axis) != len(shifts)):
        raise OpError(f"roll: shifts {list(shifts)} and axis {axis} must have the same length "
                      "(one shift when axis is None)")


def _roll_kernel(xp, x, shifts, axis=None):
    _check_roll(shifts, axis)
    return xp.roll(x, shifts if axis is not None else shifts[0], axis)


def _roll_infer(x, shifts, axis=None):
    _axes_infer("roll")(x, axis)
    _check_roll(shifts, axis)
    return Meta(x.shape, x.dtype)


ROLL = register("roll", kernel=_roll_kernel, infer=_roll_infer, amp="keep",
                grad=lambda ins, outs, gs, a: [
                    roll(gs[0], [-s for s in a["shifts"]], a.get("axis"))])


def flip(x, axis, name=None):
    """Reverse x along the given axes.

    >>> import runtime as rt
    >>> rt.flip(rt.arange(3), 0).tolist()
    [2, 1, 0]
    """
    return bind(FLIP, (x,), {"axis": _axis_list(axis)})


def roll(x, shifts, axis=None, name=None):
    """Shift elements of x cyclically along `axis` (all elements, flattened, when None);
    shifts may be ints or one-value int tensors.

    >>> import runtime as rt
    >>> rt.roll(rt.arange(4), 1).tolist()
    [3, 0, 1, 2]
    """
    if is_tensor(shifts) or isinstance(shifts, (list, tuple)) and any(map(is_tensor, shifts)):
        return _roll_by_tensors(x, shifts, axis)
    return bind(ROLL, (x,), {"shifts": _axis_list(shifts),
                             "axis": None if axis is None else _axis_list(axis)})


def _roll_by_tensors(x, shifts, axis):
    """Roll by shifts known only at run time (the counter of a graph loop: `roll(x, i)`):
    each axis gathers at `(arange(n) - shift) % n`."""
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    axes = [0] if axis is None else list(_axis_list(axis))
    if len(axes) != len(shifts):
        raise OpError(f"roll: {len(shifts)} shifts for axis {axis} (one shift for each axis, "
                      "one when axis is None)")
    y = flatten(x) if axis is None else x
    for shift, ax in zip(shifts, axes):
        n = y.shape[ax] if y.shape[ax] >= 0 else shape(y)[ax]
        y = index_select(y, (arange(n) - shift) % n, ax)
    return reshape_as(y, x) if axis is None else y


# ---- pad -------------------------------------------------------------------------------------

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


def _pad_kernel(xp, x, paddings, mode="constant", value=0.0):
    if mode == "constant":
        return xp.pad(x, paddings, mode="constant", constant_values=value)
    return xp.pad(x, paddings, mode=_PAD_MODES[mode])


def _pad_infer(x, paddings, mode="constant", value=0.0):
    I.check_tensor("pad", "x", x)
    if len(paddings) != len(x.shape):
        raise OpError(f"pad: {len(paddings)} (before, after) pairs for x of shape "
                      f"{I.fmt(x.shape)}")
    out = []
    for axis, (d, (lo, hi)) in enumerate(zip(x.shape, paddings)):
        if lo < 0 or hi < 0:
            raise OpError(f"pad: negative padding {[lo, hi]} on axis {axis} of x (shape "
                          f"{I.fmt(x.shape)})")
        if mode in ("replicate", "circular") and d == 0 and (lo or hi):
            raise OpError(f"pad: {mode} padding of an empty axis {axis} (x shape "
                          f"{I.fmt(x.shape)})")
        out.append(-1 if d == -1 else d + lo + hi)
    return Meta(tuple(out), x.dtype)


def _pad_grad_kernel(xp, g, x, paddings, mode="constant", value=0.0):
    """Adjoint of pad: every padded position sends its grad back to the source element it
    copies (none for constant padding), so apply pad to the index range and scatter-add."""
    for axis, (lo, hi) in enumerate(paddings):
        if not (lo or hi):
            continue
        n = x.shape[axis]
        if mode == "constant":
            src = xp.pad(xp.arange(n), (lo, hi), mode="constant", constant_values=-1)
        else:
            src = xp.pad(xp.arange(n), (lo, hi), mode=_PAD_MODES[mode])
        moved = xp.moveaxis(g, axis, 0)
        keep = src >= 0
        acc = xp.zeros((n,) + moved.shape[1:], dtype=g.dtype)
        scatter_add(xp, acc, (src[keep],), moved[keep])
        g = xp.moveaxis(acc, 0, axis)
    return g


PAD = register("pad", kernel=_pad_kernel, infer=_pad_infer, amp="keep",
               grad=lambda ins, outs, gs, a: [_pad_grad(gs[0], ins[0], a)])
PAD_GRAD = register(
    "pad_grad", kernel=_pad_grad_kernel, amp="keep",
    infer=lambda g, x, **a: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(PAD, (gs[0],), {**a, "value": 0.0}), None],
    doc="The adjoint of pad: grads of padded positions summed onto their sources.")


def _pad_grad(g, x, attrs):
    return bind(PAD_GRAD, (g, x), attrs)


def _pad_pairs(pad, ndim: int, mode: str, data_format: str) -> tuple:
    """Paddle's pad layout as (before, after) per axis.

    With 2*ndim values in constant mode, pairs run from the first axis to the last. Otherwise
    the pairs cover the trailing spatial axes, last axis first ([left, right, top, bottom,
    front, back]); channel-last formats (NHWC, NLC, NDHWC) leave the last axis alone.
    """
    pad = [p if is_tensor(p) else int(p) for p in pad]
    if len(pad) % 2:
        raise OpError(f"pad: pad {pad} must have an even length")
    pairs = [(0, 0)] * ndim
    if mode == "constant" and len(pad) == 2 * ndim:
        return tuple((pad[2 * i], pad[2 * i + 1]) for i in range(ndim))
    last = ndim - 2 if data_format.upper().endswith("C") and ndim > 2 else ndim - 1
    if len(pad) // 2 > last + 1:
        raise OpError(f"pad: pad {pad} has {len(pad) // 2} pairs, too many for x of rank "
                      f"{ndim} with data_format {data_format}")
    for i in range(len(pad) // 2):
        pairs[last - i] = (pad[2 * i], pad[2 * i + 1])
    return tuple(pairs)


def pad(x, pad, mode: str = "constant", value: float = 0.0, data_format: str = "NCHW",
        name=None):
    """Pad x (Paddle's layout, see `_pad_pairs`); mode is constant, reflect, replicate or
    circular. In constant mode the widths may be one-value int tensors and `value` a
    one-value tensor.

    >>> import runtime as rt
    >>> rt.pad(rt.ones([1, 1, 2, 2]), [1, 1, 0, 0]).shape
    [1, 1, 2, 4]
    """
    if mode not in _PAD_MODES:
        raise OpError(f"pad: mode must be one of {sorted(_PAD_MODES)}, got {mode!r}")
    pairs = _pad_pairs(pad, x.ndim, mode, data_format)
    if is_tensor(value) or any(is_tensor(w) for pair in pairs for w in pair):
        return _pad_by_tensors(x, pairs, mode, value)
    attrs = {"paddings": pairs, "mode": mode}
    if mode == "constant" and value:
        attrs["value"] = float(value)
    return bind(PAD, (x,), attrs)


def _pad_by_tensors(x, pairs, mode: str, value):
    """Constant padding whose widths or fill value are tensors (the counter of a graph loop,
    as in `pad(x, [0, i], value=i)`): filled blocks concatenated around x, so a width known
    only at run time gives a dim known only at run time."""
    if mode != "constant":
        raise OpTypeError(f"pad: widths or a value given as tensors need mode='constant', got "
                          f"mode={mode!r}; pass Python ints for {mode} padding")
    for axis, (lo, hi) in enumerate(pairs):
        if lo.__class__ is int and hi.__class__ is int and not (lo or hi):
            continue
        dims = [d if d >= 0 else shape(x)[k] for k, d in enumerate(x.shape)]
        blocks = []
        for width in (lo, hi):
            dims[axis] = width
            blocks.append(full(dims, value, x.dtype))
        x = concat([blocks[0], x, blocks[1]], axis)
    return x


# ---- shape / numel ---------------------------------------------------------------------------

SHAPE = register(
    "shape", kernel=lambda xp, x: xp.asarray(x.shape, dtype=int64.np),
    infer=lambda x: Meta((len(x.shape),), int64), nondiff=True, amp="keep",
    doc="The shape of x as a 1-D int64 tensor (its dims are known at run time).")
NUMEL = register(
    "numel", kernel=lambda xp, x: xp.asarray(x.size, dtype=int64.np),
    infer=lambda x: Meta((), int64), nondiff=True, amp="keep",
    doc="The number of elements of x as a 0-d int64 tensor.")


def shape(x) -> Tensor:  # noqa: F821
    """The shape of x as an int64 tensor: use it where a dim is unknown until run time.

    >>> import runtime as rt
    >>> rt.shape(rt.ones([2, 3])).tolist()
    [2, 3]
    """
    out = bind(SHAPE, (x,), {})
    if is_variable(out) and all(d >= 0 for d in x.shape):
        # a graph value of dims known while building: an op given it as a whole shape
        # (`rt.reshape(y, rt.shape(y))`) knows its result's shape, as eager code does
        out.known_dims = tuple(x.shape)
    return out


def numel(x, name=None):
    """The number of elements of x (0-d int64 tensor).

    >>> import runtime as rt
    >>> int(rt.numel(rt.ones([2, 3])))
    6
    """
    return bind(NUMEL, (x,), {})


METHODS = {
    "reshape": reshape, "transpose": transpose, "T": property(_T), "t": t,
    "moveaxis": moveaxis,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze, "flatten": flatten, "expand": expand, "broadcast_to": broadcast_to,
    "flip": flip, "roll": roll, "numel": numel,
}

__all__ = ["broadcast_to", "expand", "flatten", "flip", "moveaxis", "numel", "pad", "reshape",
           "roll", "shape", "squeeze", "t", "transpose", "unsqueeze"]
