"""Normalization (batch, layer, group) and embedding lookup.

The norm kernels are fused NumPy code; their gradient rules recompute the statistics from x
with ops (mean, rsqrt, ...) instead of saving them, so the same rule serves static backward
programs and differentiating it again gives exact higher-order gradients.

`batch_norm` returns `(y, mean, var)`: in training the batch statistics (biased variance, as
Paddle), in eval the running statistics it was given. In training it takes no running
statistics at all: `runtime.nn.functional.batch_norm` blends them with the batch statistics
and writes them back with `Tensor.set_value` (an op that writes the persistable variable in
static mode). Not being inputs of the op, the buffers can be overwritten before backward
without invalidating its tape node. The statistics outputs carry no gradient.
"""
from __future__ import annotations

import math

from ..dtypes import int32, int64
from . import infer as I
from . import math as M
from . import reduce as R
from . import shape as S
from .nn import check_float
from .registry import Meta, OpError, OpTypeError, bind, register

# ---- shared statistics ----------------------------------------------------------------------


def _moments(xp, x, axes):
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    return mean, (xc * xc).mean(axis=axes, keepdims=True), xc


def _scale_shift(y, w, b, shape, dtype):
    """y * w + b in place, w and b (either may be None) reshaped to `shape`; as `dtype`."""
    if w is not None:
        y *= w.reshape(shape)
    if b is not None:
        y += b.reshape(shape)
    return y.astype(dtype, copy=False)


def _normalized(x, axes, eps):
    """(x - mean) / sqrt(var + eps) over `axes`, and 1 / sqrt(var + eps), built from ops."""
    xc = x - R.mean(x, axis=list(axes), keepdim=True)
    inv = M.rsqrt(R.mean(xc * xc, axis=list(axes), keepdim=True) + eps)
    return xc * inv, inv


def _normalize_grad(g_hat, x_hat, inv, axes):
    """The gradient through `_normalized` given the gradient of its output."""
    axes = list(axes)
    return inv * (g_hat - R.mean(g_hat, axis=axes, keepdim=True)
                  - x_hat * R.mean(g_hat * x_hat, axis=axes, keepdim=True))


def _check_param(op, arg, p, want):
    if p is None:
        return
    check_float(op, arg, p)
    n = math.prod(want) if -1 not in want else -1
    size = math.prod(p.shape) if -1 not in p.shape else -1
    if tuple(p.shape) != tuple(want) and -1 not in (n, size) and n != size:
        raise OpError(f"{op}: {arg} has shape {I.fmt(p.shape)} but must have {I.fmt(want)} "
                      f"({n} elements)")


# ---- batch norm -----------------------------------------------------------------------------

def _bn_axes(ndim, data_format):
    channel = 1 if data_format.startswith("NC") else ndim - 1
    return channel, tuple(i for i in range(ndim) if i != channel)


def _bn_kernel(xp, x, rmean, rvar, w, b, training=False, epsilon=1e-5, data_format="NCHW"):
    native = NATIVE_KERNELS.get("batch_norm")  # (CUDA: runtime/program/cuda_batch_norm.py)
    out = None if native is None else native(xp, x, rmean, rvar, w, b, training, epsilon,
                                             data_format)
    if out is not None:
        return out
    channel, axes = _bn_axes(x.ndim, data_format)
    shape = [-1 if i == channel else 1 for i in range(x.ndim)]
    if training:
        mean, var, xc = _moments(xp, x, axes)
    else:
        mean, var = rmean.reshape(shape), rvar.reshape(shape)
        xc = x - mean
    scale = 1 / xp.sqrt(var + epsilon)
    if w is not None:
        scale = scale * w.reshape(shape)
    y = xc * scale
    if b is not None:
        y += b.reshape(shape)
    stat = x.dtype if training else rmean.dtype
    return (y.astype(x.dtype, copy=False), mean.reshape(-1).astype(stat, copy=False),
            var.reshape(-1).astype(stat, copy=False))


def _bn_infer(x, rmean, rvar, w, b, training=False, epsilon=1e-5, data_format="NCHW"):
    check_float("batch_norm", "x", x)
    if not 2 <= len(x.shape) <= 5:
        raise OpError(f"batch_norm: x must have 2 to 5 dims, got shape {I.fmt(x.shape)}")
    channel, _ = _bn_axes(len(x.shape), data_format)
    c = x.shape[channel]
    if not training and (rmean is None or rvar is None):
        raise OpError("batch_norm: eval mode (training=False) needs running_mean and "
                      "running_var")
    for arg, p in (("running_mean", rmean), ("running_var", rvar), ("weight", w), ("bias", b)):
        _check_param("batch_norm", arg, p, (c,))
    stat = x.dtype if training else rmean.dtype
    return Meta(x.shape, x.dtype), Meta((c,), stat), Meta((c,), stat)


