"""A `for` loop's target is bound by the loop: reading it inside the body is not a read of
the name from before the loop. A name bound in one branch of a tensor `if` only and then
reused as a later loop's target (`for i in range(2)`) converts (campaign seed 1003)."""
import gast
import numpy as np

import d2s
import runtime as rt
from d2s.pyct import activity


def _t(a):
    return rt.to_tensor(np.asarray(a, "float32"))


def doubling(x):
    h = x * 1.0
    if rt.mean(x) > 0.0:
        h = h + 1
    else:
        i = 0  # bound on this path only, never read before the loop rebinds it
        h = h - 1
    for i in range(3):
        if rt.sum(h) > 1.0:
            if i == 1:
                continue
            h = h * 2
        else:
            break
    return h


def doubling_ref(x):
    h = x + 1 if x.mean() > 0 else x - 1
    for i in range(3):
        if h.sum() > 1.0:
            if i == 1:
                continue
            h = h * 2
        else:
            break
    return h


def early_return(x):
    h = x * 1.0
    if rt.mean(x) > 0.0:
        h = h + 1
    else:
        i = 0
    for i in range(2):
        if rt.sum(h) > 1.0:
            return h * (i + 1)
    return h


def test_a_loop_target_bound_in_one_branch_before_converts():
    static = d2s.to_static(doubling)
    ret = d2s.to_static(early_return)
    for v in ([1.25, 0.75], [-2.25, -2.25], [0.25, 0.25]):
        want = doubling_ref(np.array(v, "float32"))
        np.testing.assert_allclose(static(_t(v)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(doubling(_t(v)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(ret(_t(v)).numpy(), early_return(_t(v)).numpy(), rtol=1e-6)
    assert len(static.program_cache) == 1 and len(ret.program_cache) == 1


def test_free_names_leave_out_parameters_and_locals():
    fn = gast.parse(
        "def outer(a):\n"
        "    def body(i, h):\n"
        "        def inner(k=d):\n"
        "            return i + k + g\n"
        "        return inner() + h + b\n"
        "    return body\n").body[0]
    body = fn.body[0]
    assert activity.free_names(body) == {"b", "g", "d"}
    assert activity.free_names(fn) == {"b", "g", "d"}
