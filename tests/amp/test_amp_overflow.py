"""Values past float16's range (65,504) stay finite under auto_cast, as in Paddle: the ops
Paddle keeps in float32 (cumsum, pow, prod, square, ...) get float32 inputs even
when their input is a float16 activation, and ops whose inputs are all float32 stay float32
(promotion, under O1 and under O2's default use_promote=True). Eager and converted."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

LEVELS = [dict(level="O1"), dict(level="O2"), dict(level="O1", dtype="bfloat16")]


def _near_30(n=4096):
    return (30.0 + np.random.default_rng(0).random(n, ) - 0.5).astype(np.float32)


def _through_linear(v):
    """v as the low-precision output of a white op (einsum by ones), as a model makes it."""
    ones = rt.to_tensor(np.ones(v.shape[-1], dtype=np.float32))
    return rt.einsum("ij,j->ij", v, ones)


def cumsum_of_activation(v):
    return rt.cumsum(_through_linear(v), axis=-1)


def cube_of_activation(v):
    return rt.pow(_through_linear(v), 3.0)


def product_of_activation(v):
    return rt.prod(_through_linear(v), axis=-1)


def product_of_float32(a, b):
    return a * b


CASES = {
    "cumsum": (cumsum_of_activation, lambda: (_near_30().reshape(1, -1),),
               lambda v: np.cumsum(v.astype(np.float64), -1)),
    "pow": (cube_of_activation, lambda: (np.full((2, 4), 60.0, np.float32),),
            lambda v: (v.astype(np.float64)) ** 3),
    "prod": (product_of_activation, lambda: (np.full((2, 4), 50.0, np.float32),),
             lambda v: np.prod(v.astype(np.float64), -1)),
    "square": (lambda v: rt.square(_through_linear(v)),
               lambda: (np.full((2, 4), 300.0, np.float32),), lambda v: v.astype(np.float64) ** 2),
    "multiply float32": (product_of_float32,
                         lambda: (np.full((3,), 3e4, np.float32), np.full((3,), 7e3, np.float32)),
                         lambda a, b: a.astype(np.float64) * b),
}


def test_cumsum_of_4096_values_near_30():
    v = _near_30().reshape(1, -1)
    want = np.cumsum(v.astype(np.float64), -1)
    assert want.max() > 65504  # past float16's range from about the 2,200th value
    for state in LEVELS:
        with rt.amp.auto_cast(**state):
            x16 = rt.to_tensor(v).astype(state.get("dtype", "float16"))
            got = rt.cumsum(x16, axis=-1)
            got32 = d2s.to_static(lambda t: rt.cumsum(t, axis=-1))(rt.to_tensor(v))
        assert got.dtype == "float32" and got32.dtype == "float32"
        assert np.isfinite(got.numpy()).all() and np.isfinite(got32.numpy()).all()
        np.testing.assert_allclose(got32.numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-2)  # inputs rounded to 16 bits


@pytest.mark.parametrize("state", LEVELS, ids=["O1", "O2", "O1-bf16"])
@pytest.mark.parametrize("name", list(CASES))
def test_overflowing_values_stay_finite(name, state):
    fn, inputs, ref = CASES[name]
    arrays = inputs()
    want = ref(*arrays)
    args = [rt.to_tensor(a) for a in arrays]
    assert np.abs(want).max() > 65504
    with rt.amp.auto_cast(**state):
        eager = fn(*args)
        static = d2s.to_static(fn)(*args)
    for got in (eager, static):
        assert got.dtype == "float32", f"{name}: {got.dtype.name}"
        assert np.isfinite(got.numpy()).all(), name
        np.testing.assert_allclose(got.numpy(), want, rtol=3e-2)


def test_o1_without_the_paddle_black_list_would_overflow():
    """The same cube, with pow moved to the white list, overflows: the test above is real."""
    with rt.amp.auto_cast(custom_white_list=["pow"]), np.errstate(over="ignore"):
        got = cube_of_activation(rt.to_tensor(np.full((2, 4), 60.0, np.float32)))
    assert got.dtype == "float16" and np.isinf(got.numpy()).all()
