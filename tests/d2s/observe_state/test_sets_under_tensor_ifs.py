"""A Python set changed under a tensor `if` (issue 33; the observe fuzzer's seed 17010): every
trace of a branch starts from the set as it was before the `if` (a retrace used to find the
earlier trace's values in it: "Variable 't245' ... was created inside a cond block"). Where
the branches leave it holding the same items, or nothing reads it again (code after an early
`return`, which is the `if`'s else branch), the function converts; reading a set whose items
the run decides, changing one the caller sees, or changing one in a graph loop is a
ConversionError at the user's line."""
# ruff: noqa: B012  (a `return` in `finally` is what is tested)
import numpy as np
import pytest

import d2s
import runtime as rt


def early_return_then_recorded(x, y):
    seen = {(0, 1)}
    nums = [3, 1]
    if x[2] < 0.5:
        return x * 2.0, sum(nums)
    if x[0] > 1.0:
        nums.pop()
    pair = (int(x[0] > 0.0), int(y[1] > 0.0))
    h = x + 1.0 if pair in seen else x
    seen.add(pair)
    return h, sum(nums)


def early_return_then_recorded_reference(v, w):
    if v[2] < 0.5:
        return [2.0 * a for a in v], 4
    nums = 3 if v[0] > 1.0 else 4
    pair = (int(v[0] > 0.0), int(w[1] > 0.0))
    return ([a + 1.0 for a in v] if pair == (0, 1) else list(v)), nums


def finally_return_then_recorded(x, y):
    seen = {(0, 1)}
    nums = [3, 1]
    h = x * 1.0
    if x[2] < 0.5:
        try:
            if rt.mean(x) > 0.0:
                return h + 1.0, sum(nums)
        finally:
            if len(seen) == 1:
                return h - 1.0, sum(nums)
    if x[1] > 0.5:
        nums.pop()
    pair = (int(x[0] > 0.0), int(y[1] > 0.0))
    if pair in seen:
        h = h + 1.0
    seen.add(pair)
    return h, sum(nums)


def finally_return_then_recorded_reference(v, w):
    if v[2] < 0.5:  # (the `finally`'s return wins)
        return [a - 1.0 for a in v], 4
    pair = (int(v[0] > 0.0), int(w[1] > 0.0))
    return [a + 1.0 if pair == (0, 1) else a for a in v], 3 if v[1] > 0.5 else 4


def same_item_in_both_branches(x, y):
    seen = set()
    if x[0] > 0.0:
        seen.add("positive-or-not")
    else:
        seen.add("positive-or-not")
    return x * len(seen), "positive-or-not" in seen


def same_item_in_both_branches_reference(v, w):
    return list(v), True


INPUTS = [([2.25, 0.75, 0.75], [-0.25, 1.25, -0.25]),
          ([-1.25, -0.25, -2.25], [1.25, 0.75, -2.75]),
          ([2.25, 0.75, -1.25], [0.75, 0.25, 0.25]),
          ([-0.5, 0.75, 1.25], [0.75, 1.5, 0.25])]
CASES = [(early_return_then_recorded, early_return_then_recorded_reference),
         (finally_return_then_recorded, finally_return_then_recorded_reference),
         (same_item_in_both_branches, same_item_in_both_branches_reference)]


