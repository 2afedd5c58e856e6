"""`rt.split(x, num)` with a count the program computes (the counter of a loop over
`range(n_tensor)` in converted code): the parts are a tensor array, as long as the count when
the program runs (`combine.split` calls `array_split` through `combine.ARRAY_SPLITS`)."""
from __future__ import annotations

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


# What a Python use of the parts says (`Variable.python_number_note`)
SPLIT_NOTE = (
    "It holds the parts of `split` with a count known only when the program runs (the "
    "counter of a loop over `range()` of a tensor, say): a tensor array, which can be "
    "indexed, looped over, stacked or concatenated, but not unpacked into names or used as a "
    "Python list. Give the count as a Python int (a Python loop bound) to get a list.")




combine.ARRAY_SPLITS.update(split=array_split)
