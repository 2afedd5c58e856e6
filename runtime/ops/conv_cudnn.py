"""2-D convolutions on the GPU through cuDNN (CuPy's `cupyx.cudnn`), where CuPy has it.

`runtime/ops/nn_conv.py` asks this module first for each of the three convolution ops on a
GPU array; each function here returns the result, or None, and the caller runs its im2col +
GEMM code (the reference, and the path on CPUs, on CuPy without cuDNN, and for what cuDNN is
not asked to do):

- `forward(xp, x, w, stride, pads, dilation, groups)`       `convolution_forward`
- `grad_input(xp, g, w, x_shape, stride, pads, ...)`        `convolution_backward_data`
- `grad_filter(xp, x, g, w_shape, stride, pads, ...)`       `convolution_backward_filter`

cuDNN is used when all hold: the arrays are CuPy's (not NumPy's), `cupyx.cudnn` imports and
`cupy.cuda.cudnn` loads the library, the dtype is float16, float32 or float64, the padding is
the same on both sides of each spatial dimension (cuDNN takes one number per dimension), and
`D2S_CUDNN` is not `0`. Both backward algorithms are asked to be deterministic (the same bits
on every run, as the GEMM path gives); float32 and float64 never use tensor cores (TF32
would round the operands to 10 bits of mantissa), float16 may (`tensor_core="auto"`).

Written against CuPy 13's `cupyx.cudnn` signatures. Without a GPU, tests check the selection
(the fake CuPy has no cuDNN: the GEMM path runs) and the arguments handed to a stand-in
`cupyx.cudnn` (tests/ops/test_conv_cudnn.py); that cuDNN computes the same values is checked
only by `benchmarks/gpu_check.sh` on a real GPU.
"""
from __future__ import annotations

import importlib
import os

import numpy as np

_FLOATS = ("float16", "float32", "float64")
_found: dict = {}  # id(xp) -> the cupyx.cudnn module, or None


def cudnn_of(xp):
    """`cupyx.cudnn` for array module `xp` (CuPy), or None: NumPy, no cuDNN library, turned
    off (`D2S_CUDNN=0`)."""
    if xp is np or os.environ.get("D2S_CUDNN", "1").strip() == "0":
        return None
    key = id(xp)
    if key not in _found:
        _found[key] = _load(xp)
    return _found[key]


def _load(xp):
    try:
        xp.cuda.cudnn.getVersion()  # (raises when the library is absent)
        return importlib.import_module("cupyx.cudnn")
    except Exception:  # noqa: BLE001  (no cupyx, no libcudnn, a fake CuPy: the GEMM path)
        return None


def _pairs(pads):
    """cuDNN's (pad_h, pad_w), or None when a dimension is padded unevenly."""
    (pt, pb), (pl, pr) = pads
    return (pt, pl) if pt == pb and pl == pr and min(pt, pl) >= 0 else None


def _tensor_core(dtype) -> str:
    return "auto" if dtype == np.float16 else "never"


def _usable(xp, arrays, pads):
    """(cudnn module, cuDNN padding), or None where cuDNN is not asked."""
    cudnn = cudnn_of(xp)
    pad = _pairs(pads)
    if cudnn is None or pad is None or arrays[0].dtype.name not in _FLOATS or \
            any(a.dtype != arrays[0].dtype or not isinstance(a, xp.ndarray) for a in arrays):
        return None
    return cudnn, pad


def forward(xp, x, w, stride, pads, dilation, groups, out_hw):
    """conv2d of x [N, C, H, W] and w [O, C/groups, kh, kw] into [N, O, *out_hw], or None."""
    found = _usable(xp, (x, w), pads)
    if found is None:
        return None
    cudnn, pad = found
    y = xp.empty((x.shape[0], w.shape[0]) + tuple(out_hw), x.dtype)
    cudnn.convolution_forward(x, w, None, y, pad, tuple(stride), tuple(dilation), groups,
                              auto_tune=True, tensor_core=_tensor_core(x.dtype))
    return y


def grad_input(xp, g, w, x_shape, stride, pads, dilation, groups):
    """The gradient of conv2d in its input, of shape `x_shape`, from g [N, O, Ho, Wo], or
    None."""
    found = _usable(xp, (g, w), pads)
    if found is None:
        return None
    cudnn, pad = found
    gx = xp.empty(tuple(x_shape), g.dtype)
    cudnn.convolution_backward_data(w, g, None, gx, pad, tuple(stride), tuple(dilation),
                                    groups, deterministic=True, auto_tune=True,
                                    tensor_core=_tensor_core(g.dtype))
    return gx


def grad_filter(xp, x, g, w_shape, stride, pads, dilation, groups):
    """The gradient of conv2d in its weight, of shape `w_shape`, or None."""
    found = _usable(xp, (x, g), pads)
    if found is None:
        return None
    cudnn, pad = found
    gw = xp.empty(tuple(w_shape), x.dtype)
    cudnn.convolution_backward_filter(x, g, gw, pad, tuple(stride), tuple(dilation), groups,
                                      deterministic=True, auto_tune=True,
                                      tensor_core=_tensor_core(x.dtype))
    return gw
