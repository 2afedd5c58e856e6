"""`del name` in one branch of a tensor `if` or in a graph loop's body (issue 35, item 6):
the name is unbound on that path only, as in eager code (the converted branch raised
UnboundLocalError at the `del` on every input). Reading it afterwards raises eager's
UnboundLocalError on the inputs that deleted it, and runs on the others, in one program;
`del` of a name nothing reads again converts; gradients through the kept path match finite
differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

INPUTS = [np.array([-1.0, 0.5], "float32"), np.array([1.0, 2.0], "float32")]


def drop_on_positive(x):
    skip = x * x
    if x.sum() > 0:
        del skip
    return skip * 3.0


def test_a_name_deleted_in_one_branch_is_unbound_only_there():
    static = d2s.to_static(drop_on_positive, full_graph=True)
    for xv in INPUTS:
        for fn in (drop_on_positive, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            if xv.sum() > 0:
                with pytest.raises(UnboundLocalError, match="'skip'"):
                    fn(x)
                continue
            y = fn(x)
            np.testing.assert_allclose(y.numpy(), xv * xv * 3.0, rtol=1e-6)
            y.sum().backward()
            want = numeric_grad(lambda v: float((v * v * 3.0).sum()), xv.astype("float64"))
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def free_the_buffer(x):
    big = rt.concat([x, x])
    if x.mean() > 0:
        y = big.sum()
        del big
    else:
        y = x.sum() * 2.0
    return y


def accumulate(x, n):
    total = x * 0.0
    for i in range(n):
        step = x * i
        total = total + step
        del step
    return total


def test_deletes_nothing_reads_again_convert():
    f = d2s.to_static(free_the_buffer, full_graph=True)
    g = d2s.to_static(accumulate, full_graph=True)
    for xv in INPUTS:
        want = xv.sum() * 2.0
        assert float(free_the_buffer(rt.to_tensor(xv))) == pytest.approx(want)
        assert float(f(rt.to_tensor(xv))) == pytest.approx(want)
        for k in (0, 1, 3):
            want_acc = xv * sum(range(k))
            np.testing.assert_allclose(accumulate(rt.to_tensor(xv), k).numpy(), want_acc)
            np.testing.assert_allclose(g(rt.to_tensor(xv), rt.to_tensor(k)).numpy(), want_acc)
    assert len(f.program_cache) == 1 and len(g.program_cache) == 1
