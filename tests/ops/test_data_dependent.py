"""Ops whose result lengths depend on the values (nonzero, unique, bincount) and
multinomial: eager vs converted code vs NumPy, with inputs whose results have different
lengths through one converted program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import static

INPUTS = [np.array([[0, 3, 3], [5, 0, 1]]), np.array([[2, 2, 2], [2, 2, 0]]),
          np.array([[0, 0, 0], [0, 0, 0]])]


def _unique_ref(x, axis=None):
    out, index, inverse, counts = np.unique(x if axis is not None else x.reshape(-1),
                                            return_index=True, return_inverse=True,
                                            return_counts=True, axis=axis)
    return out, index, inverse.reshape(-1), counts


@d2s.to_static
def _stats(x):
    rows = rt.nonzero(x)
    values, index, inverse, counts = rt.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    hist = rt.bincount(x.flatten(), minlength=2)
    return rows, values, index, inverse, counts, hist


def _eager_stats(x):
    return _stats.dygraph_function(x)


@pytest.mark.parametrize("convert", [False, True])
def test_nonzero_unique_bincount_match_numpy(convert):
    fn = _stats if convert else _eager_stats
    for x0 in INPUTS:  # one program, results of different lengths
        got = fn(rt.to_tensor(x0))
        want = [np.argwhere(x0), *_unique_ref(x0), np.bincount(x0.reshape(-1), minlength=2)]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == "int64"
            np.testing.assert_array_equal(g.numpy(), w)
    if convert:
        assert len(_stats.program_cache) == 1


def test_static_shapes_mark_the_data_dependent_lengths():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2, 3], "int64")
        rows = rt.nonzero(x)
        values, inverse = rt.unique(x, return_inverse=True)
        per_row, counts = rt.unique(x, axis=0, return_counts=True)
        hist = rt.bincount(rt.reshape(x, [-1]), weights=rt.ones([6], "float64"))
    assert rows.shape == [-1, 2] and values.shape == [-1] and inverse.shape == [6]
    assert per_row.shape == [-1, 3] and counts.shape == [-1] and hist.shape == [-1]
    assert hist.dtype == "float64"
    x0 = np.array([[1, 4, 4], [1, 4, 4]])
    got = static.Executor().run(main, feed={"x": x0}, fetch_list=[rows, per_row, counts, hist])
    np.testing.assert_array_equal(got[0], np.argwhere(x0))
    np.testing.assert_array_equal(got[1], [[1, 4, 4]])
    np.testing.assert_array_equal(got[2], [2])
    np.testing.assert_array_equal(got[3], np.bincount(x0.reshape(-1)).astype(float))


def test_nonzero_as_tuple_indexes_like_numpy():
    x0 = np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 3.0]])
    x = rt.to_tensor(x0)
    idx = rt.nonzero(x > 1, as_tuple=True)
    assert len(idx) == 2
    for g, w in zip(idx, np.nonzero(x0 > 1)):
        np.testing.assert_array_equal(g.numpy(), w)
    np.testing.assert_array_equal(x.nonzero().numpy(), np.argwhere(x0))


def test_unique_on_an_axis_and_floats():
    x0 = np.array([[1.5, 2.0], [0.5, 1.0], [1.5, 2.0]])
    out, inverse, counts = rt.unique(rt.to_tensor(x0), return_inverse=True, return_counts=True,
                                     axis=0)
    w_out, _, w_inv, w_counts = _unique_ref(x0, axis=0)
    np.testing.assert_array_equal(out.numpy(), w_out)
    np.testing.assert_array_equal(inverse.numpy(), w_inv)
    np.testing.assert_array_equal(counts.numpy(), w_counts)
    assert rt.unique(rt.to_tensor([3, 1, 3]), dtype="int32", return_counts=True)[1].dtype \
        == "int32"


def test_bincount_weights_and_errors():
    x = rt.to_tensor([0, 2, 2, 5])
    w = rt.to_tensor([0.5, 1.0, 2.0, 0.25], "float32")
    got = rt.bincount(x, weights=w, minlength=8)
    assert got.dtype == "float32"
    np.testing.assert_allclose(got.numpy(), np.bincount([0, 2, 2, 5], [0.5, 1, 2, 0.25], 8))
    with pytest.raises(ValueError, match=r"bincount: x holds a negative value \(-1\)"):
        rt.bincount(rt.to_tensor([1, -1]))
    with pytest.raises(TypeError, match=r"bincount: x must be a 1-D integer tensor, got "
                                        r"float32\[2\]"):
        rt.bincount(rt.to_tensor([1.0, 2.0]))


def test_multinomial_follows_the_probabilities_and_the_seed():
    probs = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 2.0]])
    rt.seed(5)
    a = rt.multinomial(rt.to_tensor(probs), 4000, replacement=True)
    rt.seed(5)
    b = rt.multinomial(rt.to_tensor(probs), 4000, replacement=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.shape == [2, 4000] and a.dtype == "int64"
    freq = np.bincount(a.numpy()[0], minlength=4) / 4000
    np.testing.assert_allclose(freq, probs[0], atol=0.03)
    assert (a.numpy()[1] == 3).all()
    draws = rt.multinomial(rt.to_tensor([1.0, 1.0, 1.0]), 3).numpy()
    assert sorted(draws.tolist()) == [0, 1, 2]  # without replacement: each once
    with pytest.raises(ValueError, match=r"multinomial: num_samples=3 without replacement"):
        rt.multinomial(rt.to_tensor([1.0, 0.0, 1.0]), 3)
    with pytest.raises(ValueError, match=r"multinomial: x holds a negative"):
        rt.multinomial(rt.to_tensor([1.0, -1.0]))


@d2s.to_static
def _draw(p):
    return rt.multinomial(p, 2000, replacement=True)


def test_multinomial_in_converted_code_draws_at_each_run():
    p = rt.to_tensor([0.25, 0.75])
    first, second = _draw(p).numpy(), _draw(p).numpy()
    assert not np.array_equal(first, second)
    for draws in (first, second):
        np.testing.assert_allclose(np.bincount(draws, minlength=2) / 2000, [0.25, 0.75],
                                   atol=0.04)