def _bn_grad(ins, outs, gs, a):
    x, rmean, rvar, w, b = ins
    g = gs[0]
    channel, axes = _bn_axes(x.ndim, a.get("data_format", "NCHW"))
    shape = [-1 if i == channel else 1 for i in range(x.ndim)]
    eps = a.get("epsilon", 1e-5)
    wb = None if w is None else S.reshape(w, shape)
    if a.get("training", False):
        x_hat, inv = _normalized(x, axes, eps)
        dx = _normalize_grad(g if wb is None else g * wb, x_hat, inv, axes)
    else:
        inv = S.reshape(M.rsqrt(rvar + eps), shape)
        x_hat = (x - S.reshape(rmean, shape)) * inv
        dx = g * (inv if wb is None else inv * wb)
    dw = None if w is None else R.sum(g * x_hat, axis=list(axes))
    db = None if b is None else R.sum(g, axis=list(axes))
    return [dx, None, None, dw, db]


BATCH_NORM = register("batch_norm", kernel=_bn_kernel, infer=_bn_infer, grad=_bn_grad,
                      amp="black", doc="Batch normalization; also returns the statistics it used.")


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               epsilon=1e-5, data_format="NCHW"):
    """Returns (y, mean, var); in training pass None for the running statistics (they are
    not used). See `runtime.nn.functional.batch_norm`."""
    return bind(BATCH_NORM, (x, running_mean, running_var, weight, bias), {
        "training": bool(training), "epsilon": float(epsilon), "data_format": data_format})


# ---- layer norm -----------------------------------------------------------------------------

# generated C installed by runtime/program/layernorm_native.py (ops may not import the
# program package); it returns None where it does not apply
NATIVE_KERNELS: dict = {}


def _ln_kernel(xp, x, w, b, begin_norm_axis=-1, epsilon=1e-5):
    native = NATIVE_KERNELS.get("layer_norm")
    out = None if native is None else native(xp, x, w, b, begin_norm_axis, epsilon)
    if out is not None:
        return out
    axes = tuple(range(begin_norm_axis % x.ndim, x.ndim))
    _mean, var, xc = _moments(xp, x, axes)
    y = xc / xp.sqrt(var + epsilon)
    return _scale_shift(y, w, b, x.shape[axes[0]:], x.dtype)


def _ln_infer(x, w, b, begin_norm_axis=-1, epsilon=1e-5):
    check_float("layer_norm", "x", x)
    begin = I.norm_axis("layer_norm", begin_norm_axis, len(x.shape), "begin_norm_axis")
    want = tuple(x.shape[begin:])
    _check_param("layer_norm", "weight", w, want)
    _check_param("layer_norm", "bias", b, want)
    return Meta(x.shape, x.dtype)


def _ln_grad(ins, outs, gs, a):
    x, w, b = ins
    g = gs[0]
    begin = a.get("begin_norm_axis", -1) % x.ndim
    axes, lead = tuple(range(begin, x.ndim)), list(range(begin))
    x_hat, inv = _normalized(x, axes, a.get("epsilon", 1e-5))
    wn = None if w is None else (w if w.ndim == len(axes) else S.reshape(w, list(x.shape[begin:])))
    dx = _normalize_grad(g if wn is None else g * wn, x_hat, inv, axes)
    dw = db = None
    if w is not None:
        dw = S.reshape_as(R.sum(g * x_hat, axis=lead) if lead else g * x_hat, w)
    if b is not None:
        db = S.reshape_as(R.sum(g, axis=lead) if lead else g, b)
    return [dx, dw, db]


LAYER_NORM = register("layer_norm", kernel=_ln_kernel, infer=_ln_infer, grad=_ln_grad,
                      amp="black", doc="Normalize over the dims from begin_norm_axis on.")


def layer_norm(x, weight=None, bias=None, begin_norm_axis=-1, epsilon=1e-5):
    return bind(LAYER_NORM, (x, weight, bias), {"begin_norm_axis": int(begin_norm_axis),
                                                "epsilon": float(epsilon)})


# ---- group norm -----------------------------------------------------------------------------

def _check_groups(shape, groups):
    c = shape[1]
    if not isinstance(groups, int) or groups < 1 or c != -1 and c % groups:
        raise OpError(f"group_norm: x has {c} channels (shape {I.fmt(shape)}), not "
                      f"divisible by num_groups={groups}")


