"""A dataclass argument holding a tensor is traced through a copy whose tensor fields are fed
(as a list or dict holding tensors is). What the step sets on it (`h.w = h.w * 0.5 + x`, a new
attribute `h.last = x * 2`) went to that copy only: the caller's object kept its old tensor
and the next call read it (silently another result than eager's). The changes now go to the
caller's object, as a dict's do; a Python number set on it (`h.steps += 1`) is the clear
error a dict holding tensors gives (it was an internal "numbers kept changing" error)."""
import dataclasses

import numpy as np
import pytest

import d2s
import runtime as rt


@dataclasses.dataclass
class Holder:
    w: object
    log: list = dataclasses.field(default_factory=list)


def step(x, h):
    h.log.append(float(x.sum()))
    h.w = h.w * 0.5 + x  # a tensor field rebound
    h.last = x * 2.0     # a new attribute
    return (x * h.w).sum() if x.sum() > 1 else (x - h.w).sum()


def test_tensor_fields_set_on_a_dataclass_argument_reach_the_callers_object():
    static = d2s.to_static(step)
    got, want = Holder(rt.to_tensor(np.ones(2, "float32"))), Holder(
        rt.to_tensor(np.ones(2, "float32")))
    w_ref = np.ones(2, "float32")
    for i in range(4):
        xv = np.array([i, 1.0], "float32")
        out_s, out_e = static(rt.to_tensor(xv), got), step(rt.to_tensor(xv), want)
        w_ref = w_ref * 0.5 + xv
        ref = (xv * w_ref).sum() if xv.sum() > 1 else (xv - w_ref).sum()
        np.testing.assert_allclose([float(out_s), float(out_e)], [ref, ref], rtol=1e-6)
        for h in (got, want):
            assert isinstance(h.w, rt.Tensor) and isinstance(h.last, rt.Tensor)
            np.testing.assert_allclose(h.w.numpy(), w_ref, rtol=1e-6)
            np.testing.assert_allclose(h.last.numpy(), xv * 2.0)
        assert got.log == want.log


@dataclasses.dataclass
class Counted:
    w: object
    steps: int = 0


def count(x, h):
    h.steps += 1
    return x * h.w


def test_a_python_counter_on_a_dataclass_holding_a_tensor_is_a_clear_error():
    static = d2s.to_static(count)
    with pytest.raises(d2s.StateChangeError, match=r"a Counted passed to count that holds "
                       r"tensors has its entry \.steps changed to a Python value"):
        static(rt.to_tensor(np.ones(2, "float32")), Counted(rt.to_tensor(np.ones(2, "float32"))))
