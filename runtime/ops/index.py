"""Indexing: `x[index]`, `x[index] = value`, and Paddle's `slice` / `strided_slice`.

An index (ints, slices, None, Ellipsis, bool masks, int tensors, lists, and tuples of these,
with NumPy's semantics) is turned into plain data for the attrs, one item per entry:

    ('int', i)  ('slice', start, stop, step)  ('none',)  ('ellipsis',)
    ('tensor', k)   the k-th extra op input (an int or bool tensor)
    ('array', v)    a literal list / bool of NumPy index data

A slice bound is an int, None, or ('tensor', k) when it is a tensor (a loop counter in a static
program). `getitem` and `setitem` are functional ops: `Tensor.__setitem__` writes in place
into the array when autograd does not track the tensor, and otherwise (and always in static
mode) applies `setitem` and rebinds the tensor to the result with `_inplace_update`.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import backend, core
from . import infer as I
from .combine import concat
from .creation import full, is_tensor
from .gather import scatter_add
from .math import cast
from .elementwise import sum_to_like
from .registry import STATE, Meta, OpError, OpTypeError, bind, explain_failure, register
from .shape import reshape, reshape_as


class IndexOutOfRange(OpError, IndexError):
    """An index past the end of an axis (an IndexError, so Python's protocols still work)."""


# ---- index <-> plain data --------------------------------------------------------------------

def parse_index(index) -> tuple:
    """(spec, tensors) for a Python index; see the module docstring for the spec."""
    items = index if isinstance(index, tuple) else (index,)
    spec, tensors = [], []

    def bound(v):
        if v is None or v.__class__ is int:
            return v
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            return int(v)
        if is_tensor(v):
            tensors.append(v)
            return ("tensor", len(tensors) - 1)
        raise OpTypeError(f"getitem: slice bounds must be ints, None or int tensors, got {v!r}")

    for it in items:
        cls = it.__class__
        if cls is int:
            spec.append(("int", it))
        elif cls is builtins.slice:
            spec.append(("slice", bound(it.start), bound(it.stop), bound(it.step)))
        elif it is None:
            spec.append(("none",))
        elif it is Ellipsis:
            spec.append(("ellipsis",))
        elif isinstance(it, bool):
            spec.append(("array", it))
        elif isinstance(it, numbers.Integral):
            spec.append(("int", int(it)))
        elif isinstance(it, builtins.slice):
            spec.append(("slice", bound(it.start), bound(it.stop), bound(it.step)))
        elif is_tensor(it):
            tensors.append(it)
            spec.append(("tensor", len(tensors) - 1))
        elif isinstance(it, list) and any(is_tensor(v) for v in it):
            tensors.append(_index_of_entries(it))
            spec.append(("tensor", len(tensors) - 1))
        elif isinstance(it, (list, np.ndarray)):
            arr = np.asarray(it)
            if arr.dtype.kind not in "biu" and arr.size:
                raise OpTypeError(f"getitem: index arrays must hold ints or bools, got {it!r}")
            spec.append(("array", arr.astype(np.int64).tolist() if arr.dtype.kind != "b"
                         else arr.tolist()))
        else:
            raise OpTypeError(f"getitem: unsupported index {it!r} of type {type(it).__name__}; "
                              "use ints, slices, None, ..., bool masks or int tensors")
    return tuple(spec), tensors


def _index_of_entries(entries: list):
    """`x[[i, 0]]` with `i` a one-value int tensor (a graph loop's counter): the list as one
    int64 index tensor."""
    parts = []
    for v in entries:
        if not is_tensor(v) and not (isinstance(v, numbers.Integral) and
                                     not isinstance(v, bool)):
            raise OpTypeError(f"getitem: an index list with tensors must hold ints and "
                              f"one-value int tensors, got {type(v).__name__} {v!r}")
        if is_tensor(v) and (not v.dtype.is_integer or v.shape not in ([], [1])):
            raise OpTypeError(f"getitem: an index list with tensors must hold ints and "
                              f"one-value int tensors, got a {v.dtype.name} tensor of shape "
                              f"{list(v.shape)}")
        part = full([1], v, "int64") if not is_tensor(v) else reshape(cast(v, "int64"), [1])
        parts.append(part)
    return concat(parts)


def build_index(xp, spec, tensors) -> tuple:
    """The NumPy/CuPy index tuple for `spec` (kernel side)."""
    def bound(v):
        return int(tensors[v[1]].item()) if isinstance(v, (tuple, list)) else v

    out = []
    for it in spec:
        kind = it[0]
        if kind == "int":
            out.append(it[1])
        elif kind == "slice":
            out.append(builtins.slice(bound(it[1]), bound(it[2]), bound(it[3])))
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind == "tensor":
            out.append(tensors[it[1]])
        else:
            out.append(xp.asarray(it[1]))
    return tuple(out)


def _is_basic(spec) -> bool:
    return all(it[0] not in ("tensor", "array") for it in spec)


# ---- shape inference -------------------------------------------------------------------------

def _index_meta(op, it, tensors):
    """(is_bool, shape) of an advanced index item."""
    if it[0] == "tensor":
        m = tensors[it[1]]
        I.check_tensor(op, "index", m)
        if m.dtype.is_floating:
            raise OpTypeError(f"{op}: index tensors must be int or bool, got {m.dtype.name} "
                              f"(shape {I.fmt(m.shape)})")
        return m.dtype == "bool", tuple(m.shape), None
    arr = np.asarray(it[1])
    return arr.dtype.kind == "b", arr.shape, (int(arr.sum()) if arr.dtype.kind == "b" else None)


def _slice_len(d, start, stop, step) -> int:
    if step == 0:
        raise OpError("getitem: slice step cannot be zero")
    if d == -1 or any(isinstance(v, (tuple, list)) for v in (start, stop, step)):
        return -1
    return len(range(*builtins.slice(start, stop, step).indices(d)))


def index_shape(op: str, xshape: tuple, spec, tensors) -> tuple:
    """The shape of x[index] by NumPy's rules, with -1 for what only the run time knows."""
    nd = len(xshape)
    adv = {i: _index_meta(op, it, tensors) for i, it in enumerate(spec)
           if it[0] in ("tensor", "array")}
    used = sum(1 for it in spec if it[0] in ("int", "slice"))
    used += sum(len(shape) if is_bool else 1 for is_bool, shape, _ in adv.values())
    if sum(1 for it in spec if it[0] == "ellipsis") > 1:
        raise OpError(f"{op}: an index can only have a single ellipsis (...)")
    if used > nd:
        raise IndexOutOfRange(f"{op}: too many indices for x of shape {I.fmt(xshape)}: "
                              f"{used} dims indexed")
    items = list(spec)
    fill = [("slice", None, None, None)] * (nd - used)
    at = next((i for i, it in enumerate(items) if it[0] == "ellipsis"), len(items))
    items[at:at + 1] = fill
    adv = {k + (len(fill) - 1 if k > at else 0): v for k, v in adv.items()}
    advanced = bool(adv)
    out, adv_shapes, adv_at, dim = [], [], [], 0
    for i, it in enumerate(items):
        kind = it[0]
        if kind == "none":
            out.append(1)
            continue
        if kind == "slice":
            out.append(_slice_len(xshape[dim], *it[1:]))
            dim += 1
            continue
        if kind == "int":
            d = xshape[dim]
            if d != -1 and not -d <= it[1] < d:
                raise IndexOutOfRange(f"{op}: index {it[1]} is out of range for axis {dim} "
                                      f"with size {d} (x shape {I.fmt(xshape)})")
            dim += 1
            if not advanced:
                continue
            shape = ()
        else:
            is_bool, shape, count = adv[i]
            if is_bool:
                mask_dims = xshape[dim:dim + len(shape)]
                if any(a != b and -1 not in (a, b) for a, b in zip(shape, mask_dims)):
                    raise IndexOutOfRange(f"{op}: a bool mask of shape {I.fmt(shape)} does not "
                                          f"match dims {I.fmt(mask_dims)} of x (shape "
                                          f"{I.fmt(xshape)}) at axis {dim}")
                dim += len(shape)
                shape = (-1 if count is None else count,)
            else:
                dim += 1
        adv_shapes.append(shape)
        adv_at.append(len(out))
        out.append(None)
    if not advanced:
        return tuple(out)
    merged = ()
    for s in adv_shapes:
        merged = I.broadcast_shapes(op, merged, s, ("index", "index"))
    first = adv_at[0]
    contiguous = adv_at == list(range(first, first + len(adv_at)))
    rest = [d for d in out if d is not None]
    if not contiguous:
        return tuple(merged) + tuple(rest)
    return tuple(rest[:first]) + tuple(merged) + tuple(rest[first:])


# ---- getitem ---------------------------------------------------------------------------------

def _getitem_kernel(xp, x, *tensors, index):
    out = x[build_index(xp, index, tensors)]
    # Basic indexing gives a view; a copy keeps later in-place writes from leaking into x.
    return out.copy() if getattr(out, "base", None) is not None else out


def _getitem_infer(x, *tensors, index):
    I.check_tensor("getitem", "x", x)
    return Meta(index_shape("getitem", tuple(x.shape), index, tensors), x.dtype)


def _getitem_grad_kernel(xp, g, x, *tensors, index):
    out = xp.zeros(x.shape, dtype=g.dtype)
    idx = build_index(xp, index, tensors)
    if _is_basic(index):
        out[idx] = g
    else:  # repeated indices must accumulate
        scatter_add(xp, out, idx, g)
    return out


def _getitem_grad(ins, outs, gs, a):
    return [bind(GETITEM_GRAD, (gs[0], *ins), a)] + [None] * (len(ins) - 1)


GETITEM = register("getitem", kernel=_getitem_kernel, infer=_getitem_infer,
                   grad=_getitem_grad, amp="keep", doc="x[index] (NumPy indexing semantics).")
GETITEM_GRAD = register(
    "getitem_grad", kernel=_getitem_grad_kernel, amp="keep",
    infer=lambda g, x, *tensors, index: Meta(x.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(GETITEM, (gs[0], *ins[2:]), a)] + [None] * (
        len(ins) - 1),
    doc="g scattered (added) into zeros like x at `index` (the grad of getitem).")


def getitem(x, index):
    """x[index] with NumPy semantics: ints, slices, None, ..., bool masks, int tensors.

    >>> import runtime as rt
    >>> x = rt.arange(6).reshape([2, 3])
    >>> x[1, ::-1].tolist(), x[:, None, 0].shape
    ([5, 4, 3], [2, 1])
    """
    spec, tensors = parse_index(index)
    if STATE.builder is None and x._node is not None:
        # Read through a handle on the value x holds now: getitem's grad needs only x's shape,
        # so a later `x[...] = ...` (which rebinds x) must not invalidate this op.
        x = x._shallow_copy()
    return bind(GETITEM, (x, *tensors), {"index": spec})


# ---- setitem ---------------------------------------------------------------------------------

def _setitem_kernel(xp, x, value, *tensors, index):
    out = x.copy()
    ix = build_index(xp, index, tensors)
    out[ix] = _fitted(value, out, ix)
    return out


def _fitted(value, out, ix):
    """`value` without the leading 1s beyond the selection's rank, as the infer rule allows
    and Paddle does (`pads[3] = h // 2` with `h` of shape [1]); NumPy refuses them."""
    if getattr(value, "ndim", 0):
        nd = out[ix].ndim
        while value.ndim > nd and value.shape[0] == 1:
            value = value.reshape(value.shape[1:])
    return value


def _setitem_infer(x, value, *tensors, index):
    I.check_tensor("setitem", "x", x)
    target = index_shape("setitem", tuple(x.shape), index, tensors)
    if I.is_meta(value):
        vs = tuple(value.shape)
        while len(vs) > len(target) and vs[0] == 1:
            vs = vs[1:]
        if len(vs) > len(target) or any(v not in (1, t, -1) and t != -1
                                        for v, t in zip(vs[::-1], target[::-1])):
            raise OpError(f"setitem: value of shape {I.fmt(value.shape)} cannot be assigned to "
                          f"the selection of shape {I.fmt(target)} (x shape {I.fmt(x.shape)})")
    return Meta(x.shape, x.dtype)


def _setitem_grad(ins, outs, gs, a):
    x, value, tensors = ins[0], ins[1], ins[2:]
    gx = bind(SETITEM, (gs[0], 0.0, *tensors), a)
    gv = None
    if is_tensor(value) and value.dtype.is_floating:
        gv = bind(GETITEM, (gs[0], *tensors), a)
        gv = sum_to_like(gv, value) if value.ndim <= gv.ndim else reshape_as(gv, value)
        if value.dtype != x.dtype:
            gv = cast(gv, value.dtype)
    return [gx, gv] + [None] * len(tensors)


SETITEM = register("setitem", kernel=_setitem_kernel, infer=_setitem_infer,
                   grad=_setitem_grad, amp="keep",
                   doc="A copy of x with x[index] = value (value broadcast, cast to x's dtype).")


def _as_value(x, value):
    if is_tensor(value) or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, numbers.Number):
        return value.item() if hasattr(value, "item") else value
    return core.to_tensor(np.asarray(value), dtype=x.dtype)


