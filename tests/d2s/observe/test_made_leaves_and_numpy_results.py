"""Two observables of values converted code makes, compared with eager's:

- a result that needs a gradient only through a leaf the function makes (`w = rt.ones([2])`,
  `w.stop_gradient = False`, no parameter, no input needing one): eager's result has
  `stop_gradient=False` (and `backward()` on it runs); the converted call returned True;
- `x.numpy()` inside converted code: its `.shape` is NumPy's tuple, `type()` is
  `np.ndarray` and `isinstance(a, np.ndarray)` True, `isinstance(a, rt.Tensor)` False (the
  converted code said list, Tensor, False, True: formatted logs and duck typing differed).
Eager vs static over several calls (the fast call path included)."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def scored(x):
    w = rt.ones([2])
    w.stop_gradient = False
    y = (x * w).sum()
    return y, y * 2.0, w.stop_gradient, y.stop_gradient


def test_results_through_a_made_leaf_need_a_gradient_as_eager():
    static = d2s.to_static(scored)
    for row in ([1.0, 2.0], [3.0, -1.0], [0.5, 0.5]):  # (the later calls: the fast path)
        x = rt.to_tensor(np.asarray(row, "float32"))
        want, got = scored(x), static(x)
        assert_same_leaves(got, want)
        assert got[0].stop_gradient is False
        got[1].backward()  # (runs, as eager's: the leaf is the function's own)
        want[1].backward()
        assert x.grad is None
    assert len(static.program_cache) == 1


def test_without_grad_the_results_need_none():
    static = d2s.to_static(scored)
    x = rt.to_tensor(np.asarray([1.0, 2.0], "float32"))
    with rt.no_grad():
        want, got = scored(x), static(x)
    assert got[0].stop_gradient is want[0].stop_gradient is True


def logged_shapes(x):
    arr = (x * 2.0).numpy()
    return (arr.shape, arr.shape[0], type(arr) is np.ndarray, isinstance(arr, np.ndarray),
            isinstance(arr, rt.Tensor), f"{arr.shape}")


def test_numpy_results_look_like_numpy_arrays():
    static = d2s.to_static(logged_shapes)
    for shape in ([2], [3, 2]):
        x = rt.to_tensor(np.ones(shape, "float32"))
        want = logged_shapes(x)
        assert static(x) == want
        assert want[0] == tuple(shape) and want[2:5] == (True, True, False)
