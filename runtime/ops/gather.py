"""Selecting elements by index: gather, index_select, gather_nd, scatter, masked_select,
take_along_axis, sort, argsort, topk, one_hot.

Each differentiable gather has a `*_grad` op that scatter-adds g into zeros shaped like x (the
adjoint), whose own grad is the gather again, so higher-order grads come free. Duplicate
indices accumulate in the adjoint, as the chain rule says.
"""
from __future__ import annotations

from ..dtypes import float32, int64
from . import infer as I
from .creation import full_like, is_tensor
from .elementwise import sum_to_like
from .registry import Meta, OpError, OpTypeError, bind, register


def _check_index(op: str, index, arg: str = "index"):
    I.check_tensor(op, arg, index)
    if not index.dtype.is_integer:
        raise OpTypeError(f"{op}: {arg} must be an integer tensor, got {index.dtype.name} "
                          f"(shape {I.fmt(index.shape)})")


def scatter_add(xp, out, index, values) -> None:
    """out[index] += values, accumulating repeated indices (NumPy's `add.at`).

    Written as a bincount over flat positions: it runs on NumPy and CuPy alike (CuPy's
    `ufunc.at` covers only some dtypes) and is faster than `np.add.at`.
    """
    pos = xp.arange(out.size).reshape(out.shape)[index]
    values = xp.broadcast_to(values, pos.shape)
    acc = xp.bincount(pos.reshape(-1), weights=values.reshape(-1).astype("float64"),
                      minlength=out.size)
    out += acc.reshape(out.shape).astype(out.dtype, copy=False)


def _like_x(g, x, *_, **__):
    return Meta(x.shape, g.dtype)


# ---- gather / index_select -------------------------------------------------------------------

def _gather_infer(x, index, axis=0):
    I.check_tensor("gather", "x", x)
    _check_index("gather", index)
    ax = I.norm_axis("gather", axis, len(x.shape))
    return Meta(x.shape[:ax] + index.shape + x.shape[ax + 1:], x.dtype)


def _gather_grad_kernel(xp, g, x, index, axis=0):
    out = xp.zeros(x.shape, dtype=g.dtype)
    scatter_add(xp, out, (slice(None),) * (axis % x.ndim) + (index,), g)
    return out


GATHER = register(
    "gather", kernel=lambda xp, x, index, axis=0: xp.take(x, index, axis=axis),
    infer=_gather_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [bind(GATHER_GRAD, (gs[0], ins[0], ins[1]), a), None])
GATHER_GRAD = register(
    "gather_grad", kernel=_gather_grad_kernel, infer=_like_x, amp="keep",
    grad=lambda ins, outs, gs, a: [bind(GATHER, (gs[0], ins[2]), a), None, None],
    doc="Scatter-add g into zeros like x at `index` along `axis` (the grad of gather).")


def gather(x, index, axis: int = 0, name=None):
    """The slices of x at positions `index` (an int tensor; its shape replaces that axis)
    along `axis`.

    >>> import runtime as rt
    >>> rt.gather(rt.arange(5) * 10, rt.to_tensor([3, 0])).tolist()
    [30, 0]
    """
    return bind(GATHER, (x, index), {"axis": int(axis)} if axis else {})


def index_select(x, index, axis: int = 0, name=None):
    """The same as `gather` (Paddle's name for it).

    >>> import runtime as rt
    >>> rt.index_select(rt.eye(3), rt.to_tensor([2]), axis=1).tolist()
    [[0.0], [0.0], [1.0]]
    """
    return gather(x, index, axis)


# ---- gather_nd -------------------------------------------------------------------------------

def _nd_index(index):
    return tuple(index[..., i] for i in range(index.shape[-1]))


def _gather_nd_kernel(xp, x, index):
    k = index.shape[-1]
    if k == 0:
        return xp.broadcast_to(x, index.shape[:-1] + x.shape).copy()
    return x[_nd_index(index)]


