"""OpInfos for activations, dropout, linear, normalization, embedding and losses
(runtime/ops/nn.py, nn_norm.py, nn_loss.py), called through `runtime.nn.functional`.

The references are written independently of the kernels and as plainly as possible (losses
loop over samples). Composite functions (cross_entropy, mse_loss, ...) get OpInfos too, under
their functional names. Convolution and pooling are in opinfo_nn_conv.py.
"""
from __future__ import annotations

import math

import numpy as np
from opinfo import EXEMPT, ErrorSample, OpInfo, Sample, randn, unary_samples

import runtime as rt
import runtime.nn.functional as F
from runtime.ops import nn as nn_ops
from runtime.ops import nn_norm
from runtime.ops.nn_batch_norm_relu import batch_norm_relu
from runtime.ops.random import Generator

_erf = np.vectorize(math.erf, otypes=[np.float64])


# ---- activations ----------------------------------------------------------------------------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu_ref(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def _gelu_grad_ref(x, dy, approximate=False):
    """dy times GELU's derivative, from its closed forms in float64."""
    if approximate:
        c, k = np.sqrt(2 / np.pi), 0.044715
        t = np.tanh(c * (x + k * x ** 3))
        return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * k * x * x))
    return dy * (0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi))


def _gelu_grad_samples(rng):
    return [Sample((randn(rng, 3, 4) * 2, randn(rng, 3, 4))),
            Sample((randn(rng, 5) * 2, randn(rng, 5)), {"approximate": True})]


def _softplus_ref(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def _gelu_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 5),), {"approximate": True})]


def _leaky_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 5),), {"negative_slope": 0.2})]


def _softplus_samples(rng):
    return [Sample((randn(rng, 3, 4) * 3,)),
            Sample((randn(rng, 5) * 10,), {"beta": 2.0, "threshold": 5.0})]


def _softmax_ref(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"axis": 0}),
            Sample((randn(rng, 2, 3, 4) * 30,), {"axis": 1}), Sample((randn(rng, 5),))]


def _axis_error(name):
    return ErrorSample((np.ones((2, 3)),), {"axis": 2}, ValueError,
                       rf"{name}: axis=2 is out of range for a tensor of rank 2")


def _dropout_fn(x, p=0.5, axis=None, mode="upscale_in_train"):
    rt.seed(11)  # the reference replays the same stream; every call draws the same mask
    return F.dropout(x, p, axis, mode=mode)


def _dropout_ref(x, p=0.5, axis=None, mode="upscale_in_train"):
    shape = x.shape if axis is None else [d if i == axis else 1 for i, d in enumerate(x.shape)]
    keep = Generator(11).random(shape, xp=np) >= p
    scale = 1 / (1 - p) if mode == "upscale_in_train" and p < 1 else 1.0
    return x * keep * scale


def _dropout_samples(rng):
    return [Sample((randn(rng, 4, 5),), {"p": 0.3}), Sample((randn(rng, 3, 4),), {"axis": 1}),
            Sample((randn(rng, 6),), {"p": 0.6, "mode": "downscale_in_infer"}),
            Sample((randn(rng, 2, 3),), {"p": 1.0})]


# ---- linear ---------------------------------------------------------------------------------

def _linear_ref(x, w, b=None):
    out = x @ w
    return out if b is None else out + b


def _linear_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 4, 5), randn(rng, 5))),
            Sample((randn(rng, 2, 3, 4), randn(rng, 4, 2))),
            Sample((randn(rng, 4), randn(rng, 4, 3), randn(rng, 3)))]


# ---- normalization and embedding ------------------------------------------------------------

