"""A name that one branch of a tensor `if` rebinds to a value of another rank, dtype or kind,
and that no code after the `if` reads (a temporary of the branch, a value stacked for the
branch's own result, the rest of a function after an early return), converts: eager code
never observes it after the `if`, so the program does not make it a `cond` output. Names
that are read after the `if` are still merged (or refused, with the message naming them)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def early_return_before_stacking(flag, x):
    """AutoGraph's `return_dependent_on_local`: `t` is rank 0 on the early-return path and
    rank 1 on the other, read only by that path's result."""
    t = x.sum()
    if flag:
        return t * 2
    t = rt.stack([t, t * 3])
    return rt.sum(t)


def temporaries_of_each_branch(x):
    scale = 2
    tmp = x
    if x.mean() > 0:
        tmp = rt.stack([x, x], axis=0)   # rank 2 on this path
        y = tmp.sum(axis=0) * scale
    else:
        tmp = rt.cast(x > 0, "int64")     # int64 on this path
        scale = None                      # None on this path
        y = x - rt.cast(tmp, "float32")
    return y


class _Helper:
    def __init__(self):
        self.calls = 0

    def pick(self, x):
        best = x.max()
        if best > 1.0:
            best = [x.argmax(), x.argmin()]   # a list instead of a tensor
            out = x / x.max()
        else:
            out = x
        self.calls += 1
        return out


def _ref_temporaries(x):
    return x * 4 if x.mean() > 0 else x - (x > 0)


@pytest.mark.parametrize("fn", [temporaries_of_each_branch])
def test_branch_temporaries_of_other_ranks_dtypes_and_kinds(fn):
    converted = d2s.to_static(fn)
    for data in ([1.0, 2.0, 3.0], [-1.0, 2.0, -3.0]):
        x = np.asarray(data, np.float32)
        eager, static = fn(rt.to_tensor(x)), converted(rt.to_tensor(x))
        assert static.dtype == eager.dtype and static.shape == eager.shape
        np.testing.assert_allclose(static.numpy(), eager.numpy())
        np.testing.assert_allclose(static.numpy(), _ref_temporaries(x))
    assert len(converted.program_cache) == 1


def test_local_rebound_after_an_early_return():
    converted = d2s.to_static(early_return_before_stacking)
    x = np.asarray([1.0, 2.0], np.float32)
    for flag, want in ((True, 6.0), (False, 12.0)):
        args = (rt.to_tensor(flag), rt.to_tensor(x))
        eager, static = early_return_before_stacking(*args), converted(*args)
        assert static.shape == eager.shape == []
        assert static.dtype == eager.dtype
        assert float(static) == float(eager) == want
    assert len(converted.program_cache) == 1


def test_method_temporaries_and_state_written_after():
    h_eager, h_static = _Helper(), _Helper()
    converted = d2s.to_static(h_static.pick)
    for data in ([0.5, 2.0], [0.5, 0.25]):
        x = np.asarray(data, np.float32)
        eager, static = h_eager.pick(rt.to_tensor(x)), converted(rt.to_tensor(x))
        np.testing.assert_allclose(static.numpy(), eager.numpy())
        np.testing.assert_allclose(static.numpy(), x / x.max() if x.max() > 1 else x)
    assert h_static.calls == h_eager.calls == 2


def test_a_name_read_after_the_if_is_still_refused_with_its_name():
    def fn(x):
        t = x.sum()
        if x.mean() > 0:
            t = rt.stack([t, t])
        return t * 2

    with pytest.raises(d2s.ConversionError, match="'t' is a tensor of rank 0 in the if branch"
                       "|'t' is a tensor of rank 1 in the if branch"):
        d2s.to_static(fn)(rt.to_tensor(np.ones(2, np.float32)))


def _collect(x, y):
    h = x * 1.0
    pairs = [(x * 1.0, {"y": y * 1.0})]  # (kept by the trace, read by nothing after)
    if x[2] > 0.0:
        if rt.mean(x) > 0.0:
            pairs.append((y * 0.5, {"y": y * 0.25}))
        else:
            if y[0] > x[1]:
                return h, 0
        if rt.max(y) < 1.5:
            pairs.append((y * 0.5, {"y": y * 0.25}))
        else:
            h = h + 1.0
    return h, 1


def test_a_list_an_outer_tensor_if_made_an_array_is_given_back_by_inner_ones():
    """(fuzz campaign 42002, state generator) an inner tensor `if` found the list unread after
    it and dropped it, while the outer `if`, where it was a list, kept it: 'bound in only one
    branch'."""
    static = d2s.to_static(_collect)
    for a, b, took in (([2.75, 0.25, 1.25], [1.25, -2.75, -2.75], 1),
                       ([-2.75, 0.25, 1.25], [1.25, -2.75, -2.75], 0),
                       ([-1.25, -2.25, -0.25], [-0.25, 0.25, -2.75], 1),
                       ([2.0, 1.0, 1.0], [3.0, 2.0, 2.0], 1)):
        x, y = np.array(a, "float32"), np.array(b, "float32")
        want = _collect(rt.to_tensor(x), rt.to_tensor(y))
        got = static(rt.to_tensor(x), rt.to_tensor(y))
        assert got[1] == want[1] == took and type(got[1]) is int
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    assert len(static.program_cache) == 1
