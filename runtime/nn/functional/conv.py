"""`F.conv1d`, `F.conv2d`, `F.conv2d_transpose`, `F.conv1d_transpose` with Paddle's argument
forms.

`padding` may be an int, a pair [h, w], four values [top, bottom, left, right], Paddle's
per-dim pairs [[0, 0], [0, 0], [t, b], [l, r]], or 'SAME' / 'VALID'. 'NHWC' input is
transposed to NCHW around the NCHW kernels.
"""
from __future__ import annotations

from ...ops import nn_conv as _conv
from ...ops import shape as _shape
from ...ops.registry import OpError


def pair(v, what: str, op: str) -> tuple:
    """An int or a 2-sequence as a pair of ints."""
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise OpError(f"{op}: {what} must be an int or 2 ints, got {list(v)}")
    return tuple(int(d) for d in v)


def padding4(padding, op: str):
    """Paddle's 2-D padding forms -> 'SAME' / 'VALID' or [top, bottom, left, right]."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("SAME", "VALID"):
            raise OpError(f"{op}: padding must be 'SAME', 'VALID' or numbers, got {padding!r}")
        return mode
    if isinstance(padding, int):
        return [padding] * 4
    p = list(padding)
    if p and isinstance(p[0], (list, tuple)):
        if len(p) != 4 or any(p[i] not in ([0, 0], (0, 0)) for i in (0, 1)):
            raise OpError(f"{op}: per-dim padding must be [[0, 0], [0, 0], [t, b], [l, r]] "
                          f"(NCHW), got {padding}")
        p = [*p[2], *p[3]]
    if len(p) == 2:
        return [p[0], p[0], p[1], p[1]]
    if len(p) == 4:
        return [int(d) for d in p]
    raise OpError(f"{op}: padding must have 1, 2 or 4 numbers, got {list(padding)}")


def to_nchw(x, data_format: str, op: str):
    if data_format not in ("NCHW", "NHWC"):
        raise OpError(f"{op}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    return _shape.transpose(x, [0, 3, 1, 2]) if data_format == "NHWC" else x


def from_nchw(y, data_format: str):
    return _shape.transpose(y, [0, 2, 3, 1]) if data_format == "NHWC" else y


def _add_bias(y, bias):
    return y if bias is None else y + _shape.reshape(bias, [1, -1, 1, 1])


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1,
           data_format: str = "NCHW", name=None):
    """2-D convolution; weight is [out_channels, in_channels / groups, kh, kw].

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.conv2d(rt.ones([1, 3, 8, 8]), rt.ones([4, 3, 3, 3]), padding=1).shape
    [1, 4, 8, 8]
    """
    y = _conv.conv2d(to_nchw(x, data_format, "conv2d"), weight, pair(stride, "stride", "conv2d"),
                     padding4(padding, "conv2d"), pair(dilation, "dilation", "conv2d"), groups)
    return from_nchw(_add_bias(y, bias), data_format)


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                     groups: int = 1, output_size=None, data_format: str = "NCHW", name=None):
    """Transposed convolution; weight is [in_channels, out_channels / groups, kh, kw].
    `output_size` picks among the sizes a strided convolution maps to the input size.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.conv2d_transpose(rt.ones([1, 4, 5, 5]), rt.ones([4, 2, 3, 3]), stride=2).shape
    [1, 2, 11, 11]
    """
    op = "conv2d_transpose"
    x = to_nchw(x, data_format, op)
    stride, dilation = pair(stride, "stride", op), pair(dilation, "dilation", op)
    padding = padding4(padding, op)
    extra = pair(output_padding, "output_padding", op)
    if output_size is not None:
        base = _conv.conv2d_transpose(x, weight, stride, padding, (0, 0), dilation, groups)
        want = pair(output_size, "output_size", op)
        extra = tuple(w - b for w, b in zip(want, base.shape[2:]))
        if any(not 0 <= e < s for e, s in zip(extra, stride)):
            raise OpError(f"{op}: output_size {list(want)} is not reachable: sizes from "
                          f"{list(base.shape[2:])} up to stride - 1 more are")
    y = _conv.conv2d_transpose(x, weight, stride, padding, extra, dilation, groups)
    return from_nchw(_add_bias(y, bias), data_format)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1,
           data_format: str = "NCL", name=None):
    """1-D convolution over [N, C, L] (or 'NLC'); weight is [out, in / groups, k]."""
    if data_format not in ("NCL", "NLC"):
        raise OpError(f"conv1d: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if data_format == "NLC":
        x = _shape.transpose(x, [0, 2, 1])
    if isinstance(padding, str):
        pad = padding4(padding, "conv1d")
    else:
        p = [padding] if isinstance(padding, int) else list(padding)
        pad = [0, 0, p[0], p[-1]]
    y = _conv.conv2d(_shape.unsqueeze(x, 2), _shape.unsqueeze(weight, 2),
                     (1, pair(stride, "stride", "conv1d")[0]), pad,
                     (1, pair(dilation, "dilation", "conv1d")[0]), groups)
    y = _shape.squeeze(y, 2)
    if bias is not None:
        y = y + _shape.reshape(bias, [1, -1, 1])
    return _shape.transpose(y, [0, 2, 1]) if data_format == "NLC" else y


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1, output_size=None, data_format: str = "NCL",
                     name=None):
    """1-D transposed convolution over [N, C, L] (or 'NLC'); weight is [in_channels,
    out_channels / groups, k] (vocoders' upsampling). `padding` is an int or [left, right].

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.conv1d_transpose(rt.ones([1, 4, 5]), rt.ones([4, 2, 4]), stride=2, padding=1).shape
    [1, 2, 10]
    """
    op = "conv1d_transpose"
    if data_format not in ("NCL", "NLC"):
        raise OpError(f"{op}: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    p = [padding] if isinstance(padding, int) else padding
    if isinstance(p, str) or len(p) not in (1, 2):
        raise OpError(f"{op}: padding must be an int or [left, right], got {padding!r}")
    if data_format == "NLC":
        x = _shape.transpose(x, [0, 2, 1])
    size = None
    if output_size is not None:
        size = [1, output_size if isinstance(output_size, int) else list(output_size)[-1]]
    y = conv2d_transpose(_shape.unsqueeze(x, 2), _shape.unsqueeze(weight, 2), None,
                         (1, pair(stride, "stride", op)[0]), [0, 0, int(p[0]), int(p[-1])],
                         (0, pair(output_padding, "output_padding", op)[0]),
                         (1, pair(dilation, "dilation", op)[0]), groups, size)
    y = _shape.squeeze(y, 2)
    if bias is not None:
        y = y + _shape.reshape(bias, [1, -1, 1])
    return _shape.transpose(y, [0, 2, 1]) if data_format == "NLC" else y