def _gather_nd_infer(x, index):
    I.check_tensor("gather_nd", "x", x)
    _check_index("gather_nd", index)
    if not index.shape:
        raise OpError("gather_nd: index must have at least 1 dim, got a 0-d index")
    k = index.shape[-1]
    if k == -1:
        raise OpError(f"gather_nd: the last dim of index (shape {I.fmt(index.shape)}) must be "
                      "known")
    if k > len(x.shape):
        raise OpError(f"gather_nd: index has shape {I.fmt(index.shape)}, whose last dim {k} "
                      f"exceeds the rank of x (shape {I.fmt(x.shape)})")
    return Meta(index.shape[:-1] + x.shape[k:], x.dtype)


def _gather_nd_grad_kernel(xp, g, x, index):
    out = xp.zeros(x.shape, dtype=g.dtype)
    if index.shape[-1] == 0:
        return out + g.reshape((-1,) + x.shape).sum(axis=0)
    scatter_add(xp, out, _nd_index(index), g)
    return out


GATHER_ND = register(
    "gather_nd", kernel=_gather_nd_kernel, infer=_gather_nd_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [bind(GATHER_ND_GRAD, (gs[0], ins[0], ins[1]), {}), None])
GATHER_ND_GRAD = register(
    "gather_nd_grad", kernel=_gather_nd_grad_kernel, infer=_like_x, amp="keep",
    grad=lambda ins, outs, gs, a: [gather_nd(gs[0], ins[2]), None, None],
    doc="Scatter-add g into zeros like x at the index tuples (the grad of gather_nd).")


def gather_nd(x, index, name=None):
    """Gather slices of x addressed by the last dim of `index` (index[..., k] indexes the
    first k axes of x).

    >>> import runtime as rt
    >>> rt.gather_nd(rt.eye(3), rt.to_tensor([[0, 0], [1, 2]])).tolist()
    [1.0, 0.0]
    """
    return bind(GATHER_ND, (x, index), {})


# ---- scatter ---------------------------------------------------------------------------------

def _scatter_kernel(xp, x, index, updates, overwrite=True):
    out = x.copy()
    if overwrite:
        out[index] = updates
    else:
        out[index] = 0
        scatter_add(xp, out, index, updates)
    return out


def _scatter_infer(x, index, updates, overwrite=True):
    I.check_tensor("scatter", "x", x)
    I.check_tensor("scatter", "updates", updates)
    _check_index("scatter", index)
    if len(index.shape) != 1 or not x.shape:
        raise OpError(f"scatter: index must be 1-D and x at least 1-D, got index shape "
                      f"{I.fmt(index.shape)} and x shape {I.fmt(x.shape)}")
    want = index.shape + x.shape[1:]
    if len(updates.shape) != len(want) or any(
            a != b and -1 not in (a, b) for a, b in zip(updates.shape, want)):
        raise OpError(f"scatter: updates has shape {I.fmt(updates.shape)} but index has shape "
                      f"{I.fmt(index.shape)} and x has shape {I.fmt(x.shape)}; updates must "
                      f"have shape {I.fmt(want)}")
    if updates.dtype != x.dtype:
        raise OpTypeError(f"scatter: updates has dtype {updates.dtype.name} but x has "
                          f"{x.dtype.name}")
    return Meta(x.shape, x.dtype)


SCATTER = register(
    "scatter", kernel=_scatter_kernel, infer=_scatter_infer, amp="promote",
    grad=lambda ins, outs, gs, a: [
        scatter(gs[0], ins[1], full_like(ins[2], 0.0)), None, gather(gs[0], ins[1])],
    doc="Rows of x at `index` overwritten by (or, overwrite=False, set to the sum of) updates.")


def scatter(x, index, updates, overwrite: bool = True, name=None):
    """A copy of x whose rows `index` are replaced by `updates`; with overwrite=False rows
    named several times get the sum of their updates. (With duplicate indices and
    overwrite=True the last update wins, and every duplicate receives the gradient.)

    >>> import runtime as rt
    >>> rt.scatter(rt.zeros([3]), rt.to_tensor([1]), rt.ones([1])).tolist()
    [0.0, 1.0, 0.0]
    """
    return bind(SCATTER, (x, index, updates), {} if overwrite else {"overwrite": False})


