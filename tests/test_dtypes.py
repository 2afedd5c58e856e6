"""dtype objects: equality with their spellings, conversion, promotion tables."""
import ml_dtypes
import numpy as np
import pytest

import runtime as rt
from runtime import dtypes


@pytest.mark.parametrize("d", dtypes.ALL, ids=lambda d: d.name)
def test_every_dtype_equals_its_names_and_numpy_type(d):
    assert d == d.name and d == d.short and d == d.np and rt.dtypes.convert_dtype(d.name) is d
    assert hash(d) == hash(d.name)
    x = rt.zeros([2], dtype=d.name) if d.name != "bool" else rt.to_tensor([False, False])
    assert x.dtype == d and x.numpy().dtype == d.np


def test_names_exposed_like_paddle():
    for name in ("float16", "bfloat16", "float32", "float64", "int8", "int32", "int64",
                 "uint8", "bool"):
        assert getattr(rt, name) == name
    assert rt.bfloat16.np == np.dtype(ml_dtypes.bfloat16)
    assert rt.float32 != rt.float64 and rt.float32 != "float64" and rt.float32 != 3


def test_convert_dtype_errors_name_the_choices():
    with pytest.raises(ValueError, match=r"unknown dtype 'float8'; expected one of \['float16'"):
        dtypes.convert_dtype("float8")
    with pytest.raises(TypeError, match="unsupported dtype"):
        dtypes.convert_dtype(np.clongdouble)


@pytest.mark.parametrize("a,b,want", [
    ("float16", "bfloat16", "float32"), ("uint8", "int8", "int16"), ("int32", "int64", "int64"),
    ("bool", "int8", "int8"), ("int64", "float16", "float16"), ("float32", "float64", "float64"),
    ("bool", "bool", "bool")])
def test_tensor_tensor_promotion(a, b, want):
    assert dtypes.promote(dtypes.convert_dtype(a), dtypes.convert_dtype(b)) == want
    assert dtypes.promote(dtypes.convert_dtype(b), dtypes.convert_dtype(a)) == want
    x = rt.cast(rt.ones([2]), a)
    y = rt.cast(rt.ones([2]), b)
    assert (x + y).dtype == want


@pytest.mark.parametrize("t,value,want", [
    ("float16", 2.0, "float16"), ("int32", 2, "int32"), ("int32", 2.5, "float32"),
    ("bool", 1, "int64"), ("bool", True, "bool"), ("uint8", 3, "uint8")])
def test_tensor_scalar_promotion(t, value, want):
    assert dtypes.promote_scalar(dtypes.convert_dtype(t), value) == want
    x = rt.cast(rt.ones([2]), t)
    assert (x * value).dtype == want


def test_low_precision_arithmetic_keeps_its_dtype():
    for name in ("float16", "bfloat16"):
        x = rt.cast(rt.to_tensor([1.5, 2.25]), name)
        y = rt.tanh(x * x + 1.0)
        assert y.dtype == name
        np.testing.assert_allclose(y.numpy().astype(np.float32), np.tanh([3.25, 6.0625]),
                                   rtol=1e-2)