def _bn_ref(x, rmean, rvar, w=None, b=None, training=False, epsilon=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = rmean.reshape(shape), rvar.reshape(shape)
    y = (x - mean) / np.sqrt(var + epsilon)
    y = y if w is None else y * w.reshape(shape)
    return y if b is None else y + b.reshape(shape)


def _bn_fn(x, rmean, rvar, w=None, b=None, training=False, epsilon=1e-5):
    stats = (None, None) if training else (rmean, rvar)
    return nn_norm.batch_norm(x, *stats, w, b, training, epsilon)[0]


def _bn_relu_fn(x, rmean, rvar, w=None, b=None, training=False, epsilon=1e-5):
    stats = (None, None) if training else (rmean, rvar)
    return batch_norm_relu(x, *stats, w, b, training, epsilon)[0]


def _bn_relu_ref(*args, **kwargs):
    return np.maximum(_bn_ref(*args, **kwargs), 0.0)


def _bn_samples(rng):
    def stats(c):
        return randn(rng, c), rng.uniform(0.5, 2, c)
    return [Sample((randn(rng, 4, 3, 2, 2), *stats(3), randn(rng, 3), randn(rng, 3)),
                   {"training": True}),
            Sample((randn(rng, 5, 2), *stats(2), randn(rng, 2), randn(rng, 2)),
                   {"training": True, "epsilon": 1e-3}),
            Sample((randn(rng, 3, 2, 4), *stats(2), None, None), {"training": True}),
            Sample((randn(rng, 2, 3, 2, 2), *stats(3), randn(rng, 3), randn(rng, 3))),
            Sample((randn(rng, 3, 2), *stats(2), None, None))]


def _ln_ref(x, normalized_shape, weight=None, bias=None, epsilon=1e-5):
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    axes = tuple(range(x.ndim - n, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True)
                                                        + epsilon)
    shape = x.shape[x.ndim - n:]
    y = y if weight is None else y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)


def _ln_samples(rng):
    return [Sample((randn(rng, 3, 4), 4, randn(rng, 4), randn(rng, 4))),
            Sample((randn(rng, 2, 3, 4), [3, 4], randn(rng, 12), randn(rng, 12))),
            Sample((randn(rng, 2, 3, 4), [3, 4], randn(rng, 3, 4))),
            Sample((randn(rng, 2, 5), 5), {"epsilon": 1e-3})]


def _gn_ref(x, num_groups, epsilon=1e-5, weight=None, bias=None):
    xr = x.reshape(x.shape[0], num_groups, -1)
    y = ((xr - xr.mean(-1, keepdims=True)) / np.sqrt(xr.var(-1, keepdims=True) + epsilon))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = y.reshape(x.shape)
    y = y if weight is None else y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)


def _gn_samples(rng):
    return [Sample((randn(rng, 2, 4, 3, 3), 2), {"weight": randn(rng, 4),
                                                  "bias": randn(rng, 4)}),
            Sample((randn(rng, 3, 6, 4), 3)), Sample((randn(rng, 2, 4, 2, 2), 4))]


def _embedding_ref(ids, weight, padding_idx=None):
    out = weight[ids]
    if padding_idx is not None:
        out = out * (ids != padding_idx % weight.shape[0])[..., None]
    return out


def _embedding_samples(rng):
    return [Sample((np.array([[0, 2, 1], [2, 2, 4]]), randn(rng, 5, 3))),
            Sample((np.array([1, 0, 3, 0]), randn(rng, 4, 2)), {"padding_idx": 0}),
            Sample((np.array([[1], [3]]), randn(rng, 4, 2)), {"padding_idx": -1})]


# ---- losses ---------------------------------------------------------------------------------