def setitem(x, index, value) -> None:
    """x[index] = value. Writes into x's array when autograd does not track x or value (or,
    for a leaf, under no_grad); otherwise (and in static mode) x is rebound to a
    differentiable copy; an eager tensor a program being built captured is overwritten when
    the program runs (`set_value`).

    >>> import runtime as rt
    >>> x = rt.zeros([2, 3])
    >>> x[:, 1] = 5.0
    >>> x.tolist()
    [[0.0, 5.0, 0.0], [0.0, 5.0, 0.0]]
    """
    spec, tensors = parse_index(index)
    value = _as_value(x, value)
    attrs = {"index": spec}
    tracked = is_tensor(value) and not value.stop_gradient
    if STATE.builder is None and x._node is None and (
            not STATE.grad_enabled or (x.stop_gradient and not tracked)):
        _write_in_place(x, value, tensors, attrs)
        return
    # The op must see the value x holds now, not the object that is about to be rebound.
    before = x if STATE.builder is not None else x._shallow_copy()
    out = bind(SETITEM, (before, value, *tensors), attrs)
    if STATE.builder is not None and not isinstance(x, core.VariableBase) and (
            x.stop_gradient or out.stop_gradient):
        _write_captured(x, out)
        return
    if STATE.builder is not None:
        STATE.builder.overwrote(x, out)
    x._inplace_update(out)


