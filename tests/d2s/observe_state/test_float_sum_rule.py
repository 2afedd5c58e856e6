"""`sum()` of a list of Python floats that a graph loop grows follows the running interpreter's
rule (issue 33): one by one from `start` up to Python 3.11, Neumaier's compensated summation
from 3.12 (`d2s.operators.float_sum`). The plain-Python statement of each rule is held against
the built-in `sum` of this interpreter, and the program's kernel, under either rule, against
that statement, bit for bit (also for inf, nan, overflow and -0.0); on Python 3.12 and later
the converted function is also eager's to the last bit."""
import random
import sys

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.operators import float_sum

# (NumPy warns where inf - inf makes the compensation nan; Python's floats do not)
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")

TRICKY = [[1e16, 1.0, -1e16], [0.1] * 10, [1e308, 1e308, -1e308], [-0.0, -0.0],
          [float("inf"), 1.0, -2.5], [float("nan"), 1.0], [1e-16, 1.0, -1.0, 1e-16],
          [0.5, float("-inf"), float("inf")], [], [2.5]]
STARTS = [0, 0.0, -0.0, 7, 0.7, 2**60]


def _random_lists(count: int) -> list:
    rng = random.Random(33)
    return [[rng.choice([1.0, -1.0]) * rng.random() * 10.0 ** rng.randint(-20, 20)
             for _ in range(rng.randint(1, 30))] for _ in range(count)]


def _bits(v) -> str:
    return repr(float(v)) if isinstance(v, float) else repr(v)


@pytest.mark.parametrize("start", STARTS, ids=repr)
def test_the_statement_is_this_interpreters_sum(start):
    for items in TRICKY + _random_lists(200):
        assert _bits(float_sum.python_float_sum(items, start)) == _bits(sum(items, start)), (
            items, start)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the compensated rule is 3.12's")
def test_from_python_3_12_the_rule_is_compensated():
    assert float_sum.COMPENSATED
    assert sum([1e16, 1.0, -1e16]) == 1.0 == float_sum.python_float_sum([1e16, 1.0, -1e16], 0)


def grown_then_summed(x, n, start):
    items = []
    i = rt.zeros([], "int64")
    while i < n:
        items.append(float(x[i]))
        i += 1
    return sum(items, start), len(items)


def _cases():
    for items in TRICKY + _random_lists(12):
        if items:
            yield items


@pytest.mark.parametrize("compensated", [False, True], ids=["one_by_one", "compensated"])
@pytest.mark.parametrize("start", [0, 0.0, 0.7], ids=repr)
def test_the_kernel_is_the_statement(monkeypatch, compensated, start):
    monkeypatch.setattr(float_sum, "COMPENSATED", compensated)
    static = d2s.to_static(grown_then_summed)
    for items in _cases():
        x = rt.to_tensor(np.array(items + [0.0] * (40 - len(items)), "float64"))
        for n in (len(items), 1):  # (two trip counts through one program)
            want = float_sum.python_float_sum(items[:n], start, compensated)
            got, length = static(x, rt.to_tensor(n), start)
            assert length == n and type(got) is float, (items, n, got)
            assert _bits(got) == _bits(want), (items[:n], start, got, want)
            if compensated == (sys.version_info >= (3, 12)):  # this interpreter's rule
                assert _bits(grown_then_summed(x, rt.to_tensor(n), start)[0]) == _bits(got)
    assert static._cache.traces == 1
