"""A call whose input needs a gradient, returning beside the loss a value with no gradient
path on any run (`rt.grad`'s result without `create_graph`, a detached value): the recorded
backward differentiated every floating output, so the gradient of `rt.grad`'s result went
through a `register_hook` hook and raised "a second-order gradient through a tensor with a
register_hook hook" where eager runs (the corpus case `gradient_hook_doubles` with
`x.stop_gradient = False` set inside, which the caller's tensor now follows). Eager vs
static, both branches of the tensor `if`; `backward()` of the loss after the call
raises eager's error (the `rt.grad` in the call freed the graph)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def hooked(x):
    y = x * 3
    y.register_hook(lambda g: g * 2)
    if y.sum() > 0:
        z = (y * y).sum()
    else:
        z = y.sum()
    (g,) = rt.grad(z, x)
    return z, g, g.detach() * 0.5


def test_the_call_runs_and_backward_reaches_the_input_as_eager():
    static = d2s.to_static(hooked)
    for row in ([1.0, 2.0], [-1.0, -2.0]):
        xe, xs = (rt.to_tensor(np.asarray(row, "float32")) for _ in range(2))
        xe.stop_gradient = xs.stop_gradient = False
        want, got = hooked(xe), static(xs)
        for w, g in zip(want, got, strict=True):
            assert g.stop_gradient == w.stop_gradient
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
        for z in (want[0], got[0]):  # (`rt.grad` freed the graph: eager's error, both)
            with pytest.raises(RuntimeError, match="already freed"):
                z.backward()
    assert len(static.program_cache) == 1