# ---- masked_select ---------------------------------------------------------------------------

def _masked_infer(x, mask):
    I.check_tensor("masked_select", "x", x)
    I.check_tensor("masked_select", "mask", mask)
    if mask.dtype != "bool":
        raise OpTypeError(f"masked_select: mask must be bool, got {mask.dtype.name}")
    I.broadcast_shapes("masked_select", x.shape, mask.shape, ("x", "mask"))
    return Meta((-1,), x.dtype)


def _masked_kernel(xp, x, mask):
    if x.shape != mask.shape:
        x, mask = xp.broadcast_arrays(x, mask)
    return x[mask]


def _masked_grad_kernel(xp, g, x, mask):
    shape = xp.broadcast_arrays(x, mask)[0].shape
    out = xp.zeros(shape, dtype=g.dtype)
    out[xp.broadcast_to(mask, shape)] = g
    return out


MASKED_SELECT = register(
    "masked_select", kernel=_masked_kernel, infer=_masked_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [
        sum_to_like(bind(MASKED_SELECT_GRAD, (gs[0], ins[0], ins[1]), {}), ins[0]), None],
    doc="The elements of x where mask (broadcast with x) is true, as a 1-D tensor whose "
        "length is known only at run time (-1 in static shapes).")
MASKED_SELECT_GRAD = register(
    "masked_select_grad", kernel=_masked_grad_kernel, amp="keep",
    infer=lambda g, x, mask: Meta(I.broadcast_shapes("masked_select_grad", x.shape, mask.shape),
                                  g.dtype),
    grad=lambda ins, outs, gs, a: [masked_select(gs[0], ins[2]), None, None],
    doc="g written into zeros of the broadcast shape of x and mask where mask is true.")


def masked_select(x, mask, name=None):
    """The elements of x where `mask` is true (1-D).

    >>> import runtime as rt
    >>> x = rt.arange(4)
    >>> rt.masked_select(x, x > 1).tolist()
    [2, 3]
    """
    return bind(MASKED_SELECT, (x, mask), {})


# ---- take_along_axis / sort / argsort / topk -------------------------------------------------

def _grid_index(xp, index, axis):
    """An index tuple t with x[t] == take_along_axis(x, index, axis)."""
    t = []
    for d, n in enumerate(index.shape):
        if d == axis:
            t.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            t.append(xp.arange(n).reshape(shape))
    return tuple(t)


def _along_grad_kernel(xp, g, x, index, axis):
    out = xp.zeros(x.shape, dtype=g.dtype)
    scatter_add(xp, out, _grid_index(xp, index, axis % x.ndim), g)
    return out


def _along_infer(x, index, axis):
    I.check_tensor("take_along_axis", "x", x)
    _check_index("take_along_axis", index, "indices")
    I.norm_axis("take_along_axis", axis, len(x.shape))
    if len(index.shape) != len(x.shape):
        raise OpError(f"take_along_axis: indices has shape {I.fmt(index.shape)} but x has "
                      f"shape {I.fmt(x.shape)}; they must have the same rank")
    return Meta(index.shape, x.dtype)


TAKE_ALONG_AXIS = register(
    "take_along_axis", kernel=lambda xp, x, index, axis: xp.take_along_axis(x, index, axis),
    infer=_along_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [_along_grad(gs[0], ins[0], ins[1], a["axis"]), None])
TAKE_ALONG_AXIS_GRAD = register(
    "take_along_axis_grad", kernel=_along_grad_kernel, infer=_like_x, amp="keep",
    grad=lambda ins, outs, gs, a: [take_along_axis(gs[0], ins[2], a["axis"]), None, None],
    doc="Scatter-add g into zeros like x along `axis` (the grad of take_along_axis, sort, "
        "topk).")


def _along_grad(g, x, index, axis):
    return bind(TAKE_ALONG_AXIS_GRAD, (g, x, index), {"axis": axis})


