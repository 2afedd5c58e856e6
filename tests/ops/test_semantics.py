"""Op semantics that the generated tests do not pin down: Paddle's conventions where they
differ from NumPy, and accuracy of the ops computed by approximation."""
import math

import numpy as np
import pytest

import runtime as rt


def test_erf_matches_math_erf_everywhere():
    xs = np.concatenate([np.linspace(-10, 10, 2001), [0.0, 1e-8, -1e-300, 0.9999, 1.0, 1.0001]])
    got = rt.erf(rt.to_tensor(xs)).numpy()
    want = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)
    got32 = rt.erf(rt.to_tensor(xs.astype(np.float32))).numpy()
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-6, atol=1e-7)


def _erf_by_where(x):
    """The kernel's formula on every element, both branches, as CuPy runs it."""
    from runtime.ops.math import _ERF_T, _ERF_U, _ERFC_P, _ERFC_Q, _polyval
    work = x if x.dtype.itemsize >= 4 else x.astype(np.float32)
    a = np.abs(work)
    s = np.minimum(a, 1.0)
    z = s * s
    small = s * _polyval(_ERF_T, z) / _polyval(_ERF_U, z)
    b = np.clip(a, 1.0, 8.0)
    large = 1.0 - np.exp(-b * b) * _polyval(_ERFC_P, b) / _polyval(_ERFC_Q, b)
    return (np.sign(work) * np.where(a <= 1.0, small, large)).astype(x.dtype, copy=False)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_erf_on_the_cpu_is_the_where_formula_bit_for_bit(dtype):
    # the CPU kernel computes the |x| > 1 branch on those elements only
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1.0, -1.0, np.nextafter(1.0, 2.0), 8.0, 9.0, np.inf, -np.inf,
               np.nan, 1e-30, -7.99]
    for x in (rng.standard_normal((64, 33)) * 3, np.array(special),
              rng.standard_normal((8, 40))[:, ::3] * 2,  # not contiguous
              np.array(0.5), np.array(2.5), rng.uniform(-1, 1, 50)):  # 0-d; no |x| > 1
        x = x.astype(dtype)
        got = rt.erf(rt.to_tensor(x)).numpy()
        np.testing.assert_array_equal(got, _erf_by_where(x))
        assert got.shape == x.shape and got.dtype == x.dtype


def test_round_halves_away_from_zero():
    x = rt.to_tensor([0.5, 1.5, 2.5, -0.5, -2.5, 0.49])
    assert rt.round(x).tolist() == [1.0, 2.0, 3.0, -1.0, -3.0, 0.0]


def test_remainder_and_floor_divide_follow_python():
    a, b = [7, -7, 7, -7], [3, 3, -3, -3]
    x, y = rt.to_tensor(a), rt.to_tensor(b)
    assert (x % y).tolist() == [p % q for p, q in zip(a, b, strict=True)]
    assert (x // y).tolist() == [p // q for p, q in zip(a, b, strict=True)]
    assert (x // y).dtype == "int64"


def test_scalar_operands_never_widen_the_tensor():
    h = rt.to_tensor([1.0, 2.0], dtype="float16")
    for out in (h + 1, 1 + h, h * 2.5, h / 3, h ** 2, h - True):
        assert out.dtype == "float16"


def test_clip_gradient_only_strictly_inside():
    x = rt.to_tensor(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), stop_gradient=False)
    rt.clip(x, -1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]


def test_argmax_picks_the_first_of_ties():
    x = rt.to_tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    assert rt.argmax(x, axis=1).tolist() == [1, 0]
    assert rt.argmin(x).item() == 5
    assert rt.argmax(x, axis=1, dtype="int32").dtype == "int32"


def test_sum_of_bool_and_int32_is_int64():
    assert rt.sum(rt.to_tensor([True, True, False])).dtype == "int64"
    assert rt.sum(rt.to_tensor([1, 2], dtype="int32")).dtype == "int64"
    assert rt.sum(rt.to_tensor([1, 2], dtype="int8")).dtype == "int8"
    assert rt.mean(rt.to_tensor([1, 2])).dtype == "float32"


@pytest.mark.filterwarnings("ignore:divide by zero encountered in log")
def test_logsumexp_is_stable_and_handles_minus_inf():
    x = rt.to_tensor([1000.0, 1000.0])
    assert rt.logsumexp(x).item() == pytest.approx(1000.0 + math.log(2.0))
    assert rt.logsumexp(rt.to_tensor([-np.inf, -np.inf])).item() == -np.inf


def test_matmul_grad_for_vector_operands_and_transposes():
    rng = np.random.default_rng(0)
    av, bv = rng.standard_normal(4), rng.standard_normal((2, 3, 4))
    a = rt.to_tensor(av, stop_gradient=False)
    b = rt.to_tensor(bv, stop_gradient=False)
    out = rt.matmul(a, b, transpose_y=True)  # [4] @ [2, 4, 3] -> [2, 3]
    np.testing.assert_allclose(out.numpy(), av @ np.swapaxes(bv, -1, -2))
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), bv.sum(axis=(0, 1)))
    np.testing.assert_allclose(b.grad.numpy(), np.broadcast_to(av, (2, 3, 4)))


def test_errors_name_op_argument_and_shapes():
    with pytest.raises(ValueError, match=r"add: x has shape \[2, 3\] but y has shape \[4\]; "
                                         r"dims 3 and 4 \(axis -1\) cannot be broadcast"):
        rt.ones([2, 3]) + rt.ones([4])
    with pytest.raises(ValueError, match=r"sum: axis=3 is out of range for a tensor of rank 2"):
        rt.ones([2, 3]).sum(axis=3)
    with pytest.raises(TypeError, match=r"where: condition must be a bool tensor, got float32"):
        rt.where(rt.ones([2]), rt.ones([2]), rt.ones([2]))
