"""Writes at indices that return a new tensor: `put_along_axis` (Paddle's, the inverse of
`take_along_axis`) and `scatter_nd_add`. Gradients go to the tensor written into and to the
values written."""
from __future__ import annotations

from . import infer as I
from .elementwise import sum_to_like
from .gather import _grid_index, gather_nd, scatter_add, take_along_axis
from .registry import Meta, OpError, bind, register

# ---- put_along_axis --------------------------------------------------------------------------

_REDUCES = ("assign", "add")


def _put_kernel(xp, arr, indices, values, axis, reduce="assign"):
    out = arr.copy()
    where = _grid_index(xp, indices, axis % arr.ndim)
    values = xp.broadcast_to(xp.asarray(values, dtype=arr.dtype), indices.shape)
    if reduce == "add":
        scatter_add(xp, out, where, values)
        return out
    flat = xp.arange(arr.size).reshape(arr.shape)[where].reshape(-1)
    if xp.unique(flat).size != flat.size:
        raise OpError("put_along_axis: indices name one position more than once; with "
                      "reduce='assign' the value written there would depend on the write "
                      "order. Use reduce='add', or indices without repeats")
    out[where] = values
    return out


def _put_infer(arr, indices, values, axis, reduce="assign"):
    I.check_tensor("put_along_axis", "arr", arr)
    I.norm_axis("put_along_axis", axis, len(arr.shape))
    if len(indices.shape) != len(arr.shape):
        raise OpError(f"put_along_axis: indices has shape {I.fmt(indices.shape)} but arr has "
                      f"shape {I.fmt(arr.shape)}; they must have the same rank")
    if I.is_meta(values):
        I.broadcast_shapes("put_along_axis", values.shape, indices.shape, ("values", "indices"))
    return Meta(arr.shape, arr.dtype)


def _put_grad(ins, outs, gs, a):
    _, indices, values = ins
    g = gs[0]
    axis = a["axis"]
    d_arr = g if a.get("reduce", "assign") == "add" else put_along_axis(g, indices, 0.0, axis)
    d_values = None
    if I.is_meta(values) or hasattr(values, "shape"):
        d_values = sum_to_like(take_along_axis(g, indices, axis), values)
    return [d_arr, None, d_values]


PUT_ALONG_AXIS = register(
    "put_along_axis", kernel=_put_kernel, infer=_put_infer, grad=_put_grad, amp="keep",
    doc="A copy of arr with `values` written (or added) along `axis` at `indices`.")


def put_along_axis(arr, indices, values, axis: int, reduce: str = "assign", name=None):
    """A copy of `arr` with `values` (broadcast to `indices`' shape) written along `axis` at
    `indices` (same rank as `arr`); `reduce='add'` adds them instead (repeats accumulate).

    >>> import runtime as rt
    >>> x = rt.zeros([2, 3])
    >>> rt.put_along_axis(x, rt.to_tensor([[2], [0]]), 1.0, axis=1).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    if reduce not in _REDUCES:
        raise OpError(f"put_along_axis: reduce={reduce!r} is not supported; use one of "
                      f"{list(_REDUCES)}")
    return bind(PUT_ALONG_AXIS, (arr, indices, values), {"axis": int(axis), "reduce": reduce})


# ---- scatter_nd_add --------------------------------------------------------------------------

def _nd_kernel(xp, x, index, updates):
    out = x.copy()
    k = index.shape[-1]
    scatter_add(xp, out, tuple(index[..., i] for i in range(k)), updates)
    return out


def _nd_infer(x, index, updates):
    I.check_tensor("scatter_nd_add", "x", x)
    k = index.shape[-1] if index.shape else -1
    if k != -1 and k > len(x.shape):
        raise OpError(f"scatter_nd_add: index has shape {I.fmt(index.shape)}; its last dim "
                      f"({k}) cannot exceed x's rank ({len(x.shape)})")
    if k != -1 and -1 not in updates.shape:
        want = tuple(index.shape[:-1]) + tuple(x.shape[k:])
        if -1 not in want and tuple(updates.shape) != want:
            raise OpError(f"scatter_nd_add: updates has shape {I.fmt(updates.shape)}; with x "
                          f"{I.fmt(x.shape)} and index {I.fmt(index.shape)} it must be "
                          f"{I.fmt(want)}")
    return Meta(x.shape, x.dtype)


SCATTER_ND_ADD = register(
    "scatter_nd_add", kernel=_nd_kernel, infer=_nd_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [gs[0], None, gather_nd(gs[0], ins[1])],
    doc="A copy of x with each slice of `updates` added at the position its index row "
        "names (repeats accumulate).")


def scatter_nd_add(x, index, updates, name=None):
    """A copy of `x` with `updates` added at `index`: each row `index[..., :]` (k entries)
    names a slice `x[i0, ..., ik-1]`, and repeated rows accumulate.

    >>> import runtime as rt
    >>> rt.scatter_nd_add(rt.zeros([3]), rt.to_tensor([[1], [1]]), rt.ones([2])).tolist()
    [0.0, 2.0, 0.0]
    """
    return bind(SCATTER_ND_ADD, (x, index, updates), {})


METHODS = {"put_along_axis": put_along_axis, "scatter_nd_add": scatter_nd_add}

__all__ = ["put_along_axis", "scatter_nd_add"]