def _gn_kernel(xp, x, w, b, groups=1, epsilon=1e-5):
    _check_groups(x.shape, groups)
    n, _c = x.shape[:2]
    xr = x.reshape(n, groups, -1)
    _mean, var, xc = _moments(xp, xr, (2,))
    y = (xc / xp.sqrt(var + epsilon)).reshape(x.shape)
    return _scale_shift(y, w, b, [-1 if i == 1 else 1 for i in range(x.ndim)], x.dtype)


def _gn_infer(x, w, b, groups=1, epsilon=1e-5):
    check_float("group_norm", "x", x)
    if len(x.shape) < 2:
        raise OpError(f"group_norm: x must be [N, C, ...], got shape {I.fmt(x.shape)}")
    _check_groups(x.shape, groups)
    c = x.shape[1]
    _check_param("group_norm", "weight", w, (c,))
    _check_param("group_norm", "bias", b, (c,))
    return Meta(x.shape, x.dtype)


def _gn_grad(ins, outs, gs, a):
    x, w, b = ins
    g = gs[0]
    groups = a.get("groups", 1)
    shape = [-1 if i == 1 else 1 for i in range(x.ndim)]
    axes = [0] + list(range(2, x.ndim))
    xr = S.reshape(x, [0, groups, -1])
    x_hat, inv = _normalized(xr, (2,), a.get("epsilon", 1e-5))
    g_hat = g if w is None else g * S.reshape(w, shape)
    dx = S.reshape_as(_normalize_grad(S.reshape_as(g_hat, xr), x_hat, inv, (2,)), x)
    dw = None if w is None else R.sum(g * S.reshape_as(x_hat, x), axis=axes)
    db = None if b is None else R.sum(g, axis=axes)
    return [dx, dw, db]


GROUP_NORM = register("group_norm", kernel=_gn_kernel, infer=_gn_infer, grad=_gn_grad,
                      amp="black", doc="Normalize each group of channels of each sample.")


def group_norm(x, weight=None, bias=None, groups=1, epsilon=1e-5):
    return bind(GROUP_NORM, (x, weight, bias), {"groups": int(groups),
                                                "epsilon": float(epsilon)})


# ---- embedding ------------------------------------------------------------------------------

def _check_ids(ids, n):
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise OpError(f"embedding: id {bad} is out of range for a table of {n} rows "
                      f"(valid: 0 .. {n - 1})")


def _embedding_kernel(xp, ids, w, padding_idx=None):
    if w.ndim != 2:
        raise ValueError(w.shape)  # `bind` reports the infer rule's error
    _check_ids(ids, w.shape[0])
    out = w[ids]
    if padding_idx is not None:
        out[ids == padding_idx] = 0
    return out


def _embedding_grad_kernel(xp, g, ids, w, padding_idx=None):
    # bincount over flat (row, column) positions sums repeated ids (NumPy and CuPy alike)
    d = w.shape[1]
    flat = (ids.reshape(-1, 1) * d + xp.arange(d)).ravel()
    out = xp.bincount(flat, weights=g.reshape(-1), minlength=w.shape[0] * d)
    out = out.reshape(w.shape).astype(g.dtype, copy=False)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def _embedding_infer(ids, w, padding_idx=None):
    I.check_tensor("embedding", "x", ids)
    check_float("embedding", "weight", w)
    if ids.dtype not in (int64, int32):
        raise OpTypeError(f"embedding: x has dtype {ids.dtype.name}; ids must be int64 or "
                          "int32")
    if len(w.shape) != 2:
        raise OpError(f"embedding: weight must be 2-D [num_embeddings, dim], got shape "
                      f"{I.fmt(w.shape)}")
    return Meta(tuple(ids.shape) + (w.shape[1],), w.dtype)


EMBEDDING = register(
    "embedding", kernel=_embedding_kernel, infer=_embedding_infer,
    grad=lambda ins, outs, gs, a: [None, bind(EMBEDDING_GRAD, (gs[0], ins[0], ins[1]), a)],
    doc="Rows of weight at the ids; rows for padding_idx are zero and get no gradient.")
EMBEDDING_GRAD = register(
    "embedding_grad", kernel=_embedding_grad_kernel,
    infer=lambda g, ids, w, **a: Meta(w.shape, g.dtype),
    grad=lambda ins, outs, gs, a: [bind(EMBEDDING, (ins[1], gs[0]), a), None, None],
    doc="Scatter-add g into weight's rows at the ids (the adjoint of embedding).")


def embedding(x, weight, padding_idx=None):
    """Look up rows of `weight`; a negative padding_idx counts from the end (Paddle)."""
    attrs = {}
    if padding_idx is not None:
        n = weight.shape[0]
        attrs["padding_idx"] = int(padding_idx) + (n if padding_idx < 0 and n != -1 else 0)
    return bind(EMBEDDING, (x, weight), attrs)


METHODS: dict = {}

__all__: list = []
