"""A place the converted call sets to the tensor another place held when the call started
(`self.prev = self.cur; self.cur = x.detach()`, `st.prev = st.cur` in a helper,
`self.oldest = self.buf[0]`): after each call it holds that very tensor, as eager code moves
it. The write-back took only graph values, so the place kept what it held before the first
call (`self.prev` stayed zeros: silent wrong state, with right results). Inputs take both
paths of a tensor `if` in one program."""
import types

import numpy as np
import pytest

import d2s
import runtime as rt

INPUTS = [np.array(v, np.float32) for v in (
    [1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, 0.5], [-0.5, -4.0])]


class Smoother(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.cur = rt.zeros([2])
        self.prev = rt.zeros([2])

    def forward(self, x):
        self.prev = self.cur
        self.cur = x.detach()
        if self.prev.sum() > 0:
            return x + self.prev
        return x - self.prev


def _reference(seen):
    prev = seen[-2] if len(seen) > 1 else np.zeros(2, np.float32)
    return seen[-1] + prev if prev.sum() > 0 else seen[-1] - prev


def test_a_layer_moves_its_tensor_to_another_attribute():
    eager_layer, static_layer = Smoother(), Smoother()
    static = d2s.to_static(static_layer)
    seen = []
    for v in INPUTS:
        seen.append(v)
        cur_before = static_layer.cur
        want, got = eager_layer(rt.to_tensor(v)), static(rt.to_tensor(v))
        np.testing.assert_allclose(got.numpy(), _reference(seen), rtol=1e-6)
        np.testing.assert_allclose(want.numpy(), _reference(seen), rtol=1e-6)
        for name in ("prev", "cur"):
            a, b = getattr(static_layer, name), getattr(eager_layer, name)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert a.stop_gradient == b.stop_gradient and a.dtype == b.dtype
        assert static_layer.prev is cur_before  # (the tensor itself, as eager moves it)
    assert static_layer.forward.get_traced_count() == 1


def _swap(st, x):
    st.prev = st.cur
    st.cur = x.detach()


def by_helper(x, st):
    _swap(st, x)
    return x + st.prev


def by_key(x, st):
    st["prev"] = st["cur"]
    st["cur"] = x.detach()
    return x + st["prev"]


@pytest.mark.parametrize("fn, make, read", [
    (by_helper, lambda: types.SimpleNamespace(cur=rt.zeros([2]), prev=rt.zeros([2])),
     lambda st: st.prev),
    (by_key, lambda: {"cur": rt.zeros([2]), "prev": rt.zeros([2])}, lambda st: st["prev"]),
])
def test_an_argument_object_moves_its_tensor(fn, make, read):
    static = d2s.to_static(fn)
    got_state, want_state = make(), make()
    for i, v in enumerate(INPUTS):
        want = fn(rt.to_tensor(v), want_state)
        got = static(rt.to_tensor(v), got_state)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        prev = INPUTS[i - 1] if i else np.zeros(2, np.float32)
        np.testing.assert_array_equal(read(got_state).numpy(), prev)
        np.testing.assert_array_equal(read(want_state).numpy(), prev)


class Oldest(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.buf = []
        self.oldest = None

    def forward(self, x):
        self.buf.append(x.detach())
        if len(self.buf) > 2:
            self.buf.pop(0)
        self.oldest = self.buf[0]
        return x + self.oldest


def test_an_item_of_a_fifo_moved_to_an_attribute():
    eager_layer, static_layer = Oldest(), Oldest()
    static = d2s.to_static(static_layer)
    for i, v in enumerate(INPUTS):
        want, got = eager_layer(rt.to_tensor(v)), static(rt.to_tensor(v))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(static_layer.oldest.numpy(), eager_layer.oldest.numpy())
        # (once the list is full, the tensor the list held when the call started, itself;
        # while it fills, the list's items are written as new Tensors, as before)
        assert static_layer.oldest is static_layer.buf[0] or i < 2
    assert static_layer.forward.get_traced_count() == 3  # (lengths 0, 1, then 2)
