"""Item 5: sizes and shape arithmetic over unknown (`InputSpec` None) dims are run-time values
of the program, never constants built from -1: one program gives eager's values for every
batch size."""
from __future__ import annotations

import math

import numpy as np
import pytest

import d2s
import runtime as rt


def mean_by_size(x):
    return x.sum() / x.size


def product_of_dims(x):
    rows = x.shape[0] * x.shape[1]
    return x.reshape([rows]) * 1.0, rows + 0


def prod_of_shape(x):
    return rt.ones([math.prod(x.shape)]) * 2


def zeros_of_batch(x):
    b = x.shape[0]
    return rt.zeros([b, 3]) + x.sum(), b * 3 - 1


def half_size(x):
    n = x.size // 2
    return x.reshape([-1])[:n]


def size_in_python_branch(x):
    flat = x.reshape([x.size])
    return flat * x.numel(), len(x) * x.shape[1]


CASES = [mean_by_size, product_of_dims, prod_of_shape, zeros_of_batch, half_size,
         size_in_python_branch]


def _values(out):
    out = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in out]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_one_program_every_batch_size(fn):
    static = d2s.to_static(fn, input_spec=[d2s.InputSpec([None, 4], "float32")])
    for batch in (1, 3, 6):
        x = rt.to_tensor(np.arange(batch * 4, dtype="float32").reshape(batch, 4))
        want, got = _values(fn(x)), _values(static(x))
        assert len(want) == len(got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    assert len(static.program_cache) == 1


def test_size_of_known_shape_stays_python():
    @d2s.to_static
    def f(x):
        return x.size
    assert f(rt.ones([2, 3])) == 6
