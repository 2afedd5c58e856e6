"""`zip` / `enumerate` of parts that are themselves graph sequences (issue 35): the L-BFGS
two-loop recursion's `for (s, y), (rho, a) in zip(zip(s_hist, y_hist), reversed(alphas))`
where the histories are lists a tensor `if` appends to in a loop (tensor arrays),
`zip(enumerate(a), b)`, `zip(range(n_tensor), a)` and `enumerate(zip(a, b))`. A zip whose
part was another zip (or an enumerate, or a range of a tensor) was refused ("a TensorZip
whose items cannot be indexed by a tensor", or "'TensorZip' object is not iterable"). Eager
vs static vs NumPy over inputs that keep 0, 1, 2 and 4 items, one program; gradients
against finite differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def nested(x, n):
    a, b = [], []
    for i in range(n):
        if x[i] > 0:
            a.append(x[i] * 2)
            b.append(x[i] + 1)
    total = rt.zeros([])
    for (p, q), r in zip(zip(a, b), reversed(a)):
        total = total + p * q - r
    for k, (p, q) in enumerate(zip(a, b)):
        total = total + k * p
    for i, j in zip(range(n), a):
        total = total + i * j
    for (i, p), q in zip(enumerate(a), b):
        total = total + i * p * q
    scaled = [v * 3 for v in a]
    for (i, p), w in zip(enumerate(scaled), [1.0, 2.0, 3.0]):
        total = total + i * p * w
    return total, len(a)


def reference(x, n):
    a = [2 * v for v in x[:n] if v > 0]
    b = [v + 1 for v in x[:n] if v > 0]
    total = sum(p * q - r for (p, q), r in zip(zip(a, b), reversed(a)))
    total += sum(k * p for k, p in enumerate(a))
    total += sum(i * j for i, j in zip(range(n), a))
    total += sum(i * p * q for (i, p), q in zip(enumerate(a), b))
    total += sum(i * 3 * p * w for (i, p), w in zip(enumerate(a), [1.0, 2.0, 3.0]))
    return np.float32(total), len(a)


INPUTS = [[1.0, -2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, 0.5], [-1.0, -1.0, -1.0, -1.0],
          [2.0, 0.5, 1.5, 3.0], [0.5, -1.0, 2.0, -3.0]]


@pytest.mark.parametrize("n_tensor", [True, False])
def test_zips_of_zips_enumerates_and_ranges(n_tensor):
    static = d2s.to_static(nested)
    for values in INPUTS:
        x = np.array(values, "float32")
        n = rt.to_tensor(4) if n_tensor else 4
        want = nested(rt.to_tensor(x), n)
        got = static(rt.to_tensor(x), n)
        ref_total, ref_len = reference(x, 4)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
        np.testing.assert_allclose(got[0].numpy(), ref_total, rtol=1e-5)
        assert type(got[1]) is type(want[1]) and (got[1] == want[1] if isinstance(
            got[1], int) else int(got[1]) == int(want[1]) == ref_len)
    assert len(static.program_cache) == 1


def test_gradient_through_a_zip_of_zips():
    static = d2s.to_static(nested)
    x0 = np.array([1.0, -2.0, 3.0, 0.7], "float64")

    def value(v):
        return float(static(rt.to_tensor(v), rt.to_tensor(4))[0])

    x = rt.to_tensor(x0)
    x.stop_gradient = False
    total, _ = static(x, rt.to_tensor(4))
    total.backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(value, x0), rtol=1e-4, atol=1e-6)
