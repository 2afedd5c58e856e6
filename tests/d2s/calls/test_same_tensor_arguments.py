"""One Tensor passed as several arguments (`self.attn(x, x, x)`, `f(h, h)`) is one object
in eager code: `q is k` holds and a write through one argument is seen through the other.
The program is traced for that call pattern (the cache key records which arguments are the
same object, and the fast caller checks it), never reused from a call with distinct
tensors."""
import numpy as np

import d2s
import runtime as rt
from runtime import nn


def _t(a):
    return rt.to_tensor(np.asarray(a, "float32"))


class Attention(nn.Layer):
    """The self-attention shortcut PyTorch's MultiheadAttention takes when q, k, v are one
    tensor."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)

    def forward(self, query, key, value):
        if query is key and key is value:
            h = self.proj(query)
            return h * 2.0
        return self.proj(query) + key - value


def test_identity_between_arguments_follows_each_call():
    layer = Attention()
    static = d2s.to_static(layer)
    x, y = _t([[1.0, 2.0]]), _t([[0.5, -1.0]])
    w, b = layer.proj.weight.numpy(), layer.proj.bias.numpy()
    for _ in range(4):  # past the third call: the generated fast caller too
        np.testing.assert_allclose(static(x, x, x).numpy(), (x.numpy() @ w + b) * 2, rtol=1e-6)
        np.testing.assert_allclose(static(x, y, x).numpy(),
                                   x.numpy() @ w + b + y.numpy() - x.numpy(), rtol=1e-6)
        np.testing.assert_allclose(static(x, x, x).numpy(), layer(x, x, x).numpy(), rtol=1e-6)
    assert len(static.forward.program_cache) == 2


def test_a_write_through_one_argument_is_seen_through_the_other():
    def scale_first(x, y):
        x[0] = x[0] * 10.0
        return y + 1.0

    static = d2s.to_static(scale_first)
    for _ in range(4):
        a, b = _t([1.0, 2.0]), _t([1.0, 2.0])
        np.testing.assert_allclose(static(a, a).numpy(), [11.0, 3.0])
        np.testing.assert_allclose(a.numpy(), [10.0, 2.0])
        np.testing.assert_allclose(static(a, b).numpy(), [2.0, 3.0])
        np.testing.assert_allclose(a.numpy(), [100.0, 2.0])
        e = _t([1.0, 2.0])
        np.testing.assert_allclose(scale_first(e, e).numpy(), [11.0, 3.0])
