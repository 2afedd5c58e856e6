"""BatchNorm followed by ReLU as one op, forward and backward (`batch_norm_relu`,
`batch_norm_relu_grad`).

A program's fusion selects it where a `batch_norm`'s output is read by a `relu` alone
(`runtime/program/passes/batch_norm_relu.py`): the pair then makes one pass over the data
forward and one backward instead of NumPy's dozen, in generated C on the CPU
(`runtime/program/batch_norm_native.py`) and one CUDA kernel each way on the GPU
(`runtime/program/cuda_batch_norm.py`), both installed in `nn_norm.NATIVE_KERNELS` (ops may
not import the program package). The array code here is the reference: relu of
`nn_norm`'s batch norm, and the gradients `nn_norm`'s rule gives through relu's mask.

The gradient op reads dy, x, the op's output y (relu's mask: y > 0) and the statistics the
forward used; under `create_graph` the forward op's rule builds its gradient from ops
instead (relu's gradient, then batch norm's), so it can be differentiated again.
"""
from __future__ import annotations

from .nn import RELU
from .nn_norm import NATIVE_KERNELS, _bn_axes, _bn_grad, _bn_infer, _bn_kernel
from .nn_rnn import refuse_second_derivative
from .registry import OPS, STATE, Meta, bind, register


def _kernel(xp, x, rmean, rvar, w, b, training=False, epsilon=1e-5, data_format="NCHW"):
    native = NATIVE_KERNELS.get("batch_norm_relu")
    if native is not None and data_format.startswith("NC"):
        out = native(xp, x, rmean, rvar, w, b, training, epsilon)
        if out is not None:
            return out
    y, mean, var = _bn_kernel(xp, x, rmean, rvar, w, b, training, epsilon, data_format)
    return RELU.kernel(xp, y), mean, var


def _grad(ins, outs, gs, a):
    x, _, _, w, b = ins
    if gs[0] is None:  # (only the statistics were read: batch_norm's rule ignores them too)
        return [None] * 5
    if STATE.create_graph:  # a second derivative will follow: the gradient of ops
        return _bn_grad(ins, outs, [bind(OPS["relu_grad"], (gs[0], outs[0]), {})], a)
    dx, dw, db = bind(BATCH_NORM_RELU_GRAD, (gs[0], x, outs[0], outs[1], outs[2], w, b), a)
    return [dx, None, None, None if w is None else dw, None if b is None else db]


def _grad_kernel(xp, dy, x, y, mean, var, w, b, training=False, epsilon=1e-5,
                 data_format="NCHW"):
    native = NATIVE_KERNELS.get("batch_norm_relu_grad")
    if native is not None and data_format.startswith("NC"):
        out = native(xp, dy, x, y, mean, var, w, b, training, epsilon)
        if out is not None:
            return out
    channel, axes = _bn_axes(x.ndim, data_format)
    shape = [-1 if i == channel else 1 for i in range(x.ndim)]
    t = x.dtype.type
    g = xp.where(y > 0, dy, t(0)).astype(x.dtype, copy=False)
    inv = t(1) / xp.sqrt(var.reshape(shape).astype(x.dtype) + t(epsilon))
    x_hat = (x - mean.reshape(shape).astype(x.dtype)) * inv
    gw = g if w is None else g * w.reshape(shape)
    if training:
        dx = inv * (gw - gw.mean(axis=axes, keepdims=True)
                    - x_hat * (gw * x_hat).mean(axis=axes, keepdims=True))
    else:
        dx = gw * inv
    dw, db = (g * x_hat).sum(axis=axes), g.sum(axis=axes)
    return tuple(v.astype(x.dtype, copy=False) for v in (dx, dw, db))


def _grad_infer(dy, x, y, mean, var, w, b, training=False, epsilon=1e-5, data_format="NCHW"):
    channel, _ = _bn_axes(len(x.shape), data_format)
    c = Meta((x.shape[channel],), x.dtype)
    return Meta(x.shape, x.dtype), c, c


BATCH_NORM_RELU = register(
    "batch_norm_relu", kernel=_kernel, infer=_bn_infer, grad=_grad, amp="black",
    doc="relu(batch_norm(x)) and the statistics batch_norm used, in one pass where native "
        "code runs (selected by a program's fusion).")
BATCH_NORM_RELU_GRAD = register(
    "batch_norm_relu_grad", kernel=_grad_kernel, infer=_grad_infer,
    grad=refuse_second_derivative("batch_norm_relu", "a BatchNorm followed by ReLU"),
    amp="black",
    doc="(dx, dweight, dbias) of batch_norm_relu from dy, x, its output and its statistics; "
        "under create_graph batch_norm_relu's rule builds a differentiable backward of ops "
        "instead.")


def batch_norm_relu(x, running_mean, running_var, weight=None, bias=None, training=False,
                    epsilon=1e-5, data_format="NCHW"):
    """(relu(y), mean, var) for `nn_norm.batch_norm`'s (y, mean, var), as one op."""
    return bind(BATCH_NORM_RELU, (x, running_mean, running_var, weight, bias), {
        "training": bool(training), "epsilon": float(epsilon), "data_format": data_format})