def _write_captured(x, out) -> None:
    """`x[...] = v` on an eager tensor that the program being built captured (a Layer's
    buffer, a global): an op that overwrites its array when the program runs (`set_value`),
    which what the program does after it reads. Eager code would make a buffer written with a
    value that requires a gradient part of the graph, history that outlives the call: refused."""
    if not out.stop_gradient:
        raise RuntimeError(
            "x[...] = value with a value that requires a gradient, into a tensor created "
            f"outside the converted function (a Layer's buffer or a global, {x.dtype.name}"
            f"{list(x.shape)}): a program writes such a tensor when it runs, "
            "with no gradient path through it. Write value.detach() (a cache), or copy the "
            "tensor into the function first (buf = self.buf.clone()) and return it.")
    x.set_value(out)


def _write_in_place(x, value, tensors, attrs):
    data = x._data
    if getattr(data, "base", None) is not None or not getattr(data.flags, "writeable", True):
        data = data.copy()  # never write through a view into another tensor's array
    try:
        idx = build_index(backend.XP, attrs["index"], [t._data for t in tensors])
        data[idx] = _fitted(value._data, data, idx) if is_tensor(value) else value
    except (OpError, OpTypeError):
        raise
    except Exception as e:
        raise explain_failure(SETITEM, (x, value, *tensors), attrs, e) from e
    x._data = data
    x._version += 1