def take_along_axis(arr, indices, axis: int, name=None):
    """Pick values of `arr` along `axis` at `indices` (same rank as arr).

    >>> import runtime as rt
    >>> rt.take_along_axis(rt.to_tensor([[5, 6]]), rt.to_tensor([[1, 1, 0]]), 1).tolist()
    [[6, 6, 5]]
    """
    return bind(TAKE_ALONG_AXIS, (arr, indices), {"axis": axis})


def _sorted_index(xp, x, axis, descending, kind):
    idx = xp.argsort(x, axis=axis, kind=kind)
    return xp.flip(idx, axis=axis) if descending else idx


def _sort_kernel(xp, x, axis=-1, descending=False, kind="stable"):
    idx = _sorted_index(xp, x, axis, descending, kind)
    return xp.take_along_axis(x, idx, axis), idx


def _sort_infer(x, axis=-1, descending=False, kind="stable"):
    I.check_tensor("sort", "x", x)
    I.norm_axis("sort", axis, len(x.shape))
    return Meta(x.shape, x.dtype), Meta(x.shape, int64)


SORT = register(
    "sort", kernel=_sort_kernel, infer=_sort_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [_along_grad(gs[0], ins[0], outs[1], a.get("axis", -1))],
    doc="(values, indices) of x sorted along `axis`.")


def _sort(x, axis, descending, kind):
    attrs = {"axis": axis} if axis != -1 else {}
    if descending:
        attrs["descending"] = True
    if kind != "stable":  # (NumPy's `kind`: None is its default, unstable for equal items)
        attrs["kind"] = kind
    return bind(SORT, (x,), attrs)


def sort(x, axis: int = -1, descending: bool = False, name=None, *, kind="stable"):
    """x sorted along `axis` (`kind`: NumPy's sorting algorithm, equal items in their order
    by default).

    >>> import runtime as rt
    >>> rt.sort(rt.to_tensor([3, 1, 2])).tolist()
    [1, 2, 3]
    """
    return _sort(x, axis, descending, kind)[0]


def argsort(x, axis: int = -1, descending: bool = False, name=None, *, kind="stable"):
    """The int64 indices that sort x along `axis` (`kind` as `sort`'s: with None, NumPy's
    default, the order of equal items is NumPy's own, as `np.argsort(a)` gives it).

    >>> import runtime as rt
    >>> rt.argsort(rt.to_tensor([3, 1, 2])).tolist()
    [1, 2, 0]
    """
    return _sort(x, axis, descending, kind)[1]


def _topk_kernel(xp, x, k, axis=-1, largest=True, tensor_k=False):
    if tensor_k:
        k = _run_time_size("topk", "k", k, 0, x.shape[axis] if x.ndim else 1)
    idx = _sorted_index(xp, x, axis, largest, "stable")
    idx = xp.take(idx, xp.arange(k), axis=axis)
    return xp.take_along_axis(x, idx, axis), idx


def _topk_infer(x, k, axis=-1, largest=True, tensor_k=False):
    I.check_tensor("topk", "x", x)
    ax = I.norm_axis("topk", axis, len(x.shape))
    n = x.shape[ax] if x.shape else 1
    if tensor_k:  # (k known when the op runs: the counter of a graph loop)
        _check_size_input("topk", "k", k)
        shape = x.shape[:ax] + (-1,) + x.shape[ax + 1:]
        return Meta(shape, x.dtype), Meta(shape, int64)
    if not isinstance(k, int) or k < 0 or (n != -1 and k > n):
        raise OpError(f"topk: k={k} must be between 0 and the size {n} of axis {axis} of x "
                      f"(shape {I.fmt(x.shape)})")
    shape = x.shape[:ax] + (k,) + x.shape[ax + 1:]
    return Meta(shape, x.dtype), Meta(shape, int64)


TOPK = register(
    "topk", kernel=_topk_kernel, infer=_topk_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [_along_grad(gs[0], ins[0], outs[1], a.get("axis", -1))] +
    [None] * (len(ins) - 1),
    doc="(values, indices) of the k largest (or smallest) entries along `axis`, sorted (k "
        "an attr, or with `tensor_k` a one-value int input).")


