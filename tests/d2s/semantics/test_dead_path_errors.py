"""Python's own IndexError / KeyError on a path that a tensor decides (a list popped empty, a
missing key) is raised when, and only when, the program takes that path, as eager code raises
it. Before, tracing that path raised it on every call, even for inputs eager ran fine."""
import numpy as np
import pytest

import d2s
import runtime as rt


def early_exit(x):
    pending = [x * 2.0]
    total = x * 0.0
    for _ in range(2):
        total = total + pending.pop()   # the second pop only runs if the loop goes on
        if x.mean() > 0:
            return total
    return total


def missing_key(x, cfg):
    if x.sum() > 0:
        return x * cfg["scale"]          # absent: eager raises only for positive inputs
    return -x


def drain(x, n):
    stack = []
    i = 0
    while i < n:                         # any iteration pops an empty list
        x = x + stack.pop()
        i += 1
    return x


def test_a_pop_on_a_path_taken_only_by_some_inputs():
    static = d2s.to_static(early_exit)
    pos, neg = np.array([1.0, 2.0], "float32"), np.array([-1.0, -2.0], "float32")
    for fn in (early_exit, static):
        np.testing.assert_allclose(fn(rt.to_tensor(pos)).numpy(), pos * 2.0)
        with pytest.raises(IndexError, match="pop from empty list"):
            fn(rt.to_tensor(neg))
    np.testing.assert_allclose(static(rt.to_tensor(pos)).numpy(), pos * 2.0)
    assert len(static.program_cache) == 1


def test_a_missing_key_in_a_branch_not_taken():
    static = d2s.to_static(missing_key)
    cfg = {"shift": 1.0}
    for fn in (missing_key, static):
        np.testing.assert_allclose(fn(rt.to_tensor(np.array([-1.0], "float32")), cfg).numpy(),
                                   [1.0])
        with pytest.raises(KeyError):
            fn(rt.to_tensor(np.array([1.0], "float32")), cfg)


def test_a_graph_loop_whose_body_always_pops_an_empty_list():
    static = d2s.to_static(drain)
    x = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    for fn in (drain, static):
        np.testing.assert_allclose(fn(x, rt.to_tensor(np.array(0))).numpy(), [1.0, 2.0])
        with pytest.raises(IndexError, match="pop from empty list"):
            fn(x, rt.to_tensor(np.array(3)))
