"""Joining and splitting tensors: concat, stack, unstack, split, chunk.

`split_like(g, xs)` (the grad of concat) splits by the sizes of xs read at run time, so the
grad works when a static dim is -1.
"""
from __future__ import annotations

import itertools

from .. import core
from . import infer as I
from .registry import Meta, OpError, OpTypeError, bind, register


def _pieces(arrays):
    """Kernel result for a variable number of outputs: a lone output is returned bare (the
    static executor assigns a single-output op's result as it is)."""
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def _as_list(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


def _same_dtype(op: str, dtypes) -> None:
    first = dtypes[0]
    for i, d in enumerate(dtypes):
        if d != first:
            raise OpTypeError(f"{op}: all inputs must have the same dtype, but x[0] is "
                              f"{getattr(first, 'name', first)} and x[{i}] is "
                              f"{getattr(d, 'name', d)}")


def _list_infer(op: str, xs, axis: int, insert: bool) -> tuple:
    """Check a list of tensors for concat/stack; returns (normalised axis, merged shape)."""
    if not isinstance(xs, (list, tuple)) or not xs:
        raise OpError(f"{op}: x must be a non-empty list of tensors")
    for i, m in enumerate(xs):
        I.check_tensor(op, f"x[{i}]", m)
    _same_dtype(op, [m.dtype for m in xs])
    nd = len(xs[0].shape)
    shapes = ", ".join(I.fmt(m.shape) for m in xs)
    if not insert and nd == 0:
        raise OpError(f"{op}: cannot concatenate 0-d tensors (shapes {shapes})")
    ax = I.norm_axis(op, axis, nd + 1 if insert else nd)
    merged = list(xs[0].shape)
    for i, m in enumerate(xs):
        if len(m.shape) != nd:
            raise OpError(f"{op}: all inputs must have the same rank, got shapes {shapes}")
        for d, (a, b) in enumerate(zip(merged, m.shape)):
            if d == ax and not insert:
                continue
            if a != b and a != -1 and b != -1:
                raise OpError(f"{op}: x[{i}] has shape {I.fmt(m.shape)} but x[0] has shape "
                              f"{I.fmt(xs[0].shape)}; dim {d} differs ({b} vs {a}); "
                              f"shapes {shapes}")
            merged[d] = a if a != -1 else b
    return ax, merged


def _concat_infer(xs, axis=0):
    ax, merged = _list_infer("concat", xs, axis, insert=False)
    sizes = [m.shape[ax] for m in xs]
    merged[ax] = -1 if -1 in sizes else sum(sizes)
    return Meta(tuple(merged), xs[0].dtype)


def _join_kernel(op: str, fn: str):
    """The kernel of concat / stack: `xp.<fn>` of same-dtype arrays."""
    def kernel(xp, xs, axis=0):
        _same_dtype(op, [a.dtype for a in xs])
        return getattr(xp, fn)(xs, axis=axis)
    return kernel


# "concat" / "stack" -> the function joining a tensor array (a list grown inside a static
# loop; its own op): filled in by `arrays.py`, which imports this module (and which made any
# tensor array there is)
ARRAY_JOINS: dict = {}
# "split" -> the function splitting a tensor into a tensor array of a number of parts known
# only when the program runs (a static Variable count); "sections" -> the one splitting it by
# sections some of which the program computes: filled in by `array_split.py`
ARRAY_SPLITS: dict = {}


# what a sequence given to concat / stack that is no list or tuple (`d.values()`) is read as:
# filled in by d2s (the values a converted program has on this run, where the dict's keys
# exist on some paths only), else the sequence itself
SEQUENCE_READS: list = []


def refuse_rows(x, what: str) -> None:
    """`what` of `x.tolist()` whose first dim only the run decides (an array of the rows,
    `array_split.row_lists`), which converted code takes only as eager's list of lists."""
    if getattr(x, "row_lists", False):
        raise TypeError(
            f"{what} of `x.tolist()` of a tensor whose first dim only the run decides: a "
            "program holds that list of lists as the tensor's rows, which it returns, stores, "
            "iterates, indexes, slices, and takes len(), zip() and enumerate() of. Compute on "
            "the tensor itself (`x` for rt.stack of its rows, `x.sum(0)`, "
            "`(x == v).all(1).any()`), or on the returned lists")


def _join(op, how: str, x, axis):
    """concat / stack of a list of tensors, or of a tensor array (`ARRAY_JOINS`)."""
    if SEQUENCE_READS and not isinstance(x, (list, tuple)):
        x = SEQUENCE_READS[0](x, how)
    refuse_rows(x, f"rt.{how}()")
    if getattr(x, "is_array", False):
        return ARRAY_JOINS[how](x, int(axis))
    return bind(op, (list(x),), {"axis": int(axis)} if axis else {})


CONCAT = register(
    "concat", kernel=_join_kernel("concat", "concatenate"), infer=_concat_infer,
    grad=lambda ins, outs, gs, a: [split_like(gs[0], ins[0], a.get("axis", 0))],
    amp="promote")


def _split_like_kernel(xp, g, xs, axis=0):
    ends = list(itertools.accumulate(x.shape[axis] for x in xs))
    return _pieces(xp.split(g, ends[:-1], axis=axis))


SPLIT_LIKE = register(
    "split_like", kernel=_split_like_kernel,
    infer=lambda g, xs, axis=0: tuple(Meta(x.shape, g.dtype) for x in xs),
    grad=lambda ins, outs, gs, a: [concat(list(gs), a.get("axis", 0)), None], amp="keep",
    doc="g split along `axis` into pieces the sizes of xs at run time (the grad of concat).")


def split_like(g, xs, axis=0) -> list:
    return _as_list(bind(SPLIT_LIKE, (g, list(xs)), {"axis": axis} if axis else {}))


def concat(x, axis: int = 0, name=None):
    """Join a list of tensors (same dtype, same shape except along `axis`).

    >>> import runtime as rt
    >>> rt.concat([rt.ones([2, 3]), rt.zeros([1, 3])]).shape
    [3, 3]
    """
    return _join(CONCAT, "concat", x, axis)


def _stack_infer(xs, axis=0):
    ax, merged = _list_infer("stack", xs, axis, insert=True)
    merged.insert(ax, len(xs))
    return Meta(tuple(merged), xs[0].dtype)


STACK = register(
    "stack", kernel=_join_kernel("stack", "stack"), infer=_stack_infer,
    grad=lambda ins, outs, gs, a: [unstack(gs[0], a.get("axis", 0), len(ins[0]))],
    amp="promote")


def stack(x, axis: int = 0, name=None):
    """Join a list of same-shaped tensors along a new axis.

    >>> import runtime as rt
    >>> rt.stack([rt.ones([2]), rt.zeros([2])], axis=1).shape
    [2, 2]
    """
    return _join(STACK, "stack", x, axis)


def _unstack_infer(x, axis=0, num=None):
    I.check_tensor("unstack", "x", x)
    ax = I.norm_axis("unstack", axis, len(x.shape))
    n = x.shape[ax] if num is None else num
    if n == -1:
        raise OpError(f"unstack: axis {axis} of x (shape {I.fmt(x.shape)}) has an unknown size; "
                      "pass num")
    shape = x.shape[:ax] + x.shape[ax + 1:]
    return tuple(Meta(shape, x.dtype) for _ in range(n))


UNSTACK = register(
    "unstack", kernel=lambda xp, x, axis=0, num=None: _pieces(list(xp.moveaxis(x, axis, 0))),
    infer=_unstack_infer,
    grad=lambda ins, outs, gs, a: [stack(list(gs), a.get("axis", 0))], amp="keep")


def unstack(x, axis: int = 0, num: int | None = None, name=None) -> list:
    """Split x into a list of tensors along `axis`, dropping that axis.

    >>> import runtime as rt
    >>> [t.shape for t in rt.unstack(rt.ones([2, 3]), axis=1)]
    [[2], [2], [2]]
    """
    attrs = {"axis": axis} if axis else {}
    if num is not None:
        attrs["num"] = num
    return _as_list(bind(UNSTACK, (x,), attrs))


def _split_sizes(op: str, n: int, num=None, sections=None, axis=0, xshape=()) -> list:
    """Section sizes along an axis of size n (-1: unknown)."""
    if num is not None:
        if num <= 0:
            raise OpError(f"{op}: num_or_sections must be positive, got {num}")
        if n == -1:
            return [-1] * num
        if n % num:
            raise OpError(f"{op}: axis {axis} of x (shape {I.fmt(xshape)}) has size {n}, "
                          f"which is not divisible by {num}")
        return [n // num] * num
    sizes = list(sections)
    if sizes.count(-1) > 1:
        raise OpError(f"{op}: num_or_sections {sizes} has more than one -1")
    if n != -1:
        known = sum(s for s in sizes if s != -1)
        if -1 in sizes:
            if known > n:
                raise OpError(f"{op}: sections {sizes} exceed the size {n} of axis {axis} of x "
                              f"(shape {I.fmt(xshape)})")
            sizes[sizes.index(-1)] = n - known
        elif known != n:
            raise OpError(f"{op}: sections {sizes} sum to {known}, but axis {axis} of x "
                          f"(shape {I.fmt(xshape)}) has size {n}")
    return sizes


def _split_kernel(xp, x, axis=0, num=None, sections=None):
    sizes = _split_sizes("split", x.shape[axis], num, sections, axis, x.shape)
    return _pieces(xp.split(x, list(itertools.accumulate(sizes))[:-1], axis=axis))


def _split_infer(x, axis=0, num=None, sections=None):
    I.check_tensor("split", "x", x)
    ax = I.norm_axis("split", axis, len(x.shape))
    sizes = _split_sizes("split", x.shape[ax], num, sections, axis, x.shape)
    return tuple(Meta(x.shape[:ax] + (s,) + x.shape[ax + 1:], x.dtype) for s in sizes)


SPLIT = register(
    "split", kernel=_split_kernel, infer=_split_infer,
    grad=lambda ins, outs, gs, a: [concat(list(gs), a.get("axis", 0))], amp="keep")


def split(x, num_or_sections, axis: int = 0, name=None) -> list:
    """Split x along `axis` into `num_or_sections` equal parts, or parts of the given sizes
    (one size may be -1).

    >>> import runtime as rt
    >>> [t.shape for t in rt.split(rt.ones([5, 2]), [2, -1])]
    [[2, 2], [3, 2]]
    """
    if isinstance(num_or_sections, core.VariableBase) and num_or_sections.kind != "array":
        # a count known only when the program runs (the counter of a graph loop): the parts
        # are a tensor array, as long as that count
        return ARRAY_SPLITS["split"](x, num_or_sections, int(axis))
    if isinstance(num_or_sections, (list, tuple)) and any(
            isinstance(s, core.VariableBase) for s in num_or_sections):
        # sections that the program computes: as many parts, sized when it runs
        return ARRAY_SPLITS["sections"](x, num_or_sections, int(axis))
    if core.is_tensor(num_or_sections) and not num_or_sections.shape:
        num_or_sections = int(num_or_sections)  # (an eager 0-d tensor: its value)
    attrs = {"axis": int(axis)}
    if isinstance(num_or_sections, int):
        attrs["num"] = num_or_sections
    else:
        attrs["sections"] = tuple(int(s) for s in num_or_sections)
    return _as_list(bind(SPLIT, (x,), attrs))


def chunk(x, chunks: int, axis: int = 0, name=None) -> list:
    """Split x into `chunks` equal parts along `axis`.

    >>> import runtime as rt
    >>> len(rt.chunk(rt.ones([4]), 2))
    2
    """
    return split(x, chunks if isinstance(chunks, core.VariableBase) else int(chunks), axis)


METHODS = {"split": split, "chunk": chunk, "unstack": unstack}

__all__ = ["chunk", "concat", "split", "stack", "unstack"]
