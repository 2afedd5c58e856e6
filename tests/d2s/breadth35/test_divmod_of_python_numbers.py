"""`divmod()` of Python numbers the program computes (`row, col = divmod(int(idx), w)`, the
idiom that turns a flat argmax into a position) converts with Python's floored semantics;
of a tensor it raises eager's TypeError."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def peak_position(heat):
    h, w = heat.shape
    row, col = divmod(int(heat.flatten().argmax()), w)
    q, r = divmod(float(heat.min()) * 10, 3)
    return row, col, heat[row, col], q, r


def test_divmod_of_numbers_the_program_computes():
    converted = d2s.to_static(peak_position)
    for seed in (0, 1, 2):
        heat = np.random.default_rng(seed).standard_normal((3, 4)).astype("float32")
        eager = peak_position(rt.to_tensor(heat))
        static = converted(rt.to_tensor(heat))
        row, col = divmod(int(heat.argmax()), 4)
        q, r = divmod(float(heat.min()) * 10, 3)
        assert static[:2] == eager[:2] == (row, col)
        assert all(type(v) is int for v in static[:2])
        np.testing.assert_allclose(static[2].numpy(), heat[row, col])
        for got, want, ref in zip(static[3:], eager[3:], (q, r), strict=True):
            assert type(got) is type(want) is float
            np.testing.assert_allclose(got, ref, rtol=1e-6)
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(converted.program_cache) == 1


def test_divmod_of_a_tensor_raises_as_eager():
    def fn(x):
        return divmod(x, 2)

    x = rt.to_tensor(np.array([7, -7]))
    with pytest.raises(TypeError, match="divmod") as eager:
        fn(x)
    with pytest.raises(TypeError, match="divmod") as static:
        d2s.to_static(fn)(x)
    assert str(eager.value) in str(static.value)