def topk(x, k: int, axis: int = -1, largest: bool = True, sorted: bool = True,
         name=None):
    """The k largest (largest=False: smallest) values of x along `axis` and their int64
    indices; the values are always sorted.

    >>> import runtime as rt
    >>> v, i = rt.topk(rt.to_tensor([1.0, 5.0, 3.0]), 2)
    >>> v.tolist(), i.tolist()
    ([5.0, 3.0], [1, 2])
    """
    # a tensor k (the counter of a graph loop) is an input: the size along `axis` is then
    # known when the op runs
    attrs = {"tensor_k": True} if is_tensor(k) else {"k": int(k)}
    if axis != -1:
        attrs["axis"] = axis
    if not largest:
        attrs["largest"] = False
    return bind(TOPK, (x, k) if is_tensor(k) else (x,), attrs)


# ---- one_hot ---------------------------------------------------------------------------------

def _one_hot_kernel(xp, x, num_classes, tensor_classes=False):
    if tensor_classes:
        num_classes = _run_time_size("one_hot", "num_classes", num_classes, 1, None)
    if x.dtype.kind not in "iu":
        raise OpTypeError(f"one_hot: x must be an integer tensor, got {x.dtype} (shape "
                          f"{list(x.shape)})")
    if x.size and (int(x.min()) < 0 or int(x.max()) >= num_classes):
        raise OpError(f"one_hot: x has values in [{int(x.min())}, {int(x.max())}], outside "
                      f"[0, {num_classes}) for num_classes={num_classes}")
    return (x[..., None] == xp.arange(num_classes)).astype(float32.np)


def _one_hot_infer(x, num_classes, tensor_classes=False):
    _check_index("one_hot", x, "x")
    if tensor_classes:  # (known when the op runs: the counter of a graph loop)
        _check_size_input("one_hot", "num_classes", num_classes)
        return Meta(tuple(x.shape) + (-1,), float32)
    if not isinstance(num_classes, int) or num_classes < 1:
        raise OpError(f"one_hot: num_classes must be a positive int, got {num_classes!r}")
    return Meta(tuple(x.shape) + (num_classes,), float32)


ONE_HOT = register("one_hot", kernel=_one_hot_kernel, infer=_one_hot_infer, nondiff=True,
                   amp="keep", doc="float32 one-hot encoding of integer labels x.")


def one_hot(x, num_classes: int, name=None):
    """float32 one-hot vectors for the integer labels in x (a new last axis).

    >>> import runtime as rt
    >>> rt.one_hot(rt.to_tensor([2, 0]), 3).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    if is_tensor(num_classes):  # (the counter of a graph loop: an input)
        return bind(ONE_HOT, (x, num_classes), {"tensor_classes": True})
    return bind(ONE_HOT, (x,), {"num_classes": int(num_classes)})


def _check_size_input(op: str, arg: str, size) -> None:
    """A size given as a tensor: one int value."""
    if not size.dtype.is_integer or size.shape not in ((), (1,)):
        raise OpTypeError(f"{op}: {arg} must be an int or a one-value int tensor, got "
                          f"{size.dtype.name}{I.fmt(size.shape)}")


def _run_time_size(op: str, arg: str, size, low: int, high: int | None) -> int:
    """A size input's value, checked to be an int in [low, high] when the op runs."""
    if size.dtype.kind not in "iu" or size.size != 1:
        raise OpTypeError(f"{op}: {arg} must be an int or a one-value int tensor, got "
                          f"{size.dtype}{list(size.shape)}")
    n = int(size.reshape(()))
    if n < low or (high is not None and n > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise OpError(f"{op}: {arg}={n} must be {bound}")
    return n


METHODS = {
    "gather": gather, "index_select": index_select, "gather_nd": gather_nd, "scatter": scatter,
    "masked_select": masked_select, "take_along_axis": take_along_axis, "sort": sort,
    "argsort": argsort, "topk": topk,
}

__all__ = ["argsort", "gather", "gather_nd", "index_select", "masked_select", "one_hot",
           "scatter", "sort", "take_along_axis", "topk"]
