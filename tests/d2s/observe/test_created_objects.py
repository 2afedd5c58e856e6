"""Objects created inside converted code: a Layer made on every call is refused at the line
that makes it (eager code gives fresh parameters each call; a traced program would reuse the
first call's), a Layer made once and kept on `self` (lazy initialisation) works as eager, and a
tensor created with `stop_gradient=False` keeps that flag."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError


def fresh_head(x):
    head = rt.nn.Linear(3, 1)  # a new Layer, new random weights, on every eager call
    return head(x).sum()


def test_a_layer_made_on_every_call_is_refused_at_its_line():
    with pytest.raises(ConversionError) as e:
        d2s.to_static(fresh_head)(rt.ones([2, 3]))
    text = str(e.value)
    assert "fresh_head makes the parameter" in text
    assert "head = rt.nn.Linear(3, 1)" in text and "test_created_objects.py" in text


class Lazy(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.head = None

    def forward(self, x):
        if self.head is None:  # made on the first call only, then kept: as eager
            self.head = rt.nn.Linear(x.shape[-1], 1)
        return self.head(x).sum()


def test_a_layer_made_once_and_kept_trains_as_eager():
    rt.seed(5)
    static = d2s.to_static(Lazy())
    x = rt.to_tensor(np.arange(6, dtype="float32").reshape(2, 3) / 6)
    loss = static(x)
    w, b = static.head.weight.numpy(), static.head.bias.numpy()
    np.testing.assert_allclose(loss.numpy(), (x.numpy() @ w + b).sum(), rtol=1e-6)
    loss.backward()
    np.testing.assert_allclose(static.head.weight.grad.numpy(), x.numpy().sum(0)[:, None],
                               rtol=1e-6)
    again = static(x * 2)
    np.testing.assert_allclose(again.numpy(), (2 * x.numpy() @ w + b).sum(), rtol=1e-6)


def flagged(x):
    ids = rt.to_tensor([1, 2], dtype="int64", stop_gradient=False)
    mask = x > 0
    mask.stop_gradient = False
    return ids, mask, rt.to_tensor([3, 4], dtype="int64"), x * 2


@pytest.mark.parametrize("requires_grad", [False, True])
def test_integer_tensors_made_with_stop_gradient_false_keep_it(requires_grad):
    static = d2s.to_static(flagged)
    for _ in range(4):  # the slow call path, then the fast one
        for v in ([1.0, -1.0], [-2.0, 3.0]):
            x = rt.to_tensor(np.array(v, "float32"), stop_gradient=not requires_grad)
            want, got = flagged(x), static(x)
            assert len(got) == len(want)
            for w, g in zip(want, got, strict=True):
                assert g.stop_gradient == w.stop_gradient and g.dtype == w.dtype
                np.testing.assert_array_equal(g.numpy(), w.numpy())
            np.testing.assert_array_equal(got[1].numpy(), np.array(v) > 0)
