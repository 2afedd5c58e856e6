"""`F.linear`, `F.dropout` (and `dropout2d` / `dropout3d` of whole channels, `alpha_dropout`
for SELU networks), `F.pad`, `F.zeropad2d`, `F.one_hot`, `F.embedding`, `F.interpolate`,
`F.normalize`, `F.cosine_similarity`, `F.pixel_shuffle` / `pixel_unshuffle`, `F.channel_shuffle`,
`F.temporal_shift`."""
from __future__ import annotations

from ... import core
from ...ops import combine as _combine
from ...ops import creation as _creation
from ...ops import gather as _gather
from ...ops import math as _math
from ...ops import nn as _nn
from ...ops import nn_norm as _norm
from ...ops import nn_pool as _pool
from ...ops import reduce as _reduce
from ...ops import shape as _shape
from ...ops.registry import OpError
from ...ops.resize_dyn import resize2d_dyn
from .conv import from_nchw, pair, to_nchw

linear = _nn.linear


def dropout(x, p: float = 0.5, axis=None, training: bool = True,
            mode: str = "upscale_in_train", name=None):
    """Zero each element with probability `p` while training.

    'upscale_in_train' (default) scales kept values by 1/(1-p) in training and is the identity
    in eval; 'downscale_in_infer' keeps values in training and scales by (1-p) in eval. `axis`
    shares one mask along the other dims. The mask comes from the generator seeded by
    `rt.seed`.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.dropout(rt.ones([4]), p=0.5, training=False).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    if not training:
        return x * (1.0 - p) if mode == "downscale_in_infer" else x
    if p == 0.0 and mode == "upscale_in_train":
        return x
    return _nn.dropout(x, p, axis, mode)[0]


def embedding(x, weight, padding_idx=None, sparse: bool = False, name=None):
    """Rows of `weight` [num_embeddings, dim] at the int ids `x`; rows looked up for
    `padding_idx` are zero and get no gradient.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.embedding(rt.to_tensor([[0, 2]]), rt.ones([3, 4])).shape
    [1, 2, 4]
    """
    return _norm.embedding(x, weight, padding_idx)


one_hot = _gather.one_hot
pad = _shape.pad


def interpolate(x, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool = False, align_mode: int = 0, data_format: str = "NCHW",
                name=None):
    """Resize the spatial dims of an NCHW image ('nearest' or 'bilinear').

    `size` gives the output [H, W]; otherwise `scale_factor` (a number or a pair) scales the
    input size (rounding down). Coordinates follow Paddle: with `align_corners` the corner
    pixels line up; otherwise bilinear uses half-pixel centers (`align_mode=0`) or
    `src = dst * in / out` (`align_mode=1`).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.interpolate(rt.ones([1, 1, 2, 3]), scale_factor=2).shape
    [1, 1, 4, 6]
    """
    mode = mode.lower()
    if mode not in ("nearest", "bilinear"):
        raise OpError(f"interpolate: mode must be 'nearest' or 'bilinear', got {mode!r}")
    if (size is None) == (scale_factor is None):
        raise OpError("interpolate: give exactly one of size and scale_factor")
    scale = None
    if size is not None and _runtime_size(size):
        y = resize2d_dyn(to_nchw(x, data_format, "interpolate"), _size_tensor(size), mode,
                         align_corners, align_mode)
        return from_nchw(y, data_format)
    if size is not None:
        size = pair(size, "size", "interpolate")
    else:
        sf = scale_factor
        scale = [float(s) for s in ((sf, sf) if isinstance(sf, (int, float)) else sf)]
    y = _pool.resize2d(to_nchw(x, data_format, "interpolate"), mode, size, scale,
                       align_corners, align_mode)
    return from_nchw(y, data_format)


upsample = interpolate


def _runtime_size(size) -> bool:
    """True when `size` holds a value known only when the program runs (a Variable)."""
    parts = size if isinstance(size, (list, tuple)) else [size]
    return any(isinstance(s, core.VariableBase) for s in parts)


def _size_tensor(size):
    """`size` (a [2] int tensor, or two ints / 1-element tensors) as an int64 tensor [2]."""
    if not isinstance(size, (list, tuple)):
        return _math.cast(_shape.reshape(size, [-1]), "int64")
    if len(size) != 2:
        raise OpError(f"interpolate: size must be 2 ints, got {len(size)} values")
    parts = [_math.cast(_shape.reshape(s, []), "int64") if hasattr(s, "dtype") else int(s)
             for s in size]
    return _combine.stack([p if hasattr(p, "dtype") else _creation.full([], p, "int64")
                           for p in parts])



def normalize(x, p: float = 2, axis: int = 1, epsilon: float = 1e-12, name=None):
    """x / max(||x||_p along axis, epsilon).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.normalize(rt.to_tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    norm = _reduce.norm(x, p=p, axis=axis, keepdim=True)
    return x / _math.maximum(norm, epsilon)


def cosine_similarity(x1, x2, axis: int = 1, eps: float = 1e-8, name=None):
    """sum(x1 * x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)) along `axis` (Paddle's formula)."""
    w12 = _reduce.sum(x1 * x2, axis=axis)
    w1, w2 = _reduce.sum(x1 * x1, axis=axis), _reduce.sum(x2 * x2, axis=axis)
    return w12 / _math.sqrt(_math.maximum(w1 * w2, eps * eps))


def pixel_shuffle(x, upscale_factor: int, data_format: str = "NCHW", name=None):
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r] (sub-pixel convolution's rearrangement).

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.pixel_shuffle(rt.ones([1, 8, 2, 3]), 2).shape
    [1, 2, 4, 6]
    """
    x = to_nchw(x, data_format, "pixel_shuffle")
    r = upscale_factor
    n, c, h, w = x.shape
    y = _shape.reshape(x, [n, c // (r * r), r, r, h, w])
    y = _shape.reshape(_shape.transpose(y, [0, 1, 4, 2, 5, 3]), [n, c // (r * r), h * r, w * r])
    return from_nchw(y, data_format)


def temporal_shift(x, seg_num: int, shift_ratio: float = 0.25, name=None,
                   data_format: str = "NCHW"):
    """TSM's shift along time of [N*T, C, H, W] frames (T = `seg_num`): the first
    `int(C * shift_ratio)` channels take the previous frame's values, the next as many the
    next frame's, zeros past either end; the other channels are kept.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> x = rt.arange(4, dtype="float32").reshape([2, 2, 1, 1])  # 2 frames, 2 channels
    >>> F.temporal_shift(x, seg_num=2, shift_ratio=0.5).flatten().tolist()
    [0.0, 3.0, 0.0, 0.0]
    """
    if not isinstance(seg_num, int) or seg_num < 1:
        raise ValueError(f"temporal_shift: seg_num must be a positive int, got {seg_num!r}")
    if not 0 <= shift_ratio <= 0.5:
        raise ValueError(f"temporal_shift: shift_ratio must be in [0, 0.5], got {shift_ratio}")
    x = to_nchw(x, data_format, "temporal_shift")
    _, c, h, w = x.shape
    t = seg_num
    frames = _shape.reshape(x, [-1, t, c, h, w])
    edge = _creation.zeros_like(frames[:, :1])
    padded = _combine.concat([edge, frames, edge], axis=1)
    back, fwd = int(c * shift_ratio), int(c * 2 * shift_ratio)
    y = _combine.concat([padded[:, :t, :back], padded[:, 2:t + 2, back:fwd],
                         padded[:, 1:t + 1, fwd:]], axis=2)
    return from_nchw(_shape.reshape(y, [-1, c, h, w]), data_format)


def pixel_unshuffle(x, downscale_factor: int, data_format: str = "NCHW", name=None):
    """[N, C, H*r, W*r] -> [N, C*r*r, H, W], the inverse of `pixel_shuffle`.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.pixel_unshuffle(rt.ones([1, 2, 4, 6]), 2).shape
    [1, 8, 2, 3]
    """
    x = to_nchw(x, data_format, "pixel_unshuffle")
    r = downscale_factor
    n, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: x's height and width ({h}, {w}) must be "
                         f"multiples of downscale_factor {r}")
    y = _shape.reshape(x, [n, c, h // r, r, w // r, r])
    y = _shape.reshape(_shape.transpose(y, [0, 1, 3, 5, 2, 4]), [n, c * r * r, h // r, w // r])
    return from_nchw(y, data_format)


def channel_shuffle(x, groups: int, data_format: str = "NCHW", name=None):
    """ShuffleNet's channel shuffle: the channels, seen as [groups, C / groups], transposed.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> x = rt.arange(4, dtype="float32").reshape([1, 4, 1, 1])
    >>> F.channel_shuffle(x, 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    x = to_nchw(x, data_format, "channel_shuffle")
    n, c, h, w = x.shape
    if c % groups:
        raise ValueError(f"channel_shuffle: x has {c} channels, not a multiple of groups "
                         f"{groups}")
    y = _shape.transpose(_shape.reshape(x, [n, groups, c // groups, h, w]), [0, 2, 1, 3, 4])
    return from_nchw(_shape.reshape(y, [n, c, h, w]), data_format)


def zeropad2d(x, padding, data_format: str = "NCHW", name=None):
    """Zeros around the height and width: `padding` is an int or [left, right, top,
    bottom]."""
    padding = [padding] * 4 if isinstance(padding, int) else list(padding)
    return pad(x, padding, mode="constant", value=0.0, data_format=data_format)


def _channel_dropout(op: str, x, p: float, training: bool, data_format: str, rank: int):
    if len(x.shape) != rank:
        raise ValueError(f"{op}: x must be {rank}-D, got shape {list(x.shape)}")
    if data_format not in (("NCHW", "NHWC") if rank == 4 else ("NCDHW", "NDHWC")):
        raise ValueError(f"{op}: data_format {data_format!r} is not supported")
    channel = 1 if data_format[1] == "C" else rank - 1
    return dropout(x, p, axis=[0, channel], training=training)


def dropout2d(x, p: float = 0.5, training: bool = True, data_format: str = "NCHW", name=None):
    """Zero whole channels of [N, C, H, W] with probability `p` while training (kept ones
    scaled by 1/(1-p))."""
    return _channel_dropout("dropout2d", x, p, training, data_format, 4)


def dropout3d(x, p: float = 0.5, training: bool = True, data_format: str = "NCDHW",
              name=None):
    """Zero whole channels of [N, C, D, H, W] with probability `p` while training."""
    return _channel_dropout("dropout3d", x, p, training, data_format, 5)


def alpha_dropout(x, p: float = 0.5, training: bool = True, name=None):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and
    an affine map keeps the mean and variance; the identity in eval mode.

    >>> import runtime as rt
    >>> import runtime.nn.functional as F
    >>> F.alpha_dropout(rt.ones([3]), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"alpha_dropout: p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:  # everything dropped: the affine map is undefined; zeros, as PyTorch
        return x * 0.0
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = ((1.0 - p) * (1.0 + p * alpha_p * alpha_p)) ** -0.5
    b = -a * alpha_p * p
    keep = dropout(x * 0.0 + 1.0, p, training=True, mode="downscale_in_infer")  # 1 or 0
    return (x * keep + alpha_p * (1.0 - keep)) * a + b