# ---- slice / strided_slice -------------------------------------------------------------------

def _slice_spec(op, x, axes, starts, ends, strides):
    if not len(axes) == len(starts) == len(ends) == len(strides):
        raise OpError(f"{op}: axes {list(axes)}, starts, ends and strides must have the same "
                      "length")
    items = [builtins.slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, strides):
        items[I.norm_axis(op, a, x.ndim)] = builtins.slice(s, e, st)
    return tuple(items)


def slice(x, axes, starts, ends, name=None):  # Paddle's name, shadowing the builtin
    """x[starts[i]:ends[i]] along each axis in `axes` (bounds clamp like Python slices;
    they may be int tensors).

    >>> import runtime as rt
    >>> rt.slice(rt.ones([4, 5]), axes=[1], starts=[1], ends=[10]).shape
    [4, 4]
    """
    return getitem(x, _slice_spec("slice", x, axes, starts, ends, [None] * len(axes)))


def strided_slice(x, axes, starts, ends, strides, name=None):
    """x[starts[i]:ends[i]:strides[i]] along each axis in `axes`.

    >>> import runtime as rt
    >>> rt.strided_slice(rt.arange(6), [0], [5], [0], [-2]).tolist()
    [5, 3, 1]
    """
    return getitem(x, _slice_spec("strided_slice", x, axes, starts, ends, strides))


METHODS = {"__getitem__": getitem, "__setitem__": setitem, "slice": slice,
           "strided_slice": strided_slice}

__all__ = ["slice", "strided_slice"]
