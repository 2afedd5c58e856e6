"""One call per AMP-relevant op, with float operands made by `t(shape)` in the dtype under test.

Used by the white-list test (every op the registry runs in low precision must have a call
here) and by the dtype-table test (every op named in docs/training.md's AMP table)."""
from __future__ import annotations

import numpy as np

import runtime as rt
import runtime.nn.functional as F
from runtime.ops.registry import OPS, bind

_CONV = {"stride": [1, 1], "padding": [0, 0, 0, 0], "dilation": [1, 1], "groups": 1}


def maker(dtype: str, positive: bool = False):
    """t(shape): a deterministic tensor of `dtype` (values in [0.5, 1.5) when positive)."""
    rng = np.random.default_rng(0)

    def t(shape, pos=positive):
        a = rng.random(shape) + 0.5 if pos else rng.standard_normal(shape)
        return rt.to_tensor(a.astype(np.float32)).astype(dtype)

    return t


def _ids(n):
    return rt.to_tensor(np.arange(n, dtype=np.int64) % 3)


CALLS = {
    # white
    "matmul": lambda t: rt.matmul(t([2, 4]), t([4, 3])),
    "linear": lambda t: F.linear(t([2, 4]), t([4, 3]), t([3])),
    "einsum": lambda t: rt.einsum("bij,bjk->bik", t([2, 2, 4]), t([2, 4, 3])),
    "conv2d": lambda t: F.conv2d(t([1, 2, 5, 5]), t([3, 2, 3, 3])),
    "conv2d_grad_input": lambda t: bind(OPS["conv2d_grad_input"],
                                        (t([1, 3, 3, 3]), t([3, 2, 3, 3]), t([1, 2, 5, 5])),
                                        dict(_CONV)),
    "conv2d_grad_filter": lambda t: bind(OPS["conv2d_grad_filter"],
                                         (t([1, 2, 5, 5]), t([1, 3, 3, 3]), t([3, 2, 3, 3])),
                                         dict(_CONV)),
    # black
    "exp": lambda t: rt.exp(t([2, 4])),
    "log": lambda t: rt.log(t([2, 4], pos=True)),
    "log1p": lambda t: rt.log1p(t([2, 4], pos=True)),
    "logsumexp": lambda t: rt.logsumexp(t([2, 4]), axis=-1),
    "square": lambda t: rt.square(t([2, 4])),
    "sum": lambda t: rt.sum(t([2, 4])),
    "mean": lambda t: rt.mean(t([2, 4])),
    "prod": lambda t: rt.prod(t([2, 4], pos=True)),
    "cumprod": lambda t: rt.cumprod(t([2, 4], pos=True), dim=-1),
    "cumsum": lambda t: rt.cumsum(t([2, 4]), axis=-1),
    "logcumsumexp": lambda t: rt.logcumsumexp(t([2, 4]), axis=-1),
    "tan": lambda t: rt.tan(t([2, 4])),
    "asin": lambda t: rt.asin(t([2, 4], pos=True) - 1.0),
    "acos": lambda t: rt.acos(t([2, 4], pos=True) - 1.0),
    "sinh": lambda t: rt.sinh(t([2, 4])),
    "cosh": lambda t: rt.cosh(t([2, 4])),
    "atanh": lambda t: rt.atanh(t([2, 4], pos=True) - 1.0),
    "expm1": lambda t: rt.expm1(t([2, 4])),
    "det": lambda t: rt.linalg.det(t([2, 3, 3])),
    "slogdet": lambda t: rt.linalg.slogdet(t([2, 3, 3])),
    "solve": lambda t: rt.linalg.solve(t([3, 3]) + rt.eye(3) * 4.0, t([3, 2])),
    "cholesky": lambda t: rt.linalg.cholesky(t([3, 3], pos=True) * 0.1 + rt.eye(3)),
    "pow": lambda t: rt.pow(t([2, 4]), 3.0),
    "rsqrt": lambda t: rt.rsqrt(t([2, 4], pos=True)),
    "softplus": lambda t: F.softplus(t([2, 4])),
    "softmax": lambda t: F.softmax(t([2, 4])),
    "log_softmax": lambda t: F.log_softmax(t([2, 4])),
    "layer_norm": lambda t: F.layer_norm(t([2, 4]), [4], t([4]), t([4])),
    "group_norm": lambda t: F.group_norm(t([2, 4, 3]), 2, weight=t([4]), bias=t([4])),
    "batch_norm": lambda t: F.batch_norm(t([3, 4]), t([4]), t([4], pos=True), t([4]), t([4])),
    "batch_norm_relu": lambda t: bind(OPS["batch_norm_relu"],  # (y, mean, var): y
                                      (t([3, 4]), t([4]), t([4], pos=True), t([4]), t([4])),
                                      {"training": False})[0],
    "batch_norm_relu_grad": lambda t: bind(OPS["batch_norm_relu_grad"], (  # (dx, dw, db): dx
        t([3, 4]), t([3, 4]), t([3, 4], pos=True), t([4]), t([4], pos=True), t([4]), t([4])),
        {"training": True})[0],
    "nll_loss": lambda t: F.nll_loss(F.log_softmax(t([3, 4])), _ids(3)),
    "nll_loss_grad": lambda t: bind(OPS["nll_loss_grad"], (t([]), _ids(3), None, t([3, 4])), {}),
    "embedding": lambda t: F.embedding(_ids(2), t([3, 4])),
    "scatter": lambda t: rt.scatter(t([3, 4]), _ids(2), t([2, 4])),
    "resize2d": lambda t: F.interpolate(t([1, 2, 3, 3]), scale_factor=2, mode="bilinear"),
    # promote
    "add": lambda t: t([2, 4]) + t([4]),
    "multiply": lambda t: t([2, 4]) * t([2, 4]),
    "tanh": lambda t: rt.tanh(t([2, 4])),
    "relu": lambda t: F.relu(t([2, 4])),
    "gelu": lambda t: F.gelu(t([2, 4])),
    "max_pool2d": lambda t: F.max_pool2d(t([1, 2, 4, 4]), 2),
    "conv2d_transpose": lambda t: F.conv2d_transpose(t([1, 2, 4, 4]), t([2, 3, 3, 3])),
}
