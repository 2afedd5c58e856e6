"""What runs eagerly traces however deep it recurses: a converted call goes through a few
operator frames for each of the user's, and the trace allows for them (d2s/tracing.py)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.process.test_deep_code import _module


@pytest.fixture(scope="module")
def user_code(tmp_path_factory):
    lines = ["import runtime as rt", "", "def chain(x):", "    s = x.sum()"]
    for k in range(250):
        lines += [f"    {'if' if k == 0 else 'elif'} s > {250 - k}:", f"        x = x + {k}"]
    lines += ["    else:", "        x = x - 1", "    return x", "",
              "def count_down(x, n):", "    if n == 0:", "        return x",
              "    return count_down(x + 1, n - 1)"]
    return _module(tmp_path_factory.mktemp("recursion"), "deep_recursion_user", lines)


@pytest.mark.slow
def test_an_elif_chain_of_250_tensor_conditions_traces_and_takes_each_branch(user_code):
    f = d2s.to_static(user_code.chain)
    for v in (300.0, 100.0, 0.5, -3.0):  # s = 2v: first, middle, last branch, else
        x = np.full([2], v, "float32")
        np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(),
                                   user_code.chain(rt.to_tensor(x)).numpy())
    assert len(f.program_cache) == 1


def test_recursion_as_deep_as_eager_allows(user_code):
    depth = sys.getrecursionlimit() * 3 // 4  # eagerly fine, ~3 operator frames per level
    assert user_code.count_down(rt.ones([2]), depth).numpy().tolist() == [depth + 1.0] * 2
    f = d2s.to_static(user_code.count_down)
    assert f(rt.ones([2]), depth).numpy().tolist() == [depth + 1.0] * 2
    assert sys.getrecursionlimit() == _LIMIT  # restored after the trace


def test_a_runaway_recursion_still_raises_recursion_error():
    @d2s.to_static
    def forever(x):
        return forever(x + 1)

    with pytest.raises(RecursionError):
        forever(rt.ones([2]))
    assert sys.getrecursionlimit() == _LIMIT


_LIMIT = sys.getrecursionlimit()

