"""`return`, `break` and `continue` inside `finally`, under tensor and Python conditions: the
converted call gives eager's values, Python types, dtypes and list lengths, and a value made
on a path that a `finally` discards does not decide the type of what survives. Also numbers
of two types (an int on one path, a float on the other) merged by a tensor `if`: the float is
never cut to an int (issue 33; seed 16701 of the observe fuzzer)."""
from __future__ import annotations

# ruff: noqa: B012  (jumps in `finally` are what is tested)
import numpy as np
import pytest

import d2s
import runtime as rt


def _same(eager, got, where=""):
    """Equal values, Python types, dtypes and lengths, leaf by leaf."""
    if isinstance(eager, (list, tuple)):
        assert type(got) is type(eager) and len(got) == len(eager), (where, eager, got)
        for i, (e, g) in enumerate(zip(eager, got)):
            _same(e, g, f"{where}[{i}]")
    elif isinstance(eager, rt.Tensor):
        assert isinstance(got, rt.Tensor) and got.dtype == eager.dtype, (where, eager, got)
        np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-6, err_msg=where)
    else:
        assert type(got) is type(eager) and got == eager, (where, eager, got)


def _check(fn, cases):
    """eager vs one converted program over `cases` ((inputs..., expected Python values))."""
    static = d2s.to_static(fn)
    for *args, want in cases:
        args = [rt.to_tensor(np.array(a, "float32")) if isinstance(a, list) else a
                for a in args]
        eager = fn(*args)
        _same(want, _python_part(eager), "want")
        _same(eager, static(*args), f"static{tuple(a for a in args if not hasattr(a, 'shape'))}")


def _python_part(v):
    """`v` with tensors left out (the expected values name the Python numbers and lists)."""
    if isinstance(v, (list, tuple)):
        return type(v)(_python_part(x) for x in v if not isinstance(x, rt.Tensor))
    return v


# ---- numbers of two types merged by a tensor `if` --------------------------------------------


def positives_or_mean(logits):
    count = int((logits > 0).sum())  # a Python int the program computes
    if logits.mean() > 0:
        count = float(logits.mean())  # ... or a float, as the run decides
    return count


def half_or_count(logits):
    share = 0.5
    if logits.max() > 1.0:
        share = int((logits > 1.0).sum())
    return share


def flag_or_count(logits):
    keep = bool(logits.sum() > 0)
    if logits.mean() > 0.5:
        keep = 3  # (eager: 3, not True)
    return logits * keep


def test_an_int_and_a_float_from_two_branches_keep_their_values_and_types():
    _check(positives_or_mean, [([2.0, 2.5, -1.0], 1.1666666269302368), ([-1.0, -2.0, 0.5], 1),
                               ([0.25, 0.25, -0.25], 0.0833333358168602)])
    _check(half_or_count, [([2.0, 2.5, -1.0], 2), ([-1.0, -2.0, 0.5], 0.5),
                           ([1.5, 0.25, 0.25], 1)])


def test_a_bool_and_an_int_from_two_branches_scale_a_tensor_as_eager():
    static = d2s.to_static(flag_or_count)
    for v, scale in (([2.0, 2.5, -1.0], 3), ([-1.0, -2.0, 0.5], 0), ([0.25, 0.25, 0.5], 1)):
        x = rt.to_tensor(np.array(v, "float32"))
        eager, got = flag_or_count(x), static(x)
        assert eager.dtype == got.dtype == rt.float32
        np.testing.assert_array_equal(got.numpy(), np.array(v, "float32") * scale)
        np.testing.assert_array_equal(got.numpy(), eager.numpy())


# ---- break / continue / return in finally ----------------------------------------------------


def sum_after_break(x):
    """The fuzz case: the `try`'s `return` (an empty list's int `sum`) is discarded."""
    lengths = []
    h = x * 1.0
    for _ in range(2):
        try:
            if rt.mean(x) > 0.0:
                return h, sum(lengths), len(lengths)
        finally:
            if rt.sum(h) > 1.0:
                break
    lengths.append(1.5)
    lengths.append(0.25)
    return h, sum(lengths), len(lengths)


def test_a_break_in_finally_discards_the_return_and_the_float_list_survives():
    _check(sum_after_break, [([2.75, 2.75, 1.25], (1.75, 2)), ([-1.0, -2.0, -0.5], (1.75, 2)),
                             ([0.1, 0.1, 0.1], (0, 0)), ([0.5, 0.5, 0.5], (1.75, 2))])


