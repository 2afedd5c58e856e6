"""A list place (an attribute, a closure variable) that the branches of a tensor `if` rebind
to lists of different lengths (`rec.log = rec.log + [h]`) while another reference holds the
list from before (issue 35). It was refused with a message about its items ("its items are
tensors of ranks 1"), though the items could be one tensor array and the other reference is
no obstacle: rebinding leaves that list as it was, as in eager code. It converts: the place
gets a list of its own after the call. A list changed in place (`.append`) while another
reference holds it is still refused, and the message names that reference. Eager vs static
vs NumPy on both paths through one program, with gradients against finite differences."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line

POSITIVE = np.array([1.0, 2.0], "float32")
NEGATIVE = np.array([-1.0, 0.5], "float32")


class Recorder:
    def __init__(self, first):
        self.log = [first]


def extend_log(x, rec):
    before = rec.log
    if x.sum() > 0:
        rec.log = rec.log + [x * 2.0]
    return rt.stack(rec.log).sum(0), len(before)


def extend_log_ref(x, first):
    log = [first, x * 2.0] if x.sum() > 0 else [first]
    return np.stack(log).sum(0), 1


def test_an_attribute_rebound_by_a_tensor_if_beside_the_old_list():
    static = d2s.to_static(extend_log)
    first = np.array([0.5, -0.5], "float32")
    eager_rec, static_rec = Recorder(None), Recorder(None)
    for xv in (POSITIVE, NEGATIVE):
        want_total, want_before = extend_log_ref(xv, first)
        want_log = [first, xv * 2.0] if xv.sum() > 0 else [first]
        for run, rec in ((extend_log, eager_rec), (static, static_rec)):
            rec.log = [rt.to_tensor(first)]
            old = rec.log
            total, n_before = run(rt.to_tensor(xv), rec)
            np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-6)
            assert int(n_before) == want_before
            assert len(old) == 1  # the list from before the call is left as it was
            assert len(rec.log) == len(want_log)
            for got, want in zip(rec.log, want_log, strict=True):
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def running_history(x):
    hist = [x]
    snapshot = hist

    def add(v):
        nonlocal hist
        hist = hist + [v]

    if x.sum() > 0:
        add(x * x)
    return rt.stack(hist).sum(0), len(snapshot)


def running_history_ref(x):
    return (x + x * x if x.sum() > 0 else x), 1


def test_a_closure_variable_rebound_by_a_helper_beside_the_old_list_with_gradients():
    static = d2s.to_static(running_history)
    for xv in (POSITIVE, NEGATIVE):
        want_total, want_n = running_history_ref(xv)
        grad = numeric_grad(lambda v: float(running_history_ref(v)[0].sum()),
                            xv.astype("float64"))
        for run in (running_history, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            total, n = run(x)
            np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-6)
            assert int(n) == want_n
            total.sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-5, atol=1e-6)


def append_beside_a_snapshot(x):
    hist = [x]
    snapshot = {"h": hist}

    def add(v):
        hist.append(v)

    if x.sum() > 0:
        add(x * x)
    return len(snapshot["h"])


def test_an_in_place_append_beside_another_reference_is_refused_naming_it():
    x = rt.to_tensor(POSITIVE)
    assert append_beside_a_snapshot(x) == 2  # eager: the dict sees the append
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(append_beside_a_snapshot)(x)
    lines, first = inspect.getsourcelines(append_beside_a_snapshot)
    line = first + next(i for i, ln in enumerate(lines) if "if x.sum() > 0" in ln)
    text = assert_at_user_line(info.value, __file__, line)
    assert "it is also reachable as a dict holding it" in text, text
    assert "ranks" not in text, text