def _log_softmax(x, axis):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def _nll_ref(logp, label, weight=None, ignore_index=-100, reduction="mean", axis=1):
    """One sample at a time."""
    axis %= logp.ndim
    lab = label.squeeze(axis) if label.ndim == logp.ndim else label
    moved = np.moveaxis(logp, axis, -1)
    loss, wsum = np.zeros(lab.shape), 0.0
    for idx in np.ndindex(lab.shape):
        k = lab[idx]
        if k == ignore_index:
            continue
        wk = 1.0 if weight is None else weight[k]
        loss[idx] = -wk * moved[idx + (k,)]
        wsum += wk
    if reduction == "none":
        return loss.reshape(label.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (wsum if wsum else 1.0)


def _ce_ref(x, label, weight=None, ignore_index=-100, reduction="mean", soft_label=False,
            axis=-1):
    logp = _log_softmax(x, axis)
    if not soft_label:
        return _nll_ref(logp, label, weight, ignore_index, reduction, axis)
    loss = -(label * logp).sum(axis=axis, keepdims=True)
    if weight is not None:
        shape = [-1 if i == axis % x.ndim else 1 for i in range(x.ndim)]
        w = (label * weight.reshape(shape)).sum(axis=axis, keepdims=True)
        loss = loss * w
        if reduction == "mean":
            return loss.sum() / w.sum()
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def _labels(rng, n, c, ignore=False):
    lab = rng.integers(0, c, n)
    if ignore:
        lab[1] = -100
    return lab


def _ce_samples(rng):
    soft = rng.uniform(0.1, 1, (3, 4))
    return [Sample((randn(rng, 4, 5), _labels(rng, 4, 5))),
            Sample((randn(rng, 4, 5), _labels(rng, 4, 5, True)[:, None]),
                   {"reduction": "sum"}),
            Sample((randn(rng, 4, 5), _labels(rng, 4, 5, True)),
                   {"weight": rng.uniform(0.5, 2, 5), "reduction": "none"}),
            Sample((randn(rng, 4, 5), _labels(rng, 4, 5, True)),
                   {"weight": rng.uniform(0.5, 2, 5)}),
            Sample((randn(rng, 2, 3, 4), rng.integers(0, 3, (2, 4))), {"axis": 1}),
            Sample((randn(rng, 3, 4), soft / soft.sum(-1, keepdims=True)), {"soft_label": True}),
            Sample((randn(rng, 3, 4), soft / soft.sum(-1, keepdims=True)),
                   {"soft_label": True, "weight": rng.uniform(0.5, 2, 4)}),
            Sample((randn(rng, 3, 4), soft), {"soft_label": True, "reduction": "none"})]


def _nll_samples(rng):
    return [Sample((_log_softmax(randn(rng, 4, 5), 1), _labels(rng, 4, 5, True))),
            Sample((_log_softmax(randn(rng, 4, 5), 1), _labels(rng, 4, 5)),
                   {"weight": rng.uniform(0.5, 2, 5), "reduction": "sum"}),
            Sample((randn(rng, 2, 3, 4), rng.integers(0, 3, (2, 4))), {"reduction": "none"})]


_NLL_ERRORS = [
    ErrorSample((np.ones((2, 3)), np.array([0, 1])), {"reduction": "avg"}, ValueError,
                r"nll_loss: reduction must be one of \('none', 'sum', 'mean'\), got 'avg'"),
    ErrorSample((np.ones((4, 5)), np.zeros(3, dtype=np.int64)), {}, ValueError,
                r"nll_loss: input has shape \[4, 5\] but label has shape \[3\]"),
    ErrorSample((np.ones((4, 5)), np.zeros(4)), {}, TypeError,
                r"nll_loss: label has dtype float64; hard labels must be int64"),
    ErrorSample((np.ones((2, 3)), np.array([0, 3])), {}, ValueError,
                r"nll_loss: label value 3 is out of range for 3 classes"),
]


def _reduce(loss, reduction):
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def _mse_ref(x, y, reduction="mean"):
    return _reduce((x - y) ** 2, reduction)


def _l1_ref(x, y, reduction="mean"):
    return _reduce(np.abs(x - y), reduction)


def _pair_samples(rng):
    x = randn(rng, 3, 4)
    return [Sample((x, x + rng.choice([-1, 1], (3, 4)) * rng.uniform(0.2, 1, (3, 4)))),
            Sample((randn(rng, 5), randn(rng, 5)), {"reduction": "sum"}),
            Sample((randn(rng, 2, 3), randn(rng, 2, 3)), {"reduction": "none"})]


def _smooth_l1_ref(x, y, reduction="mean", delta=1.0):
    d = np.abs(x - y)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * d - 0.5 * delta * delta), reduction)


