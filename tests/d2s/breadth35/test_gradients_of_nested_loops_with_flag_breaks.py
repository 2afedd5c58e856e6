"""Gradients through two nested Python `for` loops that a tensor `break` turns into graph loops,
the outer stopped by a flag the inner sets (CleanRL's PPO epochs stopped early on the KL,
corpus case wild3_training.ppo_epochs_with_kl_stop). The forward ran; the backward raised
`UnboundLocalError: cannot access local variable 'v_t55'` from the generated program: the
inner loop's body reads a value of the outer body (the epoch), and the backward loop computes
the inner body again after the outer body's recomputation had already freed that value."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def epochs_until_large(a, b, limit):
    total = a[0] * 0
    stop = False
    for epoch in range(3):
        for start in range(2):
            r = (b[start] * (epoch + 1)).exp()
            total = total + r * a[start]
            if r > limit:
                stop = True
                break
        if stop:
            break
    return total


def _numpy(a, b, limit):
    total = 0.0
    for epoch in range(3):
        for start in range(2):
            r = np.exp(b[start] * (epoch + 1))
            total = total + r * a[start]
            if r > limit:
                return total
    return total


def _run(fn, a, b, limit):
    ta = rt.to_tensor(a, stop_gradient=False)
    tb = rt.to_tensor(b, stop_gradient=False)
    out = fn(ta, tb, limit)
    out.backward()
    return out.numpy(), ta.grad.numpy(), tb.grad.numpy()


@pytest.mark.parametrize("b, stops_at", [([0.1, 0.12], None), ([0.1, 0.3], 2), ([0.5, 0.1], 1)])
def test_values_and_gradients_follow_eager_and_finite_differences(b, stops_at):
    a = np.array([0.7, -0.4])
    b = np.array(b)
    limit = 1.5
    static = d2s.to_static(epochs_until_large)
    expected = _run(epochs_until_large, a, b, limit)
    got = _run(static, a, b, limit)
    assert len(got) == len(expected) == 3
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    np.testing.assert_allclose(got[0], _numpy(a, b, limit), rtol=1e-12)
    np.testing.assert_allclose(got[1], numeric_grad(lambda x: _numpy(x, b, limit), a),
                               rtol=1e-6)
    np.testing.assert_allclose(got[2], numeric_grad(lambda x: _numpy(a, x, limit), b),
                               rtol=1e-6)
    epochs = [e for e in range(3) if any(np.exp(v * (e + 1)) > limit for v in b)]
    assert (epochs[0] + 1 if epochs else None) == stops_at, "the inputs take different paths"


def test_one_program_serves_inputs_that_stop_in_different_epochs():
    static = d2s.to_static(epochs_until_large)
    a = np.array([0.7, -0.4])
    for b in ([0.1, 0.12], [0.1, 0.3], [0.5, 0.1]):
        _run(static, a, np.array(b), 1.5)
    assert len(static.program_cache) == 1