@pytest.mark.parametrize(("fn", "reference"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_set_changed_under_a_tensor_if_converts(fn, reference):
    static = d2s.to_static(fn)
    for v, w in INPUTS:
        h_want, n_want = reference(v, w)
        for h, n in (fn(rt.to_tensor(v), rt.to_tensor(w)),
                     static(rt.to_tensor(v), rt.to_tensor(w))):
            assert h.numpy().tolist() == h_want and n == n_want, (v, w, h, n)
            assert type(n) is type(n_want), (v, w, n)
    assert len(static.program_cache) == 1  # (one program for every path)


def read_after_the_if(x):
    seen = {0}
    if x.mean() > 0:
        seen.add(1)
    return x * 2.0 if 1 in seen else x


def counted_after_the_if(x):
    seen = {0}
    if x.mean() > 0:
        seen.add(1)
    return x * len(seen)


def _reads_reference(fn, x_np):
    """NumPy: the set holds 1 where the mean is positive."""
    return x_np * 2.0 if x_np.mean() > 0 else x_np


@pytest.mark.parametrize("fn", [read_after_the_if, counted_after_the_if])
def test_a_set_the_run_decides_and_code_after_reads_follows_the_run(fn):
    """`1 in seen` and `len(seen)` after the `if` (refused at the `if` before): the item's
    presence flag decides them per run, one program for both paths."""
    static = d2s.to_static(fn)
    for v in ([1.0, 2.0], [-1.0, -2.0], [1.0, 2.0]):
        x_np = np.array(v, "float32")
        want, got = fn(rt.to_tensor(x_np)), static(rt.to_tensor(x_np))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_allclose(got.numpy(), _reads_reference(fn, x_np))
    assert len(static.program_cache) == 1


def _mark(tags, k):
    tags.add(k)


def marked_by_a_helper_then_read(x):
    seen = {0}
    if x.mean() > 0:
        _mark(seen, 1)  # (a helper changes it: `seen` is passed to a call)
    return x * 2.0 if 1 in seen else x


def marked_by_a_helper_then_counted(x):
    seen = {0}
    if x.mean() > 0:
        _mark(seen, 1)
    return x * len(seen)


@pytest.mark.parametrize("fn", [marked_by_a_helper_then_read, marked_by_a_helper_then_counted])
def test_a_set_a_helper_changes_and_code_after_reads_follows_the_run(fn):
    static = d2s.to_static(fn)
    for v in ([1.0, 2.0], [-1.0, -2.0], [1.0, 2.0]):
        x_np = np.array(v, "float32")
        want, got = fn(rt.to_tensor(x_np)), static(rt.to_tensor(x_np))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_allclose(got.numpy(), _reads_reference(fn, x_np))


def recorded_on_the_caller(x, seen):
    if x.mean() > 0:
        seen.add("positive")
    return x * 2.0


def recorded_in_a_tensor_loop(x):
    seen = set()
    k = rt.zeros([])
    while k < x[0]:
        k = k + 1.0
        seen.add(int(k))
    return x


@pytest.mark.parametrize(("fn", "args", "what"), [
    (recorded_on_the_caller, (set,), "the caller sees it after the call"),
    (recorded_in_a_tensor_loop, (), "changed inside a loop whose condition is a tensor")])
def test_a_set_the_program_cannot_change_is_refused(fn, args, what):
    x = rt.to_tensor([1.0, 2.0])
    fn(x, *[make() for make in args])  # eager runs
    with pytest.raises(d2s.ConversionError, match=what) as info:
        d2s.to_static(fn)(x, *[make() for make in args])
    assert "test_sets_under_tensor_ifs.py" in str(info.value)
    assert "Variable" not in str(info.value)


def recorded_before_an_early_return_in_a_nested_if(x, y):
    tags = {0}
    seen = {(0, 1)}
    lengths = [0.5]
    h = x * 2.0
    if y[0] > x[1]:
        h = h + len({*tags})
    else:
        if x.mean() > 0.0:
            seen.add((1, 1))  # (read nowhere after: this `if`'s else is the rest)
            lengths.append(1.5)
            return h, sum(lengths)
        lengths.append(0.2)
    return h, sum(lengths)


def test_a_set_changed_where_the_outer_branches_change_other_objects_converts():
    """The outer `if`'s else branch changes the set and the list, its if branch neither: the
    branches are traced again with both, and the set's items were looked up by a stale index
    (observe-sets fuzzer, seed 17601: IndexError: list assignment index out of range)."""
    static = d2s.to_static(recorded_before_an_early_return_in_a_nested_if)
    cases = [([0.25, 0.25, 1.25], [-1.25, -2.75, -1.25], [0.5, 0.5, 2.5], 2.0),
             ([-0.25, -1.25, -0.25], [0.25, 0.25, 2.25], [0.5, -1.5, 0.5], 0.5),
             ([-0.25, 0.75, 2.25], [-1.25, -2.75, -1.25], [-0.5, 1.5, 4.5], 2.0),
             ([-0.25, -0.75, -2.25], [-1.25, -2.75, -1.25], [-0.5, -1.5, -4.5], 0.7)]
    for x_np, y_np, want_h, want_sum in cases:  # (every path through one program)
        x, y = rt.to_tensor(x_np), rt.to_tensor(y_np)
        for h, total in (recorded_before_an_early_return_in_a_nested_if(x, y), static(x, y)):
            np.testing.assert_allclose(h.numpy(), want_h)
            assert type(total) is float and total == pytest.approx(want_sum)