def finally_overrides(x, limit):
    scores = []
    try:
        scores.append(float(x.mean()))
        return x + 1.0, len(scores), scores
    finally:
        if x.max() > limit:
            scores.append(0.5)
            return x * 2.0, len(scores), scores


def test_a_return_in_finally_under_a_tensor_condition_replaces_the_try_s():
    _check(finally_overrides, [([1.0, 2.0, 3.0], 2.5, (2, [2.0, 0.5])),
                               ([0.5, 0.5, 0.25], 2.5, (1, [0.4166666567325592])),
                               ([0.5, 0.5, 0.25], 0.1, (2, [0.4166666567325592, 0.5]))])


def strict_or_count(x, strict):
    n = 0
    try:
        n = int(rt.sum(x > 0))
        if x.mean() > 0:
            return n
    finally:
        if strict:
            return -1
    return 2.5


def test_a_return_in_finally_under_a_python_condition():
    _check(strict_or_count, [([1.0, -2.0, 3.0], True, -1), ([1.0, -2.0, 3.0], False, 2),
                             ([-1.0, -2.0, 0.5], False, 2.5), ([-1.0, -2.0, 0.5], True, -1)])


def skip_negatives(x):
    losses = []
    best = 0
    for step in range(3):
        try:
            v = x[step] * 1.0
            if v > 1.0:
                best = step
                return x * v, best, losses
        finally:
            if v < 0.0:
                losses.append(1.5)
                continue
        losses.append(2.0)
    return x, best, losses


def test_a_continue_in_finally_skips_the_rest_and_discards_the_return():
    _check(skip_negatives, [([-1.0, 2.0, 0.5], (1, [1.5])), ([0.5, 0.5, 0.5], (0, [2.0] * 3)),
                            ([-1.0, -1.0, -1.0], (0, [1.5] * 3)), ([2.0, -1.0, 0.5], (0, [])),
                            ([-1.0, 0.5, 3.0], (2, [1.5, 2.0]))])


def flags_until_break(x, patience):
    flags, hits = [], []
    steps = 0
    for step in range(3):
        try:
            steps += 1
            if x[step] > 0:
                return steps, sum(hits, 0.0), flags
            hits.append(float(step))
        finally:
            flags.append(bool(x[step] < -1.0))
            if steps >= patience:
                break
    return steps, sum(hits, 0.0), flags


def test_a_break_in_finally_under_a_python_condition_with_bool_and_float_lists():
    _check(flags_until_break, [
        ([-1.5, -1.5, 2.0], 5, (3, 1.0, [True, True, False])),
        ([-1.5, -1.5, 2.0], 2, (2, 1.0, [True, True])),
        ([1.0, 1.0, 1.0], 5, (1, 0.0, [False])),
        ([-0.25, -0.5, -0.5], 1, (1, 0.0, [False])),
        ([-0.25, -0.5, -0.5], 5, (3, 3.0, [False, False, False]))])


def nested_finally(x, drop):
    out = []
    for i in range(2):
        try:
            try:
                out.append(float(i))
                if x.mean() > 0.0:
                    return len(out), True
            finally:
                if drop:
                    break
        finally:
            out.append(0.5)
    return len(out), sum(out) > 1


def test_nested_finally_blocks_each_run_once_after_the_return_or_the_break():
    _check(nested_finally, [([1.0, 2.0], False, (1, True)), ([1.0, 2.0], True, (2, False)),
                            ([-1.0, -2.0], False, (4, True)), ([-1.0, -2.0], True, (2, False))])


def test_a_return_whose_rank_differs_by_a_tensor_condition_names_the_if():
    def scores(x):
        try:
            return x.sum()
        finally:
            if x.max() > 2.5:
                return x * 2.0

    with pytest.raises(d2s.ConversionError, match=r"rank 1 in the if branch and of rank 0 .*"
                       r"line \d+: if x.max\(\) > 2.5:"):
        d2s.to_static(scores)(rt.to_tensor(np.array([1.0, 2.0, 3.0], "float32")))


# ---- what the `finally` does after the `try` returned ----------------------------------------


def log_in_finally(x):
    """A `finally` that returns under a tensor condition, then logs: the log line runs after
    the `try`'s return too (only the `finally`'s own return skips it), and the list returned
    by the `try` is the object the `finally` appends to."""
    log = []
    for _ in range(2):
        try:
            if x.mean() > 1.0:
                return x * 2.0, log
        finally:
            if x.sum() > 100.0:
                return x, log
            log.append(1.5)
    return x, log


