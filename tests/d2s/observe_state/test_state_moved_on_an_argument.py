"""State moved on an object passed in each call (issue 35, "a trace on every call"): a
streaming caller keeps `st.cur` / `st.prev` on a SimpleNamespace or a dataclass and passes it
to the converted step, which moves the tensor (`st.prev = st.cur`) and stores a new one.
Each call found another tensor at `st.prev`, which the trace had guarded by identity, so
every call traced again (right values, one program per call). The place the call moves a
tensor into is now guarded by its tensor's kind (`writeback_fed.moved_from`), as a Layer's
attribute is: one program serves every call. Inputs take both paths of a tensor `if`."""
import dataclasses
import types

import numpy as np
import pytest

import d2s
import runtime as rt

INPUTS = [np.array(v, np.float32) for v in (
    [1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, 0.5], [-0.5, -4.0], [3.0, 1.0],
    [-1.0, 0.0])]


@dataclasses.dataclass
class Stream:
    cur: rt.Tensor
    prev: rt.Tensor
    steps: int = 0


def step(x, st):
    """A streaming step: the previous mean decides the path, the new one is kept."""
    st.prev = st.cur
    st.cur = x.mean()
    if st.prev > 0:
        return x * 2.0 + st.prev
    return x - st.prev


def _swap(st, h):
    st.prev, st.cur = st.cur, h.detach()


def by_helper(x, st):
    _swap(st, x)
    if st.prev.sum() > 0:
        return x + st.prev
    return x - st.cur


def _step_reference(v, prev):
    return v * 2.0 + prev if prev > 0 else v - prev


def _helper_reference(v, prev):
    return v + prev if prev.sum() > 0 else v - v


MAKERS = {
    "namespace": lambda shape: types.SimpleNamespace(cur=rt.zeros(shape), prev=rt.zeros(shape)),
    "dataclass": lambda shape: Stream(rt.zeros(shape), rt.zeros(shape)),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("fn, shape, reference, mean", [
    (step, [], _step_reference, True), (by_helper, [2], _helper_reference, False)],
    ids=["step", "by_helper"])
def test_state_moved_on_an_argument_is_one_program(kind, fn, shape, reference, mean):
    static = d2s.to_static(fn)
    got_st, want_st = MAKERS[kind](shape), MAKERS[kind](shape)
    prev = np.zeros(shape, np.float32)
    for v in INPUTS:
        cur_before = got_st.cur
        want = fn(rt.to_tensor(v), want_st)
        got = static(rt.to_tensor(v), got_st)
        np.testing.assert_allclose(got.numpy(), reference(v, prev), rtol=1e-6)
        np.testing.assert_allclose(want.numpy(), reference(v, prev), rtol=1e-6)
        assert type(got) is type(want) and got.dtype == want.dtype
        for name in ("cur", "prev"):
            a, b = getattr(got_st, name), getattr(want_st, name)
            assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
            assert a.stop_gradient == b.stop_gradient
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
        if kind == "namespace":  # (the tensor itself, as eager code moves it; a dataclass
            assert got_st.prev is cur_before  # argument's fields are fed: its values)
        prev = v.mean() if mean else v
    assert static.get_traced_count() == 1


def test_a_state_of_another_shape_traces_again():
    static = d2s.to_static(by_helper)
    st = types.SimpleNamespace(cur=rt.zeros([2]), prev=rt.zeros([2]))
    for v in INPUTS[:3]:
        static(rt.to_tensor(v), st)
    wide = types.SimpleNamespace(cur=rt.ones([3]), prev=rt.zeros([3]))
    got = static(rt.to_tensor(np.array([1.0, -2.0, 0.5], np.float32)), wide)
    np.testing.assert_allclose(got.numpy(), [2.0, -1.0, 1.5], rtol=1e-6)
    np.testing.assert_array_equal(wide.prev.numpy(), np.ones(3, np.float32))
    assert static.get_traced_count() == 2
