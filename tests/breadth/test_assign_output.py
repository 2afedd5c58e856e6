"""`rt.assign(x, output)` writes into `output` (Paddle's semantics), eagerly and converted.

Issue 22 item 1: a model that builds a mask with `assign(mask, buffer)` used to keep an
all-zero buffer (assign ignored `output`), so its masked softmax gave NaN losses.
"""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F


class MaskedScore(rt.nn.Layer):
    """Masks padded positions with a buffer that `assign` fills on every call."""

    def __init__(self, width):
        super().__init__()
        self.proj = rt.nn.Linear(width, 1)
        self.register_buffer("mask", rt.zeros([2, 4]))

    def forward(self, x, lengths):
        steps = rt.arange(x.shape[1]).unsqueeze(0)
        rt.assign(rt.cast(steps < lengths.unsqueeze(1), "float32"), self.mask)
        score = self.proj(x).squeeze(-1)
        score = score * self.mask + (1.0 - self.mask) * -1e9
        if rt.mean(self.mask) > 0.5:  # inputs take both branches of one program
            score = score * 2.0
        return F.softmax(score, axis=-1)


def _inputs(lengths):
    rng = np.random.default_rng(0)
    return (rt.to_tensor(rng.standard_normal((len(lengths), 4, 3)).astype("float32")),
            rt.to_tensor(np.array(lengths, "int64")))


def _reference(net, x, lengths):
    w, b = net.proj.weight.numpy(), net.proj.bias.numpy()
    s = (x.numpy() @ w)[..., 0] + b
    mask = (np.arange(4)[None] < lengths.numpy()[:, None]).astype("float32")
    s = s * mask + (1 - mask) * -1e9
    if mask.mean() > 0.5:
        s = s * 2.0
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), mask


def test_assign_writes_into_output_eager_and_converted():
    rt.seed(1)
    net = MaskedScore(3)
    static_net = d2s.to_static(net)
    for lengths in ([1, 2], [4, 3], [2, 4], [3, 3]):
        x, ln = _inputs(lengths)
        want, mask = _reference(net, x, ln)
        got = net(x, ln)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(net.mask.numpy(), mask)  # really written
        got = static_net(x, ln)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
        assert np.isfinite(got.numpy()).all()


def test_assign_into_local_buffer_keeps_gradient():
    def f(x):
        buf = rt.zeros([2, 3])
        out = rt.assign(x * 3.0, buf)
        assert out is buf
        return (buf * x).sum()

    x0 = np.arange(6, dtype="float32").reshape(2, 3)
    for fn in (f, d2s.to_static(f)):
        x = rt.to_tensor(x0, stop_gradient=False)
        y = fn(x)
        y.backward()
        np.testing.assert_allclose(float(y), 3 * (x0 ** 2).sum())
        np.testing.assert_allclose(x.grad.numpy(), 6 * x0)


def test_assign_returns_output_and_accepts_python_values():
    buf = rt.zeros([3])
    assert rt.assign(np.array([1.0, 2.0, 3.0], "float32"), buf) is buf
    assert buf.tolist() == [1.0, 2.0, 3.0]
    assert rt.assign(2.5).dtype == rt.float32
    assert rt.assign([[1, 2]]).tolist() == [[1, 2]]


def test_converted_assign_cannot_reshape_a_captured_buffer():
    """A Layer's buffer keeps its shape in a program; a different shape is a clear error."""
    net = MaskedScore(3)
    x, ln = _inputs([1, 2, 3])
    with pytest.raises(ValueError, match=r"value has shape \[3, 4\] but the persistable"):
        d2s.to_static(net)(x, ln)
