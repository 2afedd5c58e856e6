"""`zip` in converted code: over tensors whose first dim is unknown (an `InputSpec` with
None) or tensor arrays it is one graph loop over the shortest part, as Python's `zip`, also
under `enumerate`; over Python values it is Python's `zip`."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import InputSpec

from finite_differences import numeric_grad

SPEC = [InputSpec([None], "float32"), InputSpec([None], "float32")]


def weighted_pairs(x, w):
    total = x.sum() * 0.0
    for i, (a, b) in enumerate(zip(x, w * 2.0)):
        if a > b:
            total = total + a * b * i
        else:
            total = total - a
    return total


def ref_weighted_pairs(x, w):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, w * 2.0)):
        total = total + a * b * i if a > b else total - a
    return total


def zip_with_python_list(x):
    scales = [1.0, 0.5, 0.25]          # fixed Python numbers, x of any length
    out = []
    for v, s in zip(x, scales):
        out.append(v * s)
    return rt.stack(out).sum(), len(out)


def zip_with_grown_list(x, n):
    acc = []
    i = 0
    while i < n:
        acc.append(x * (i + 1))
        i += 1
    s = x * 0.0
    for a, b in zip(acc, acc[1:] if False else acc):
        s = s + a * b
    return s


def test_zip_of_tensors_of_unknown_length_one_program():
    static = d2s.to_static(weighted_pairs, input_spec=SPEC)
    rs = np.random.RandomState(0)
    for n, m in [(3, 3), (5, 2), (1, 4), (6, 6)]:  # the shortest part sets the length
        x, w = rs.randn(n).astype("float32"), rs.randn(m).astype("float32") * 0.3
        want = ref_weighted_pairs(x, w)
        for fn in (weighted_pairs, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(w))
            np.testing.assert_allclose(got.numpy(), np.float32(want), rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def test_zip_gradient_matches_finite_differences():
    static = d2s.to_static(weighted_pairs, input_spec=SPEC)
    x0 = np.array([0.9, -0.4, 1.3, 0.2], "float32")
    w = rt.to_tensor(np.array([0.1, 0.5, -0.2], "float32"))
    x = rt.to_tensor(x0)
    x.stop_gradient = False
    static(x, w).backward()
    w0 = w.numpy().astype("float64")
    num = numeric_grad(lambda v: float(ref_weighted_pairs(v, w0)), x0.astype("float64"))
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-2, atol=1e-3)


def test_zip_of_a_tensor_with_a_python_list_of_numbers():
    static = d2s.to_static(zip_with_python_list, input_spec=[InputSpec([None], "float32")])
    for n in (1, 2, 5):
        x = np.arange(1, n + 1, dtype="float32")
        k = min(n, 3)
        want = (x[:k] * np.array([1.0, 0.5, 0.25][:k], "float32")).sum()
        for fn in (zip_with_python_list, static):
            total, count = fn(rt.to_tensor(x))
            np.testing.assert_allclose(total.numpy(), want, rtol=1e-6)
            assert int(count) == k


def test_zip_of_tensor_arrays_grown_in_a_graph_loop():
    static = d2s.to_static(zip_with_grown_list)
    x = np.array([1.0, -2.0], "float32")
    for n in (0, 1, 3):
        want = sum(((x * (i + 1)) ** 2 for i in range(n)), np.zeros(2, "float32"))
        for fn in (zip_with_grown_list, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(np.array(n)))
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_zip_of_python_values_is_pythons_zip():
    @d2s.to_static
    def pairs(x):
        out = x * 0.0
        for a, b in zip([1.0, 2.0], {"p": 3.0, "q": 4.0}.values()):
            out = out + a * b
        return out
    np.testing.assert_allclose(pairs(rt.to_tensor(np.ones(2, "float32"))).numpy(), [11.0, 11.0])


def test_strict_zip_over_an_unknown_length_is_a_clear_error():
    def strict(x, w):
        s = x.sum()
        for a, b in zip(x, w, strict=True):
            s = s + a * b
        return s
    with pytest.raises(TypeError, match="strict=True"):
        d2s.to_static(strict, input_spec=SPEC)(rt.to_tensor(np.ones(2, "float32")),
                                               rt.to_tensor(np.ones(2, "float32")))


def test_zip_with_a_list_that_cannot_be_indexed_names_the_argument():
    def mixed(x):
        s = x.sum()
        for a, name in zip(x, ["a", "b"]):
            s = s + a
        return s
    with pytest.raises(TypeError, match="argument 2"):
        d2s.to_static(mixed, input_spec=[InputSpec([None], "float32")])(
            rt.to_tensor(np.ones(2, "float32")))
