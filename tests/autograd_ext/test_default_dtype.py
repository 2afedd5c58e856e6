"""rt.set_default_dtype / rt.get_default_dtype: creation ops, Python floats and new Layers'
parameters follow it, per thread, eagerly and in converted code."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import d2s
import runtime as rt


@pytest.fixture(autouse=True)
def _restore_default():
    yield
    rt.set_default_dtype("float32")


CREATIONS = {
    "zeros": lambda: rt.zeros([2, 3]),
    "ones": lambda: rt.ones([2]),
    "full": lambda: rt.full([2], 1.5),
    "arange": lambda: rt.arange(0.0, 1.0, 0.25),
    "linspace": lambda: rt.linspace(0, 1, 5),
    "eye": lambda: rt.eye(3),
    "rand": lambda: rt.rand([2]),
    "randn": lambda: rt.randn([2]),
    "uniform": lambda: rt.uniform([2]),
    "normal": lambda: rt.normal(shape=[2]),
    "to_tensor": lambda: rt.to_tensor([1.5, 2.0]),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_creation_ops_and_layer_parameters_follow_the_default(dtype):
    rt.set_default_dtype(dtype)
    assert rt.get_default_dtype() == dtype
    for name, make in CREATIONS.items():
        assert make().dtype == dtype, name
    fc = rt.nn.Linear(3, 2)
    assert fc.weight.dtype == dtype and fc.bias.dtype == dtype
    assert rt.arange(0, 4).dtype == "int64"  # integer ranges stay integer
    assert rt.full([2], True).dtype == "bool"


def test_explicit_dtype_wins_and_values_are_those_of_numpy():
    rt.set_default_dtype("float64")
    np.testing.assert_array_equal(rt.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    assert rt.to_tensor(0.1).item() == 0.1  # no float32 rounding on the way
    assert rt.zeros([2], dtype="float32").dtype == "float32"
    assert rt.nn.Linear(2, 2).weight.dtype == "float64"


def test_set_default_dtype_refuses_non_floating_types():
    with pytest.raises(TypeError, match=r"set_default_dtype: the default dtype must be one of"):
        rt.set_default_dtype("int32")
    assert rt.get_default_dtype() == "float32"


def test_the_default_is_per_thread():
    rt.set_default_dtype("float64")
    seen = {}

    def worker():
        seen["default"] = rt.get_default_dtype()
        seen["zeros"] = rt.zeros([1]).dtype.name

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"default": "float32", "zeros": "float32"}
    assert rt.zeros([1]).dtype == "float64"


@d2s.to_static
def _scaled(x):
    return x + rt.ones([3]) * 0.1


def test_converted_code_follows_the_default_and_traces_again_after_a_change():
    x = rt.to_tensor(np.array([1.0, 2.0, 3.0]), dtype="float16")
    ref = np.array([1.0, 2.0, 3.0])
    got32 = _scaled(x)
    assert got32.dtype == "float32"  # float16 + float32 promotes to float32
    np.testing.assert_allclose(got32.numpy(), ref + np.float32(0.1), rtol=1e-6)
    rt.set_default_dtype("float64")
    got64 = _scaled(x)
    assert got64.dtype == "float64"
    np.testing.assert_allclose(got64.numpy(), ref + 0.1, rtol=1e-12)
    rt.set_default_dtype("float32")
    assert _scaled(x).dtype == "float32"
