"""Lists whose length the branches of a tensor `if` decide (issue 35): a list of tensors of one
dtype and rank becomes a tensor array, also when the function returns it early from one
branch or appends in the `else` branch only (both were refused: d2s's own references to the
list counted as other names for it); the converted call returns a Python list of the
run-time length, with gradients and `.grad is None` as in eager code. A list whose items
cannot be one array says why at the user's `if`. Eager vs static vs NumPy on both paths
through one program."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line

POSITIVE = np.array([1.0, 2.0], "float32")
NEGATIVE = np.array([-1.0, 0.5], "float32")
BIAS = np.array([0.5, -1.5], "float32")


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def features(x, bias):
    feats = [x * 2.0]
    if x.sum() > 0:
        return feats  # an early return: the fall-through path appends first
    feats.append(x * bias)
    return feats


def features_ref(x, bias):
    return [x * 2.0] if x.sum() > 0 else [x * 2.0, x * bias]


def residuals(x, bias):
    outs = [x + bias]
    if x.sum() > 0:
        scale = 1.0
    else:
        outs.append(x * x)
        scale = 2.0
    return [o * scale for o in outs]


def residuals_ref(x, bias):
    return [x + bias] if x.sum() > 0 else [(x + bias) * 2.0, x * x * 2.0]


def layered(x, bias):
    xs = [x]
    if x.sum() > 0:
        if x.max() > 1.5:
            return xs  # from inside a nested tensor `if`
        xs.append(x * bias)
    else:
        xs.append(x * 3.0)
        xs.append(x + bias)
    return xs


def layered_ref(x, bias):
    if x.sum() > 0:
        return [x] if x.max() > 1.5 else [x, x * bias]
    return [x, x * 3.0, x + bias]


SMALL = np.array([0.5, 1.0], "float32")  # positive sum, max <= 1.5


@pytest.mark.parametrize("fn, ref", [(features, features_ref), (residuals, residuals_ref),
                                     (layered, layered_ref)])
def test_returned_lists_of_branch_dependent_length_are_lists_of_the_run_time_length(fn, ref):
    static = d2s.to_static(fn, full_graph=True)
    bias = rt.to_tensor(BIAS)
    for xv in (POSITIVE, NEGATIVE, SMALL):
        want = ref(xv, BIAS)
        for run in (fn, static):
            got = run(rt.to_tensor(xv), bias)
            assert type(got) is list and len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
    assert len(static.program_cache) == 1


def test_gradients_through_the_returned_items_and_grad_none_as_eager():
    static = d2s.to_static(features, full_graph=True)
    def loss_of(x, b):
        return float(sum(float((v ** 2).sum()) for v in features_ref(x, b)))

    bias64 = BIAS.astype("float64")
    for xv in (POSITIVE, NEGATIVE):
        x64 = xv.astype("float64")
        want_x = numeric_grad(lambda x, b=bias64: loss_of(x, b), x64)
        want_b = numeric_grad(lambda b, x=x64: loss_of(x, b), bias64)
        for run in (features, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            b = rt.to_tensor(BIAS, stop_gradient=False)
            items = run(x, b)
            loss = (items[0] ** 2).sum()
            for v in items[1:]:
                loss = loss + (v ** 2).sum()
            loss.backward()
            np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-4, atol=1e-5)
            if xv.sum() > 0:  # the bias is used on the appending path only
                assert b.grad is None
            else:
                np.testing.assert_allclose(b.grad.numpy(), want_b, rtol=1e-4, atol=1e-5)


def pooled(x, bias):
    parts = [x]
    if x.mean() > 0:
        parts.append(x * bias)
        parts.append(x + bias)
    total = x * 0.0
    for k, p in enumerate(parts):
        total = total + p * (k + 1)
    return total, len(parts), rt.stack(parts).sum(0), rt.concat(parts), sum(parts)


def pooled_ref(x, bias):
    parts = [x, x * bias, x + bias] if x.mean() > 0 else [x]
    total = sum(p * (k + 1) for k, p in enumerate(parts))
    return total, len(parts), np.stack(parts).sum(0), np.concatenate(parts), sum(parts)


def test_iteration_len_stack_concat_and_sum_follow_the_run_time_length():
    static = d2s.to_static(pooled, full_graph=True)
    bias = rt.to_tensor(BIAS)
    for xv in (POSITIVE, NEGATIVE):
        want = pooled_ref(xv, BIAS)
        for run in (pooled, static):
            got = run(rt.to_tensor(xv), bias)
            assert len(got) == len(want)
            assert int(got[1]) == want[1]
            for k in (0, 2, 3, 4):
                np.testing.assert_allclose(got[k].numpy(), want[k], rtol=1e-6)
    assert len(static.program_cache) == 1


def grown_in_a_loop(x, n):
    xs = [x]
    i = 0
    while i < n:
        if x.sum() > i:
            xs.append(x * i)
        i += 1
    return rt.stack(xs).sum(0), len(xs)


def test_a_branch_dependent_append_inside_a_graph_loop():
    static = d2s.to_static(grown_in_a_loop, full_graph=True)
    for xv in (POSITIVE, NEGATIVE, SMALL):
        kept = [k for k in range(3) if xv.sum() > k]
        want = xv + sum(xv * k for k in kept)
        for run in (grown_in_a_loop, static):
            total, n = run(rt.to_tensor(xv), rt.to_tensor(3))
            np.testing.assert_allclose(total.numpy(), want, rtol=1e-6)
            assert int(n) == 1 + len(kept)
    assert len(static.program_cache) == 1


def two_dtypes(x):
    ids = [x]
    if x.sum() > 0:
        ids.append(x.astype("int64"))
    return len(ids)


def with_a_name(x):
    tags = [x]
    if x.sum() > 0:
        tags.append("positive")
    return len(tags)


def with_a_total(x):
    vals = [x]
    if x.sum() > 0:
        vals.append(x.sum())
    return len(vals)


@pytest.mark.parametrize("fn, why", [
    (two_dtypes, "its items are tensors of dtypes float32 and int64"),
    (with_a_name, "its items are not all tensors or numbers (it holds the str 'positive')"),
    (with_a_total, "its items are tensors of ranks 0 and 1"),
])
def test_items_that_cannot_be_one_array_are_refused_at_the_if_with_the_reason(fn, why):
    x = rt.to_tensor(POSITIVE)
    assert fn(x) == 2  # eager code runs
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(x)
    text = assert_at_user_line(info.value, __file__, line_of(fn, "if x.sum() > 0"))
    assert why in text and "one dtype and rank" in text


def chosen_rates(x):
    rates = [0.5]
    if x[2] < 0.5:
        if x.mean() > 0.0:  # (the number appended is chosen by a tensor: a graph value)
            rates.append(1.5)
        else:
            rates.append(-0.25)
        rates.append(2.0)
    return x * len(rates), sum(rates)


def test_python_numbers_beside_numbers_an_inner_tensor_if_chose():
    # (found by the breadth fuzzer: was "its items are tensors and Python floats")
    static = d2s.to_static(chosen_rates, full_graph=True)
    for xv in ([1.0, 1.0, 0.0], [-1.0, -1.0, 0.0], [1.0, 1.0, 1.0]):
        rates = [0.5] + ([1.5 if np.mean(xv) > 0 else -0.25, 2.0] if xv[2] < 0.5 else [])
        for run in (chosen_rates, static):
            y, total = run(rt.to_tensor(np.array(xv, "float32")))
            np.testing.assert_allclose(y.numpy(), np.array(xv) * len(rates))
            assert type(total) is float and total == pytest.approx(sum(rates))
    assert len(static.program_cache) == 1


def rates_in_both_branches(x):
    rates = [0.5]
    if x[2] < 0.5:
        if x.mean() > 0.0:
            rates.append(1.5)  # an array in this branch (its length decided inside)
    else:
        if x.mean() > 0.0:
            rates.append(1.5)
        else:
            rates.append(-0.25)
        rates.append(1.5)  # a list here, holding a number the inner `if` chose
    return x * len(rates), sum(rates)


def test_an_array_in_one_branch_and_chosen_numbers_in_the_other():
    # (found by the breadth fuzzer: was "its items are tensors and Python floats")
    static = d2s.to_static(rates_in_both_branches, full_graph=True)
    for xv in ([1.0, 1.0, 0.0], [-1.0, -1.0, 0.0], [1.0, 1.0, 1.0], [-1.0, -1.0, 1.0]):
        want = rates_in_both_branches(rt.to_tensor(np.array(xv, "float32")))
        got = static(rt.to_tensor(np.array(xv, "float32")))
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
        assert type(got[1]) is float and got[1] == pytest.approx(want[1])
    assert len(static.program_cache) == 1
