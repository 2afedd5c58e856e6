"""`lst.reverse()` of a list grown in a graph loop (a tensor array), as a Viterbi backtrace
writes it: `path.append(...)` in a loop over a run-time length, then `path.reverse()`. The
converted call raised `AttributeError: 'Tensor' object has no attribute 'reverse'`; the array
is reversed when the program runs, in place (an alias sees it, as in eager code), and the
gradient flows through the reversed items."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def backtrace(scores, n):
    path = []
    for t in range(n):
        path.append(scores[t] * (t + 1.0))
    same = path
    path.reverse()
    return rt.stack(path), rt.stack(same)


def pairs_reversed(scores, n):
    pairs = []
    for t in range(n):
        pairs.append((scores[t], t))
    pairs.reverse()
    out = []
    for value, step in pairs:
        out.append(value * 10.0 + step)
    return rt.stack(out)


def python_list(x):
    parts = [x, x * 2.0, x * 3.0]
    parts.reverse()
    return rt.stack(parts)


def _np_backtrace(sv, n):
    return np.stack([sv[t] * (t + 1.0) for t in range(n)][::-1])


def test_a_tensor_array_reverses_in_place_when_the_program_runs():
    sv = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 4.0], [2.0, 2.0]], "float32")
    static = d2s.to_static(backtrace, full_graph=True)
    for n in (1, 3, 4):
        want = _np_backtrace(sv, n)
        for fn in (backtrace, static):
            x = rt.to_tensor(sv, stop_gradient=False)
            got, alias = fn(x, rt.to_tensor(n))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
            np.testing.assert_allclose(alias.numpy(), want, rtol=1e-6)
            (got * rt.to_tensor(np.arange(2 * n, dtype="float32").reshape(n, 2))).sum().backward()
            weights = np.arange(2 * n, dtype="float64").reshape(n, 2)
            grad = numeric_grad(lambda v, n=n, w=weights: float((_np_backtrace(v, n) * w).sum()),
                                sv.astype("float64"))
            np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def test_a_list_of_tuples_grown_in_a_graph_loop_reverses():
    sv = np.array([1.0, 2.0, 3.0], "float32")
    static = d2s.to_static(pairs_reversed, full_graph=True)
    for n in (2, 3):
        want = np.array([sv[t] * 10.0 + t for t in range(n)][::-1], "float32")
        np.testing.assert_allclose(pairs_reversed(rt.to_tensor(sv), n).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(sv), rt.to_tensor(n)).numpy(), want)


def test_a_python_list_still_reverses_in_python():
    xv = np.array([1.0, -1.0], "float32")
    got = d2s.to_static(python_list, full_graph=True)(rt.to_tensor(xv))
    np.testing.assert_allclose(got.numpy(), np.stack([xv * 3.0, xv * 2.0, xv]))
