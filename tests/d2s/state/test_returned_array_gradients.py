"""A list grown by a tensor condition and returned (a tensor array in the program) comes back
as eager's list of Tensors WITH their gradient path: `loss = sum(outs) + ...` gets the same
gradient as eager (before, the items came back detached and the gradient silently missed
them)."""
import numpy as np

import d2s
import runtime as rt

from tests.finite_differences import numeric_grad


def unrolled(x, n):
    outs = []
    i = 0
    h = x
    while i < n:  # n is a tensor: a graph loop
        h = rt.tanh(h * 1.5)
        outs.append(h)
        i += 1
    return outs, h


def _ref(xv, n):
    outs, h = [], xv
    for _ in range(n):
        h = np.tanh(h * 1.5)
        outs.append(h)
    return outs, h


def test_returned_array_items_carry_gradients_like_eager():
    static = d2s.to_static(unrolled)
    x0 = np.array([0.3, -0.7], "float64")
    for n in (0, 1, 3):
        x = rt.to_tensor(x0.astype("float32"))
        x.stop_gradient = False
        outs, h = static(x, rt.to_tensor(np.array(n, "int64")))
        assert len(outs) == n
        ref_outs, ref_h = _ref(x0, n)
        for o, r in zip(outs, ref_outs, strict=True):
            np.testing.assert_allclose(o.numpy(), r, rtol=1e-5)
        loss = h.sum() * 0.5 + x.sum()
        for o in outs:
            loss = loss + (o * o).sum()
        loss.backward()

        def f(xv):
            ro, rh = _ref(xv, n)
            return rh.sum() * 0.5 + xv.sum() + sum((o * o).sum() for o in ro)

        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, x0.copy()), rtol=1e-3,
                                   atol=1e-4)
    assert len(static.program_cache) == 1


def test_without_gradients_the_items_are_plain_tensors():
    static = d2s.to_static(unrolled)
    with rt.no_grad():
        outs, _ = static(rt.to_tensor(np.array([0.5, 1.0], "float32")),
                         rt.to_tensor(np.array(2, "int64")))
    assert [o.stop_gradient for o in outs] == [True, True]
    np.testing.assert_allclose(outs[1].numpy(), _ref(np.array([0.5, 1.0]), 2)[0][1], rtol=1e-5)
