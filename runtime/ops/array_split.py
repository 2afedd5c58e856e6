"""`rt.split(x, num)` with a count the program computes (the counter of a loop over
`range(n_tensor)` in converted code): the parts are a tensor array, as long as the count when
the program runs (`combine.split` calls `array_split` through `combine.ARRAY_SPLITS`).

`rt.split(x, [i, 2])` / `[i, -1]`, sections that mix Python ints and such values: the number
of parts is the list's length, known when the program is built, so the parts are that many
tensors (unpacked, indexed, zipped as a Python list), each as long as its section when the
program runs (`split_sections`, `combine.ARRAY_SPLITS["sections"]`)."""
from __future__ import annotations

import itertools

from ..dtypes import convert_dtype
from . import combine, registry
from .arrays import Variable, _array_meta, _builder, _index, _new_array
from .registry import Meta, OpError


def _split_kernel(xp, x, num, axis=0):
    n = _index(num)
    if n <= 0:
        raise OpError(f"split: num_or_sections must be positive, got {n}")
    if x.shape[axis] % n:
        raise OpError(f"split: axis {axis} of x (shape {list(x.shape)}) has size "
                      f"{x.shape[axis]}, which is not divisible by {n}")
    return list(xp.split(x, n, axis=axis))


def _split_grad_kernel(xp, g, x, axis=0):
    """The gradient of x from that of its parts (zeros for a part without one)."""
    if not g:
        return xp.zeros_like(x)
    size = x.shape[axis] // len(g)
    part = list(x.shape)
    part[axis] = size
    return xp.concatenate([xp.zeros(part, x.dtype) if v is None else v for v in g], axis)


SPLIT_GRAD = registry.register(
    "array_split_grad", kernel=_split_grad_kernel, nondiff=True, amp="keep",
    infer=lambda g, x, axis=0: Meta(x.shape, x.dtype),
    doc="The gradient of array_split's x: the parts' gradients joined (zeros where none).")
SPLIT = registry.register(
    "array_split", kernel=_split_kernel, infer=_array_meta, amp="keep",
    grad=lambda ins, outs, gs, a: [registry.bind(SPLIT_GRAD, (gs[0], ins[0]), dict(a)), None],
    doc="x split along axis into `num` equal parts (a count known when the program runs), "
        "as an array.")


def array_split(x, num, axis: int = 0) -> Variable:
    """`rt.split(x, num)` with a count the program computes: a tensor array of the parts."""
    if not num.dtype.is_integer or tuple(num.shape) not in ((), (1,)):
        raise registry.OpTypeError(f"split: num_or_sections must be an int, a list or a "
                                   f"one-value int tensor, got {num.dtype.name}"
                                   f"{list(num.shape)}")
    shape = list(x.shape)
    axis = axis % len(shape) if shape else 0
    if not shape:
        raise OpError("split: x must have at least one dim, got a 0-d tensor")
    shape[axis] = -1
    b = _builder()
    out = _new_array(b, x.dtype, tuple(shape), stop=x.stop_gradient)
    b.append(SPLIT.name, [b.ref(x), b.ref(num)], [out.name], {"axis": axis})
    out.python_number_note = SPLIT_NOTE
    return out


def _sections(known, counts) -> list:
    """The section sizes: the Python ints given, and each run-time count where a value the
    program computes stood (`known` holds None there)."""
    values = iter(counts)
    return [_index(next(values)) if k is None else k for k in known]


def _sections_kernel(xp, x, counts, axis=0, known=()):
    sizes = combine._split_sizes("split", x.shape[axis], sections=_sections(known, counts),
                                 axis=axis, xshape=x.shape)
    return combine._pieces(xp.split(x, list(itertools.accumulate(sizes))[:-1], axis=axis))


def _sections_infer(x, counts, axis=0, known=()):
    for c in counts:
        if c.dtype.kind not in "iu" or tuple(c.shape) not in ((), (1,)):
            raise registry.OpTypeError(f"split: a section must be an int or a one-value int "
                                       f"tensor, got {c.dtype.name}{list(c.shape)}")
    shape = list(x.shape)
    return tuple(Meta(tuple(shape[:axis] + [-1 if k is None or k < 0 else k]
                            + shape[axis + 1:]), x.dtype) for k in known)


SPLIT_SECTIONS = registry.register(
    "split_sections", kernel=_sections_kernel, infer=_sections_infer, amp="keep",
    grad=lambda ins, outs, gs, a: [combine.concat(list(gs), a.get("axis", 0)), None],
    doc="x split along axis into len(known) parts of the given sizes: Python ints in "
        "`known`, and the run-time values of `counts` where `known` holds None (one size "
        "may be -1, the rest).")


def split_sections(x, sections, axis: int = 0) -> list:
    """`rt.split(x, [i, 2])` where some sections are values the program computes: a list of
    len(sections) tensors."""
    shape = list(x.shape)
    if not shape:
        raise OpError("split: x must have at least one dim, got a 0-d tensor")
    known = [None if isinstance(s, Variable) else int(s) for s in sections]
    counts = [s for s in sections if isinstance(s, Variable)]
    attrs = {"axis": axis % len(shape), "known": known}
    return combine._as_list(registry.bind(SPLIT_SECTIONS, (x, counts), attrs))


def _rows_kernel(xp, x):
    return [x[i] for i in range(x.shape[0])]


ROWS = registry.register(
    "array_of_rows", kernel=_rows_kernel, infer=_array_meta, nondiff=True, amp="keep",
    doc="The items of x along its first dim (a count known when the program runs), as an "
        "array.")


def number_list(x) -> Variable:
    """`x.tolist()` of a 1-D `x` whose length only the run knows (an argument of an
    `InputSpec([None])`): a tensor array of its items as the Python numbers eager's list
    holds (ints as int64, floats float64, bools bool), with no gradient path."""
    if len(x.shape) != 1:
        return row_lists(x)
    kind = x.dtype.name
    dtype = "bool" if kind == "bool" else "float64" if x.dtype.is_floating else "int64"
    x = x if kind == dtype else x.astype(dtype)
    b = _builder()
    out = _new_array(b, convert_dtype(dtype), (), stop=True)
    b.append(ROWS.name, [b.ref(x)], [out.name], {})
    out.python_items = True
    out.keeps_float = out.float_if_filled = dtype == "float64"
    return out


def row_lists(x) -> Variable:
    """`x.tolist()` of an `x` of rank 2 or more whose first dim only the run knows: a tensor
    array of its rows, each standing for the row's `tolist()` (`row_lists`: a read of one,
    `array_read`, is its `tolist()`; the call returns the nested lists)."""
    b = _builder()
    out = _new_array(b, x.dtype, tuple(x.shape[1:]), stop=True)
    b.append(ROWS.name, [b.ref(x)], [out.name], {})
    out.row_lists = True
    return out


# What a Python use of the parts says (`Variable.python_number_note`)
SPLIT_NOTE = (
    "It holds the parts of `split` with a count known only when the program runs (the "
    "counter of a loop over `range()` of a tensor, say): a tensor array, which can be "
    "indexed, looped over, stacked or concatenated, but not unpacked into names or used as a "
    "Python list. Give the count as a Python int (a Python loop bound) to get a list.")


combine.ARRAY_SPLITS.update(split=array_split, sections=split_sections)
