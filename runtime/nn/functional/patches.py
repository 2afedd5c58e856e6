"""`F.unfold` (im2col): every sliding [kh, kw] patch of an NCHW image as a column.

[N, C, H, W] -> [N, C * kh * kw, L], L the number of patch positions, column entries ordered
channel-major then kernel row then kernel column (Paddle's and PyTorch's order). Built from a
pad and one strided slice per kernel offset, so its gradient (and the static program) come
from those ops.
"""
from __future__ import annotations

from ...ops import combine as _combine
from ...ops import shape as _shape
from ...ops.registry import OpError


def _ints(value, count: int, arg: str) -> list:
    values = [value] * count if isinstance(value, int) else list(value)
    if len(values) != count or not all(isinstance(v, int) for v in values):
        raise OpError(f"unfold: {arg} must be an int or {count} ints, got {value!r}")
    return values


def _paddings(paddings) -> list:
    """[top, left, bottom, right] from an int, [pad_h, pad_w] or 4 values (Paddle's forms)."""
    values = [paddings] * 4 if isinstance(paddings, int) else list(paddings)
    if len(values) == 2:
        values = values * 2
    return _ints(values, 4, "paddings")


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sliding patches of `x` [N, C, H, W] as columns: [N, C*kh*kw, L].

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.unfold(rt.ones([1, 2, 4, 4]), kernel_sizes=2, strides=2).shape
    [1, 8, 4]
    """
    if x.ndim != 4:
        raise OpError(f"unfold: x must be 4-D [N, C, H, W], got shape {list(x.shape)}")
    kh, kw = _ints(kernel_sizes, 2, "kernel_sizes")
    sh, sw = _ints(strides, 2, "strides")
    dh, dw = _ints(dilations, 2, "dilations")
    top, left, bottom, right = _paddings(paddings)
    n, c, h, w = x.shape
    if h < 0 or w < 0 or c < 0:
        raise OpError(f"unfold: x has shape {list(x.shape)}; its channels, height and width "
                      "must be known when the program is built (an InputSpec may leave only "
                      "the batch dim None)")
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise OpError(f"unfold: kernel [{kh}, {kw}] with dilations [{dh}, {dw}] does not fit "
                      f"into x of shape {list(x.shape)} padded by {[top, left, bottom, right]}")
    if top or left or bottom or right:
        x = _shape.pad(x, [left, right, top, bottom])  # pad lists the last dim first
    patches = [x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
               for i in range(kh) for j in range(kw)]
    columns = _combine.stack(patches, axis=2)  # [N, C, kh*kw, oh, ow]
    return _shape.reshape(columns, [n, c * kh * kw, oh * ow])
