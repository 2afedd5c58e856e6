"""A tuple that starts with tensors and that a graph loop's body grows (`out = (x[0],)`, then
`out = out + (x[i],)` in a loop over `range(n_tensor)`): an array marked a tuple, eager's tuple
of the run's length after the loop (issue 35; it was an internal `while_loop: body must return
the loop variables in the same structure: got [Variable i64[], ...]`). Eager vs static vs NumPy
over 0, 1 and 3 trips through one program; gradients against finite differences."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

XV = np.array([1.5, -2.0, 3.0, 0.5], "float32")


def grown(x, n):
    out = (x[0] * 2.0,)
    for i in range(n):
        out = out + (x[i + 1] * x[i],)
    return out, len(out), type(out) is tuple


def rows(x, n):
    acc = (x[:2],)  # (items of rank 1)
    for i in range(n):
        acc += (x[i:i + 2] + 1.0,)
    return rt.stack(list(acc)).sum()


def _ref(xv, k):
    return [xv[0] * 2.0] + [xv[i + 1] * xv[i] for i in range(k)]


@pytest.mark.parametrize("k", [0, 1, 3])
def test_a_tuple_of_tensors_grown_in_a_graph_loop(k):
    static = d2s.to_static(grown)
    seen = []
    for fn in (grown, static):
        x = rt.to_tensor(XV, stop_gradient=False)
        out, n, is_tuple = fn(x, rt.to_tensor(np.array(k)))
        assert type(out) is tuple and is_tuple is True and n == len(out) == k + 1
        np.testing.assert_allclose([float(t) for t in out], _ref(XV, k), rtol=1e-6)
        assert all(type(t) is rt.Tensor and t.dtype == rt.float32 and not t.stop_gradient
                   for t in out)
        sum(out).backward()
        seen.append(x.grad.numpy())
    np.testing.assert_allclose(seen[0], seen[1])
    want = numeric_grad(lambda v: float(sum(_ref(v, k))), XV.astype("float64"))
    np.testing.assert_allclose(seen[1], want, rtol=1e-3, atol=1e-3)
    assert static.program_cache.traces == 1


def test_rank_one_items_and_one_program_for_every_trip_count():
    static = d2s.to_static(rows)
    for k in (0, 1, 2):
        x = rt.to_tensor(XV)
        want = XV[:2].sum() + sum((XV[i:i + 2] + 1.0).sum() for i in range(k))
        np.testing.assert_allclose(float(static(x, rt.to_tensor(np.array(k)))), want,
                                   rtol=1e-6)
        np.testing.assert_allclose(float(rows(x, rt.to_tensor(np.array(k)))), want, rtol=1e-6)
    assert static.program_cache.traces == 1


def numbers_then_tensors(x, n):
    out = (0.0,)
    for i in range(n):
        out = out + (x[i],)
    return out


def ints_grown(x, n):
    pair = (1, 2)
    for i in range(n):
        pair = pair + (i,)
    return x * len(pair)


@pytest.mark.parametrize("fn", [numbers_then_tensors, ints_grown])
def test_other_tuples_a_graph_loop_grows_are_an_error_at_the_loop(fn):
    """Eager grows them; a loop carries one structure: a ConversionError at the user's loop
    naming the tuple (was `while_loop: body must return the loop variables in the same
    structure: got [Variable i64[], ...]`)."""
    x = rt.to_tensor(XV)
    assert len(fn(x, rt.to_tensor(np.array(2)))) in (3, 4)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(x, rt.to_tensor(np.array(2)))
    text = str(info.value)
    assert "is a tuple of length" in text and "for i in range(n):" in text
    assert "Variable" not in text and "while_loop" not in text and "out.append(v)" in text
