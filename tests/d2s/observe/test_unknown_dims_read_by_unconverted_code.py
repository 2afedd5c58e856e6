"""A dim unknown until the program runs (an `InputSpec` with None, a saved model of any batch
size) read as `.shape` by Python code d2s does not convert (a property's getter, a dunder
method, `operator.attrgetter`) while it traces: the run's dim, as converted code reads it, not
-1 (which divided by -1 silently). Eager vs static vs NumPy over batch sizes through one
program, and the saved model."""
from __future__ import annotations

import dataclasses
import operator

import numpy as np
import pytest

import d2s
import runtime as rt


@dataclasses.dataclass
class Batch:
    images: object

    @property
    def size(self):
        return self.images.shape[0]


class Mean(rt.nn.Layer):
    def forward(self, x):
        batch = Batch(x)
        rows = operator.attrgetter("shape")(x)[0]
        return x.sum(axis=0) / batch.size + x[0] / rows


def _numpy(a):
    n = a.shape[0]
    return a.sum(axis=0) / n + a[0] / n


BATCHES = [np.arange(2 * n, dtype="float32").reshape(n, 2) + 1.0 for n in (1, 3, 5)]


def test_unconverted_reads_of_an_unknown_batch_dim_follow_the_run():
    net = Mean()
    static = d2s.to_static(net, input_spec=[d2s.InputSpec([None, 2], "float32")])
    for a in BATCHES:
        want = _numpy(a)
        np.testing.assert_allclose(net(rt.to_tensor(a)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(a)).numpy(), want, rtol=1e-6)
    assert len(static.forward.program_cache) == 1


def test_the_saved_model_of_any_batch_size_reads_the_run_dims(tmp_path):
    net = Mean()
    static = d2s.to_static(net)
    static(rt.to_tensor(BATCHES[1]))
    d2s.save(static, str(tmp_path / "m"))
    model = d2s.load(str(tmp_path / "m"))
    for a in BATCHES:
        np.testing.assert_allclose(model(rt.to_tensor(a)).numpy(), _numpy(a), rtol=1e-6)


def test_a_python_decision_on_the_unknown_dim_in_unconverted_code_follows_the_run():
    class Odd:
        def __init__(self, t):
            self.t = t

        @property
        def odd(self):
            return self.t.shape[0] % 2 == 1

    def f(x):
        return x * 2.0 if Odd(x).odd else x - 1.0

    static = d2s.to_static(f, input_spec=[d2s.InputSpec([None, 2], "float32")])
    for n in (1, 2, 3, 4):  # (was -1 % 2 == 1: the odd branch for every batch, silently)
        a = np.ones([n, 2], "float32")
        want = a * 2.0 if n % 2 else a - 1.0
        np.testing.assert_array_equal(f(rt.to_tensor(a)).numpy(), want)
        np.testing.assert_array_equal(static(rt.to_tensor(a)).numpy(), want)
    assert len(static.program_cache) == 1


def test_the_static_api_keeps_minus_one_for_unknown_dims():
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [None, 4], "float32")
        assert list(x.shape) == [-1, 4]
