"""The eager Tensor: metadata, conversions, repr, operators and NumPy interop."""
import numpy as np
import pytest

import runtime as rt


def test_dtype_objects_equal_their_names():
    x = rt.to_tensor([1.0, 2.0])
    assert x.dtype == "float32" and x.dtype == rt.float32 and x.dtype == np.float32
    assert x.dtype != "float64"
    assert rt.to_tensor([1, 2]).dtype == "int64"
    assert rt.to_tensor([True]).dtype == "bool"
    assert rt.to_tensor(np.zeros(2, np.float64)).dtype == "float64"  # NumPy arrays keep theirs


def test_repr_shows_shape_dtype_place_and_values():
    x = rt.to_tensor([[1.0, 2.0], [3.0, 4.5]])
    assert repr(x) == ("Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), "
                       "stop_gradient=True,\n       [[1. , 2. ],\n        [3. , 4.5]])")
    assert repr(rt.to_tensor(3)) == ("Tensor(shape=[], dtype=int64, place=Place(cpu), "
                                     "stop_gradient=True,\n       3)")
    assert str(x) == repr(x)


@pytest.mark.parametrize("convert", [bool, int, float])
def test_one_element_tensors_convert_to_python_scalars(convert):
    for shape in ([], [1], [1, 1]):
        x = rt.full(shape, 3.0) if shape else rt.to_tensor(3.0)
        assert convert(x) == convert(3.0)
        assert type(convert(x)) is convert
    with pytest.raises(ValueError, match=rf"{convert.__name__}\(\) of a tensor with shape "
                                         r"\[2\] is ambiguous"):
        convert(rt.to_tensor([1.0, 2.0]))


def test_item_numpy_tolist():
    x = rt.to_tensor([[1.5, 2.0]])
    assert isinstance(x.numpy(), np.ndarray) and x.numpy().dtype == np.float32
    assert x.tolist() == [[1.5, 2.0]]
    assert rt.to_tensor([7]).item() == 7 and isinstance(rt.to_tensor([7]).item(), int)
    with pytest.raises(ValueError, match=r"item\(\): only one-element tensors .* shape \[1, 2\]"):
        x.item()


def test_array_protocol_and_dlpack():
    x = rt.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(x), [[1, 2], [3, 4]])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    y = np.from_dlpack(x)
    np.testing.assert_array_equal(y, x.numpy())
    assert y.shape == (2, 2)


def test_reductions_to_a_scalar_are_really_0d():
    x = rt.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    for r in (x.sum(), x.mean(), x.max(), x.min(), x.prod(), rt.norm(x), x.argmax(),
              x.all(), x.any(), rt.logsumexp(x), x.std(), x.var()):
        assert r.shape == [] and r.ndim == 0 and r.numpy().shape == ()
    assert x.sum(axis=1, keepdim=True).shape == [2, 1]
    assert x.sum().item() == 10.0


def test_len_iteration_and_errors_on_0d():
    x = rt.to_tensor([[1, 2], [3, 4], [5, 6]])
    assert len(x) == 3
    assert [row.tolist() for row in x] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError, match="len"):
        len(rt.to_tensor(1.0))


def test_operators_and_reflected_forms():
    a = np.array([[1.5, -2.0], [3.0, 0.5]], np.float32)
    b = np.array([2.0, -1.5], np.float32)
    x, y = rt.to_tensor(a), rt.to_tensor(b)
    cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
             (x // y, a // b), (x % y, np.remainder(a, b)), (abs(x) ** y, np.abs(a) ** b),
             (x @ x, a @ a), (-x, -a), (abs(x), np.abs(a)),
             (2 + x, 2 + a), (2 - x, 2 - a), (2 * x, 2 * a), (2 / x, 2 / a), (7 // x, 7 // a),
             (7 % x, np.remainder(7, a)), (2 ** x, 2 ** a), (a @ x, a @ a)]
    for got, want in cases:
        assert isinstance(got, rt.Tensor)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_type_promotion_follows_paddle():
    i = rt.to_tensor([1, 2])
    f16 = rt.to_tensor([1.0], dtype="float16")
    assert (i + 1).dtype == "int64"
    assert (i + 1.5).dtype == "float32"  # int tensor and Python float: the default float
    assert (i / 2).dtype == "float32"
    assert (f16 * 2.0).dtype == "float16"  # a Python scalar never widens a tensor
    assert (f16 + rt.to_tensor([1.0])).dtype == "float32"
    assert (rt.to_tensor([1], dtype="int32") + i).dtype == "int64"
    assert (i ** 2).dtype == "int64" and (i ** 0.5).dtype == "float32"
    assert rt.exp(i).dtype == "float32"


def test_comparisons_are_elementwise_and_hash_is_identity():
    x = rt.to_tensor([1, 2, 3])
    for got, want in [(x == 2, [False, True, False]), (x != 2, [True, False, True]),
                      (x < 2, [True, False, False]), (x <= 2, [True, True, False]),
                      (x > 2, [False, False, True]), (x >= 2, [False, True, True]),
                      (2 < x, [False, False, True]), (x == rt.to_tensor([1, 0, 3]),
                                                      [True, False, True])]:
        assert got.dtype == "bool" and got.tolist() == want
    assert (x == None) is False  # not comparable: the identity fallback
    assert len({x, x, rt.to_tensor([1, 2, 3])}) == 2
    assert {x: 1}[x] == 1


def test_bitwise_operators():
    p, q = rt.to_tensor([True, True, False]), rt.to_tensor([True, False, False])
    assert (p & q).tolist() == [True, False, False]
    assert (p | q).tolist() == [True, True, False]
    assert (p ^ q).tolist() == [False, True, False]
    assert (~p).tolist() == [False, False, True]
    a = rt.to_tensor([12, 10])
    assert (a & 6).tolist() == [4, 2] and (a | 1).tolist() == [13, 11]
    assert (a ^ 6).tolist() == [10, 12] and (~a).tolist() == [-13, -11]
    assert (6 & a).tolist() == [4, 2]
    with pytest.raises(TypeError, match="bitwise_and: expected integer or bool inputs, got "
                                        "float32"):
        rt.to_tensor([1.0]) & rt.to_tensor([1.0])


def test_astype_and_cast():
    x = rt.to_tensor([1.7, -1.7, 0.0])
    assert x.astype("int32").tolist() == [1, -1, 0] and x.astype("int32").dtype == "int32"
    assert rt.cast(x, rt.bool).tolist() == [True, True, False]
    assert x.astype(np.float64).dtype == "float64"
    assert x.astype("float32") is x  # no-op cast
    with pytest.raises(ValueError, match="unknown dtype"):
        x.astype("float128")


def test_methods_mirror_functions():
    x = rt.to_tensor([[1.0, -2.0], [3.0, 4.0]])
    assert x.sum(1).tolist() == [-1.0, 7.0]
    assert x.mean(axis=0).tolist() == [2.0, 1.0]
    assert x.max(1).tolist() == [1.0, 4.0] and x.min().item() == -2.0
    assert x.argmax(axis=1).tolist() == [0, 1]
    assert x.matmul(x).tolist() == [[-5.0, -10.0], [15.0, 10.0]]
    assert x.abs().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert x.clip(0.0, 3.0).tolist() == [[1.0, 0.0], [3.0, 3.0]]
    assert x.cumsum(axis=0).tolist() == [[1.0, -2.0], [4.0, 2.0]]
