"""Methods a toolkit adds to `rt.Tensor` at import (PaddleSpeech adds `masked_fill`, `view`,
`eq`, ... to `paddle.Tensor`) work on traced values inside converted code: a converted
Layer using them matches eager and NumPy, with the same gradient as finite differences.
Variable's own methods still win, and missing names still raise AttributeError."""
import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt


# ---- what a speech toolkit's `tensor_utils.py` does at import -----------------------------
def masked_fill(xs, mask, value):
    return rt.where(rt.broadcast_to(mask, xs.shape), rt.full_like(xs, value), xs)


def view(xs, *shape):
    return rt.reshape(xs, list(shape[0]) if len(shape) == 1 else list(shape))


def eq(xs, other):
    return rt.equal(xs, other)


def frame_energy(xs):
    """A toolkit's own helper, never a built-in name."""
    return rt.sum(xs * xs, axis=-1)


def num_frames(xs):
    return xs.shape[1]


@pytest.fixture
def patched_tensor(monkeypatch):
    """Install the toolkit's patches the way it does (only where a name is missing), undone
    after the test."""
    for name, fn in (("masked_fill", masked_fill), ("view", view), ("eq", eq)):
        if not hasattr(rt.Tensor, name):
            monkeypatch.setattr(rt.Tensor, name, fn, raising=False)
    monkeypatch.setattr(rt.Tensor, "frame_energy", frame_energy, raising=False)
    monkeypatch.setattr(rt.Tensor, "num_frames", property(num_frames), raising=False)


class MaskedPool(rt.nn.Layer):
    """Mean of the unpadded frames of a [batch, frames, dim] batch, then a projection."""

    def __init__(self):
        super().__init__()
        self.proj = rt.nn.Linear(3, 2)

    def forward(self, feats, lengths):
        frames = rt.arange(feats.num_frames).view([1, -1])
        pad = (frames >= lengths.view([-1, 1])).view([feats.shape[0], feats.num_frames, 1])
        kept = feats.masked_fill(pad, 0.0)
        if rt.sum(lengths.eq(0).astype("int32")) > 0:  # an empty utterance: no division
            pooled = rt.sum(kept, axis=1)
        else:
            pooled = rt.sum(kept, axis=1) / lengths.view([-1, 1]).astype(feats.dtype)
        return self.proj(pooled) + kept.frame_energy().sum(axis=1, keepdim=True)


def reference(net, feats, lengths):
    pad = np.arange(feats.shape[1])[None, :] >= lengths[:, None]
    kept = np.where(pad[..., None], 0.0, feats)
    pooled = kept.sum(1) if (lengths == 0).any() else kept.sum(1) / lengths[:, None]
    w, b = net.proj.weight.numpy().astype("float64"), net.proj.bias.numpy().astype("float64")
    return pooled @ w + b + (kept * kept).sum(-1).sum(1, keepdims=True)


def test_patched_methods_in_a_converted_layer(patched_tensor):
    rng = np.random.default_rng(1)
    net = MaskedPool()
    static = d2s.to_static(MaskedPool())
    static.set_state_dict(net.state_dict())
    for lengths in (np.array([4, 2]), np.array([3, 0])):  # divides; an empty utterance
        feats = rng.normal(size=(2, 4, 3)).astype("float32")
        x, n = rt.to_tensor(feats), rt.to_tensor(lengths.astype("int64"))
        eager_out = net(x, n).numpy()
        np.testing.assert_allclose(
            eager_out, reference(net, feats.astype("float64"), lengths), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(static(x, n).numpy(), eager_out, rtol=1e-5, atol=1e-6)
    assert len(static.forward.program_cache) == 1  # one program for both paths
    assert "cond" in str(static.forward.concrete_program.main_program)


def test_gradient_through_patched_methods(patched_tensor):
    lengths = np.array([4, 2])
    feats = np.random.default_rng(2).normal(size=(2, 4, 3))
    static = d2s.to_static(MaskedPool())
    x = rt.to_tensor(feats.astype("float32"), stop_gradient=False)
    static(x, rt.to_tensor(lengths)).sum().backward()

    def loss(values):
        return reference(static, values, lengths).sum()

    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(loss, feats), rtol=1e-4,
                               atol=1e-4)


def test_variable_methods_win_and_missing_names_name_tensor(monkeypatch):
    monkeypatch.setattr(rt.Tensor, "reshape", lambda xs, shape: "patched", raising=True)

    @d2s.to_static
    def flat(x):
        return x.reshape([-1])

    np.testing.assert_allclose(flat(rt.ones([2, 2])).numpy(), np.ones(4))

    @d2s.to_static
    def missing(x):
        return x.no_such_method()

    with pytest.raises(AttributeError, match="'Tensor' object has no attribute "
                                             "'no_such_method'"):
        missing(rt.ones([2]))


def test_place_in_converted_code():
    @d2s.to_static
    def on_device(x):
        return rt.to_tensor([1.0]) if x.place == "cpu" else x

    assert rt.ones([1]).place == "cpu"
    np.testing.assert_allclose(on_device(rt.zeros([1])).numpy(), [1.0])
