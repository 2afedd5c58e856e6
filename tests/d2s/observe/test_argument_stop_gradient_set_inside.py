"""`x.stop_gradient = False` on an argument inside converted code (a saliency map, an
adversarial step, an input-gradient penalty ask for the input's gradient in the function):
eager code changes the caller's tensor, the result needs a gradient and `backward()` reaches
`x.grad`. The converted call left the caller's tensor as it was and returned results with
no gradient path (silently: `x.grad` None). Setting it True on an argument that needs one
cuts the path of what is computed after the line only. Eager vs static, several calls (one
program), gradients against finite differences."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def saliency_loss(x, w):
    x.stop_gradient = False
    y = (x * w).tanh().sum()
    return y


def before_and_after(x):
    a = x * 3.0  # (before the line: x's gradient path, if it had one)
    x.stop_gradient = True
    b = x * 2.0
    return a, b


def _t(v, stop=True):
    out = rt.to_tensor(np.asarray(v, "float32"))
    out.stop_gradient = stop
    return out


def test_the_input_gets_eagers_gradient():
    static = d2s.to_static(saliency_loss)
    w = _t([0.5, -1.0, 2.0])
    for row in ([1.0, 2.0, 3.0], [0.1, -0.2, 0.3], [2.0, 0.0, -1.0]):
        xe, xs = _t(row), _t(row)
        ye, ys = saliency_loss(xe, w), static(xs, w)
        assert (xs.stop_gradient, ys.stop_gradient) == (xe.stop_gradient, ye.stop_gradient) \
            == (False, False)
        ye.backward()
        ys.backward()
        np.testing.assert_allclose(xs.grad.numpy(), xe.grad.numpy(), rtol=1e-6)
        want = numeric_grad(lambda a: float(np.tanh(a * w.numpy().astype("float64")).sum()),
                            np.asarray(row, "float64"))
        np.testing.assert_allclose(xs.grad.numpy(), want, rtol=1e-3, atol=1e-4)
        assert w.grad is None
    assert len(static.program_cache) == 1


def test_setting_it_true_cuts_only_what_follows():
    static = d2s.to_static(before_and_after)
    for fn in (before_and_after, static):
        x = _t([1.0, 2.0], stop=False)
        a, b = fn(x)
        assert (x.stop_gradient, a.stop_gradient, b.stop_gradient) == (True, False, True)


def frozen_input(x):
    x.stop_gradient = True  # (one tensor out: the call's shortest path)
    return x * 2.0


def test_a_single_result_call_sets_the_flag_too():
    static = d2s.to_static(frozen_input)
    for _ in range(4):  # (the later calls: the fast path, where one applies)
        xe, xs = _t([1.0, 2.0], stop=False), _t([1.0, 2.0], stop=False)
        with rt.no_grad():  # (no gradient recorded: the inference path)
            ye, ys = frozen_input(xe), static(xs)
        assert (xs.stop_gradient, ys.stop_gradient) == (xe.stop_gradient, ye.stop_gradient) \
            == (True, True)