def _smooth_l1_samples(rng):
    x = randn(rng, 3, 4) * 2
    return [Sample((x, x + rng.choice([-1, 1], (3, 4)) * rng.uniform(0.1, 3, (3, 4)))),
            Sample((randn(rng, 5) * 3, randn(rng, 5)), {"delta": 0.5, "reduction": "none"})]


def _kl_ref(x, y, reduction="mean"):
    loss = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1.0)) - x), 0.0)
    if reduction == "batchmean":
        return loss.sum() / x.shape[0]
    return _reduce(loss, reduction)


def _kl_samples(rng):
    y = rng.uniform(0.1, 1, (3, 4))
    y[0, 1] = 0.0
    return [Sample((_log_softmax(randn(rng, 3, 4), 1), y)),
            Sample((randn(rng, 3, 4), y), {"reduction": "batchmean"}),
            Sample((randn(rng, 2, 3), rng.uniform(0.1, 1, (2, 3))), {"reduction": "none"})]


def _bce_ref(x, y, weight=None, reduction="mean", pos_weight=None):
    p = _sigmoid(x)
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * y * np.log(p) + (1 - y) * np.log(1 - p))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _bce_samples(rng):
    y = rng.uniform(0, 1, (3, 4))
    return [Sample((randn(rng, 3, 4) * 3, y)),
            Sample((randn(rng, 3, 4), y), {"weight": rng.uniform(0.5, 2, 4),
                                           "reduction": "sum"}),
            Sample((randn(rng, 3, 4), y), {"pos_weight": rng.uniform(0.5, 2, 4),
                                           "reduction": "none"})]