def test_a_finally_runs_its_code_after_the_try_returned_and_changes_the_returned_list():
    _check(log_in_finally, [([1.0, 2.0], ([1.5],)), ([100.0, 2.0], ([],)),
                            ([0.5, 0.5], ([1.5, 1.5],)), ([3.0, 0.5], ([1.5],))])


def history_until(x, patience):
    history = []
    steps = 0
    for step in range(3):
        try:
            steps += 1
            if x[step] > 0:
                return steps, history
        finally:
            history.append(float(x[step]))
            if steps >= patience:
                break
    return steps, history


def test_the_returned_history_holds_the_item_the_finally_appended():
    _check(history_until, [([-1.5, -1.5, 2.0], 5, (3, [-1.5, -1.5, 2.0])),
                           ([-1.5, -1.5, 2.0], 2, (2, [-1.5, -1.5])),
                           ([1.0, 1.0, 1.0], 5, (1, [1.0])),
                           ([-0.25, -0.5, -0.5], 1, (1, [-0.25]))])


def test_a_finally_that_changes_a_list_two_returns_return_differently_is_refused_there():
    def two_returns(x):
        log = []
        try:
            if x.mean() > 0:
                return x, log
            return None
        finally:
            log.append(1.0)

    with pytest.raises(d2s.ConversionError, match=r"the `finally` clause changes 'log', which "
                       r"a `return` of its `try` returns(.|\n)*log.append\(1.0\)"):
        d2s.to_static(two_returns)(rt.to_tensor(np.array([1.0, 2.0], "float32")))


def skip_large(x):
    seen = []
    total = 0.0
    for i in range(3):
        try:
            if x[i] > 0:
                continue
            total += 1.0
        finally:
            if x[i] > 5.0:
                continue
            seen.append(float(x[i]))
        total += 0.5
    return total, seen


def test_a_continue_of_the_try_does_not_skip_the_finally_after_its_own_continue():
    _check(skip_large, [([1.0, 2.0, 3.0], (0.0, [1.0, 2.0, 3.0])),
                        ([-1.0, 6.0, 3.0], (1.5, [-1.0, 3.0])),
                        ([-6.0, -1.0, 3.0], (3.0, [-6.0, -1.0, 3.0]))])


def returns_in_nested_branches(x):
    """`observe --seed 16602` (refused, naming the `def` line): the type of `sum(lengths)`
    (an int 0 for an empty list) is decided inside nested tensor `if`s that `return`s make;
    the outer `if` now gives the inner float flag out."""
    lengths = []
    if x[2] < 0.5:
        try:
            lengths.append(0.25)
            if x[0] > 1.0:
                return len(lengths), sum(lengths)
        finally:
            if rt.mean(x) > 0.0:
                return len(lengths), sum(lengths)
    if x[1] > 0.0:
        return len(lengths), sum(lengths)
    lengths.append(0.5)
    return len(lengths), sum(lengths)


def test_a_number_type_decided_by_returns_in_nested_tensor_ifs():
    _check(returns_in_nested_branches, [
        ([2.0, 1.0, 0.0], (1, 0.25)), ([-2.0, 1.0, 0.0], (1, 0.25)),
        ([-2.0, -1.0, 0.0], (2, 0.75)), ([2.0, 1.0, 1.0], (0, 0)),
        ([-2.0, -1.0, 1.0], (1, 0.5))])


def steps_in_a_tensor_while(x):
    k = rt.zeros([])
    hist = []
    while k < x[0]:
        try:
            k = k + 1.0
            if k > 2.0:
                return k, hist
        finally:
            hist.append(float(k))
            if x[1] < 0.0:
                break
    return k * 10.0, hist


def test_a_tensor_while_whose_finally_logs_and_breaks():
    _check(steps_in_a_tensor_while, [([3.5, 1.0], ([1.0, 2.0, 3.0],)), ([3.5, -1.0], ([1.0],)),
                                     ([1.0, 1.0], ([1.0],)), ([-1.0, 1.0], ([],))])


def count_with_handler(x):
    total = 0
    for i in range(3):
        try:
            total += 1
            if x[i] < 0:
                raise ValueError("negative score")
        except ValueError:
            total += 10
            return total
        finally:
            if x[i] > 5.0:
                continue
            total += 100
    return total


def test_a_finally_after_an_except_that_returns():
    _check(count_with_handler, [([1.0, 2.0, 3.0], 303), ([1.0, -2.0, 3.0], 112),
                                ([6.0, -2.0, 3.0], 12), ([6.0, 6.0, 6.0], 3)])