OPINFOS = [
    OpInfo("relu", F.relu, lambda x: np.maximum(x, 0), unary_samples(), covers=("relu_grad",)),
    OpInfo("relu6", F.relu6, lambda x: np.clip(x, 0, 6),
           unary_samples(lambda rng, *s: randn(rng, *s) * 5), covers=("relu6_grad",)),
    OpInfo("leaky_relu", F.leaky_relu,
           lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
           _leaky_samples, covers=("leaky_relu_grad",)),
    OpInfo("hardtanh", F.hardtanh, lambda x, min=-1.0, max=1.0: np.clip(x, min, max),
           lambda rng: [Sample((randn(rng, 3, 4) * 2,)),
                        Sample((randn(rng, 5) * 2,), {"min": -0.5, "max": 2.0})],
           covers=("hardtanh_grad",)),
    OpInfo("hardsigmoid", F.hardsigmoid,
           lambda x, slope=0.1666667, offset=0.5: np.clip(x * slope + offset, 0, 1),
           lambda rng: [Sample((randn(rng, 3, 4) * 4,)),
                        Sample((randn(rng, 5),), {"slope": 0.5, "offset": 0.2})],
           covers=("hardsigmoid_grad",)),
    OpInfo("sigmoid", F.sigmoid, _sigmoid, unary_samples()),
    OpInfo("log_sigmoid", F.log_sigmoid, lambda x: np.log(_sigmoid(x)),
           unary_samples(lambda rng, *s: randn(rng, *s) * 5)),
    OpInfo("elu", F.elu, lambda x, alpha=1.0: np.where(x > 0, x, alpha * (np.exp(x) - 1)),
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 5),), {"alpha": 0.5})]),
    OpInfo("mish", F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), unary_samples()),
    OpInfo("silu", F.silu, lambda x: x * _sigmoid(x), unary_samples()),
    OpInfo("gelu", F.gelu, _gelu_ref, _gelu_samples),
    # (its own gradient, against finite differences: GELU's second derivative)
    OpInfo("gelu_grad", nn_ops.gelu_grad, _gelu_grad_ref, _gelu_grad_samples),
    OpInfo("softplus", F.softplus, _softplus_ref, _softplus_samples),
    OpInfo("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6,
           unary_samples(lambda rng, *s: randn(rng, *s) * 3)),
    OpInfo("dropout", _dropout_fn, _dropout_ref, _dropout_samples, covers=("dropout_grad",),
           static=False,  # a static program draws its mask when it runs, not when built
           error_samples=[
               ErrorSample((np.ones(3),), {"p": 1.5}, ValueError,
                           r"dropout: p must be in \[0, 1\], got 1.5"),
               ErrorSample((np.ones(3),), {"mode": "up"}, ValueError,
                           r"dropout: mode must be 'upscale_in_train' or 'downscale_in_infer'")]),
    OpInfo("softmax", F.softmax, _softmax_ref, _softmax_samples,
           error_samples=[_axis_error("softmax")]),
    OpInfo("log_softmax", F.log_softmax, lambda x, axis=-1: _log_softmax(x, axis),
           _softmax_samples, error_samples=[_axis_error("log_softmax")]),
    OpInfo("linear", F.linear, _linear_ref, _linear_samples, error_samples=[
        ErrorSample((np.ones((2, 3)), np.ones((4, 5))), {}, ValueError,
                    r"linear: x has shape \[2, 3\] but weight has shape \[4, 5\]"),
        ErrorSample((np.ones((2, 3), np.float32), np.ones((3, 4))), {}, TypeError,
                    r"linear: x has dtype float32 but weight has dtype float64")]),
    OpInfo("batch_norm", _bn_fn, _bn_ref, _bn_samples, grad=(0, 3, 4), error_samples=[
        ErrorSample((np.ones((2, 3, 2)), np.zeros(4), np.ones(4)), {}, ValueError,
                    r"batch_norm: running_mean has shape \[4\] but must have \[3\]")]),
    # (the gradient op: values through the gradient checks; its NumPy code, eager)
    OpInfo("batch_norm_relu", _bn_relu_fn, _bn_relu_ref, _bn_samples, grad=(0, 3, 4),
           covers=("batch_norm_relu_grad",)),
    OpInfo("layer_norm", F.layer_norm, _ln_ref, _ln_samples, error_samples=[
        ErrorSample((np.ones((2, 3)), 3, np.ones(4)), {}, ValueError,
                    r"layer_norm: weight has shape \[4\] but must have \[3\]")]),
    OpInfo("group_norm", F.group_norm, _gn_ref, _gn_samples, error_samples=[
        ErrorSample((np.ones((2, 3, 2)), 2), {}, ValueError,
                    r"group_norm: x has 3 channels \(shape \[2, 3, 2\]\), not divisible by "
                    r"num_groups=2")]),
    OpInfo("instance_norm", F.instance_norm,
           lambda x, weight=None, bias=None: _gn_ref(x, x.shape[1], 1e-5, weight, bias),
           lambda rng: [Sample((randn(rng, 2, 3, 4, 4),)),
                        Sample((randn(rng, 2, 3, 5),), {"weight": randn(rng, 3),
                                                        "bias": randn(rng, 3)})]),
    OpInfo("prelu", F.prelu, lambda x, w: np.where(
               x > 0, x, x * (w if w.size == 1 else w.reshape(1, -1, *[1] * (x.ndim - 2)))),
           lambda rng: [Sample((randn(rng, 2, 3, 4), rng.uniform(0.1, 0.5, 1))),
                        Sample((randn(rng, 2, 3, 2, 2), rng.uniform(0.1, 0.5, 3)))]),
    OpInfo("cosine_similarity", F.cosine_similarity,
           lambda a, b, axis=1: (a * b).sum(axis) / np.sqrt(
               np.maximum((a * a).sum(axis) * (b * b).sum(axis), 1e-16)),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
                        Sample((randn(rng, 2, 3), randn(rng, 3)), {"axis": -1})]),
    OpInfo("embedding", F.embedding, _embedding_ref, _embedding_samples,
           covers=("embedding_grad",), error_samples=[
               ErrorSample((np.array([0, 5]), np.ones((5, 2))), {}, ValueError,
                           r"embedding: id 5 is out of range for a table of 5 rows"),
               ErrorSample((np.array([0, 1]), np.ones(5)), {}, ValueError,
                           r"embedding: weight must be 2-D \[num_embeddings, dim\], got "
                           r"shape \[5\]"),
               ErrorSample((np.array([0.0, 1.0]), np.ones((5, 2))), {}, TypeError,
                           r"embedding: x has dtype float64; ids must be int64")]),
    OpInfo("normalize", F.normalize,
           lambda x, p=2, axis=1: x / np.maximum(
               (np.abs(x) ** p).sum(axis=axis, keepdims=True) ** (1 / p), 1e-12),
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 4),), {"axis": -1}),
                        Sample((randn(rng, 3, 4),), {"p": 1, "axis": 0})]),
    OpInfo("nll_loss", F.nll_loss, _nll_ref, _nll_samples, covers=("nll_loss_grad",),
           error_samples=_NLL_ERRORS),
    OpInfo("cross_entropy", F.cross_entropy, _ce_ref, _ce_samples),
    OpInfo("softmax_with_cross_entropy", F.softmax_with_cross_entropy,
           lambda x, y, soft_label=False, axis=-1: _ce_ref(
               x, y if soft_label or y.ndim == x.ndim else np.expand_dims(y, axis),
               reduction="none", soft_label=soft_label, axis=axis),
           lambda rng: [Sample((randn(rng, 4, 5), _labels(rng, 4, 5)[:, None])),
                        Sample((randn(rng, 4, 5), _labels(rng, 4, 5))),
                        Sample((randn(rng, 3, 4), rng.dirichlet(np.ones(4), 3)),
                               {"soft_label": True})]),
    OpInfo("square_error_cost", F.square_error_cost, lambda x, y: (x - y) ** 2,
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4)))]),
    OpInfo("smooth_l1_loss", F.smooth_l1_loss, _smooth_l1_ref, _smooth_l1_samples),
    OpInfo("kl_div", F.kl_div, _kl_ref, _kl_samples, grad=(0,)),  # log(label) is singular at 0
    OpInfo("mse_loss", F.mse_loss, _mse_ref, _pair_samples),
    OpInfo("l1_loss", F.l1_loss, _l1_ref, _pair_samples),
    OpInfo("binary_cross_entropy", F.binary_cross_entropy,
           lambda p, y, weight=None, reduction="mean": _reduce(
               -(y * np.log(p) + (1 - y) * np.log(1 - p)) * (1 if weight is None else weight),
               reduction),
           lambda rng: [Sample((rng.uniform(0.05, 0.95, (3, 4)), rng.uniform(0, 1, (3, 4)))),
                        Sample((rng.uniform(0.05, 0.95, (5,)), rng.uniform(0, 1, (5,))),
                               {"weight": rng.uniform(0.5, 2, 5), "reduction": "none"})]),
    OpInfo("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits, _bce_ref,
           _bce_samples),
]

EXEMPT["pool_window_index"] = ("the window table of a pool sized when the program runs (sizes "
                               "are tensors): values and gradients of those pools vs NumPy in "
                               "tests/d2s/breadth35/test_counter_sized_splits_and_pools.py")
EXEMPT["lstm_sequence"] = ("a whole LSTM direction (nn.LSTM's kernel): values, gradients vs central "
                           "differences and its C kernel in tests/nn/test_lstm_sequence.py")
EXEMPT["lstm_sequence_grad"] = "the grad of lstm_sequence; checked in tests/nn/test_lstm_sequence.py"
EXEMPT["gru_sequence"] = ("a whole GRU direction (nn.GRU's kernel): values, gradients vs central "
                          "differences and the loop of ops, its C kernel in "
                          "tests/nn/test_gru_sequence.py")
EXEMPT["gru_sequence_grad"] = "the grad of gru_sequence; checked in tests/nn/test_gru_sequence.py"
