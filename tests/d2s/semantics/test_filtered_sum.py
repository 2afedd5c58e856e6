"""Issue 12, item 10 follow-up: `sum()` of a list whose length is decided when the program
runs (a comprehension filtered by a tensor, a list appended to under a tensor `if`).

Eager Python's `sum` returns its start value (the int `0` by default) when nothing was kept,
and a tensor otherwise: a result whose type depends on data. With a Python number start the
program's value is a number on the runs where the list is empty (issue 35, session 23;
`number_or_tensor`): the call returns eager's Python number there, arithmetic with Python
numbers stays a number, and reading a tensor attribute of it raises eager's AttributeError.
With a tensor start of the result's shape (`sum(items, rt.zeros([...]))`) both paths are
tensors; a tensor start the items would broadcast raises a TypeError naming the user's line
when the list is empty (eager returns the start's other shape).

Eager vs static vs NumPy through ONE program, inputs that keep some items and none.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


KEEPS_SOME = [[1.0, 2.0], [-3.0, -1.0], [2.5, -0.5]]
KEEPS_NONE = [0.1, 0.2]  # no item of (x, 2x, -x) has a max above 1


def mean_of_large(x):
    xs = (x, x * 2, -x)
    return sum(v.mean() for v in xs if v.max() > 1)


def _mean_of_large_ref(a):
    return sum(v.mean() for v in (a, a * 2, -a) if v.max() > 1)


class Pooled(rt.nn.Layer):
    """A layer summing the branch outputs that fire, with a Python float start."""

    def __init__(self):
        super().__init__()
        self.branches = rt.nn.LayerList([rt.nn.Linear(2, 2) for _ in range(3)])

    def forward(self, x):
        outs = [branch(x) for branch in self.branches]
        return sum([o for o in outs if o.mean() > 0], 0.5)


def test_sum_of_filtered_items_matches_eager_when_some_are_kept():
    static = d2s.to_static(mean_of_large)
    for row in KEEPS_SOME:
        want, got = mean_of_large(_t(row)), static(_t(row))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), _mean_of_large_ref(np.asarray(row)),
                                   rtol=1e-5)
    assert len(static.program_cache) == 1


def test_empty_sum_gives_eagers_int_zero():
    static = d2s.to_static(mean_of_large)
    static(_t(KEEPS_SOME[0]))
    want, got = mean_of_large(_t(KEEPS_NONE)), static(_t(KEEPS_NONE))
    assert type(want) is int and want == 0
    assert type(got) is int and got == 0
    # the same program still serves inputs that keep items
    np.testing.assert_allclose(static(_t(KEEPS_SOME[1])).numpy(),
                               _mean_of_large_ref(np.asarray(KEEPS_SOME[1])), rtol=1e-5)
    assert len(static.program_cache) == 1


def used_after(x):
    total = sum(v.mean() for v in (x, x * 2, -x) if v.max() > 1)
    scaled = total * 2 + 1  # (a Python int on the runs that keep nothing)
    return scaled, total + x  # (a tensor on every run)


def item_of_the_sum(x):
    total = sum(v.mean() for v in (x, x * 2, -x) if v.max() > 1)
    return total.item()


def test_the_number_on_empty_runs_is_used_as_eager_uses_it():
    static = d2s.to_static(used_after)
    for row in KEEPS_SOME + [KEEPS_NONE]:
        want, got = used_after(_t(row)), static(_t(row))
        assert type(got[0]) is type(want[0]), row
        np.testing.assert_allclose(np.asarray(got[0].numpy() if isinstance(got[0], rt.Tensor)
                                              else got[0]),
                                   np.asarray(want[0].numpy() if isinstance(
                                       want[0], rt.Tensor) else want[0]), rtol=1e-6)
        assert (got[1].dtype, got[1].shape) == (want[1].dtype, want[1].shape)
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), rtol=1e-6)
        kept = [v.mean() for v in (np.asarray(row), np.asarray(row) * 2, -np.asarray(row))
                if v.max() > 1]
        np.testing.assert_allclose(got[1].numpy(), sum(kept, 0.0) + np.asarray(row),
                                   rtol=1e-5)
    assert type(static(_t(KEEPS_NONE))[0]) is int
    assert len(static.program_cache) == 1


def test_a_tensor_attribute_of_the_empty_sum_raises_eagers_error():
    static = d2s.to_static(item_of_the_sum)
    assert static(_t(KEEPS_SOME[0])) == pytest.approx(item_of_the_sum(_t(KEEPS_SOME[0])))
    with pytest.raises(AttributeError, match="'int' object has no attribute 'item'"):
        item_of_the_sum(_t(KEEPS_NONE))
    with pytest.raises(AttributeError, match="'int' object has no attribute 'item'"):
        static(_t(KEEPS_NONE))


def test_python_number_start_in_a_layer():
    eager = Pooled()
    for k, branch in zip((1.0, 2.0, -1.0), eager.branches):
        branch.weight.set_value(np.eye(2, dtype="float32") * k)
        branch.bias.set_value(np.zeros(2, "float32"))
    static = d2s.to_static(Pooled())
    static.set_state_dict(eager.state_dict())
    # two branches fire; one fires; none (every mean is 0): eager returns the float 0.5
    for rows in ([[1.0, 2.0], [0.5, 0.0]], [[-1.0, -2.0], [0.0, 1.0]], [[1.0, -1.0]] * 2):
        x = _t(rows)
        want, got = eager(x), static(x)
        assert type(got) is type(want)
        if isinstance(want, float):
            assert want == got == 0.5
        else:
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(want, float)
    assert len(static.forward.program_cache) == 1


def with_tensor_start(x):
    xs = (x, x * 2, -x)
    return sum([v * v for v in xs if v.max() > 1], rt.zeros([2]))


def _with_tensor_start_ref(a):
    return sum([v * v for v in (a, a * 2, -a) if v.max() > 1], np.zeros(2))


def test_a_tensor_start_of_the_results_shape_converts():
    static = d2s.to_static(with_tensor_start)
    for row in KEEPS_SOME + [KEEPS_NONE]:
        want, got = with_tensor_start(_t(row)), static(_t(row))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), _with_tensor_start_ref(np.asarray(row)),
                                   rtol=1e-5)
    assert len(static.program_cache) == 1


def test_tensor_start_gradients_match_finite_differences():
    def loss(x, bias):
        parts = (x, x * 2, -x)
        return sum((p * bias for p in parts if p.max() > 1), bias * bias).sum()

    static = d2s.to_static(loss)
    for row in KEEPS_SOME + [KEEPS_NONE]:
        x, b = _t(row), _t([0.5, -1.5])
        x.stop_gradient = b.stop_gradient = False
        static(x, b).backward()
        ex, eb = _t(row), _t([0.5, -1.5])
        ex.stop_gradient = eb.stop_gradient = False
        loss(ex, eb).backward()
        # where the filter keeps no part, x is not on the loss's path: .grad None, as eager
        assert (x.grad is None) == (ex.grad is None) == (row == KEEPS_NONE), row
        for arg, value, grad in ((0, row, x.grad), (1, [0.5, -1.5], b.grad)):
            if grad is None:
                continue
            def f(a, arg=arg):
                args = [_t(row), _t([0.5, -1.5])]
                args[arg] = rt.to_tensor(a.astype("float32"))
                return float(loss(*args).item())
            want = numeric_grad(f, np.asarray(value, "float64"), eps=1e-3)
            np.testing.assert_allclose(grad.numpy(), want, rtol=1e-2, atol=1e-2,
                                       err_msg=str(row))
    assert len(static.program_cache) == 1


def scalar_start_for_vector_items(x):
    xs = (x, x * 2, -x)
    return sum((v for v in xs if v.max() > 1), rt.zeros([]))  # [] start, [2] items


def test_a_start_the_items_would_broadcast_is_returned_when_empty():
    """Returned, the start itself where nothing was kept, as eager (it raised a TypeError
    there before; computing with it still does: test_sum_start_of_another_shape.py)."""
    static = d2s.to_static(scalar_start_for_vector_items)
    np.testing.assert_allclose(static(_t([1.0, 2.0])).numpy(),
                               scalar_start_for_vector_items(_t([1.0, 2.0])).numpy())
    assert scalar_start_for_vector_items(_t(KEEPS_NONE)).shape == []  # eager: the start
    got = static(_t(KEEPS_NONE))
    assert got.shape == [] and float(got) == 0.0
    assert len(static.program_cache) == 1


def grown_by_a_loop(x):
    kept = []
    for row in (x, x - 1.0, x + 1.0):
        if row.sum() > 2:
            kept.append(row * 2.0)
    return sum(kept)


def test_a_list_appended_under_a_tensor_if_follows_the_same_rule():
    static = d2s.to_static(grown_by_a_loop)
    for row in ([1.0, 2.0], [0.8, 0.9]):  # three kept; one kept (x + 1)
        np.testing.assert_allclose(static(_t(row)).numpy(), grown_by_a_loop(_t(row)).numpy())
    assert grown_by_a_loop(_t([0.0, 0.0])) == 0
    got = static(_t([0.0, 0.0]))
    assert type(got) is int and got == 0


def test_a_saved_model_gives_the_number_and_keeps_the_check(tmp_path):
    path = os.path.join(tmp_path, "pooled")
    d2s.save(d2s.to_static(mean_of_large), path, input_spec=[d2s.InputSpec([2], "float32")])
    loaded = d2s.load(path)
    np.testing.assert_allclose(loaded(_t(KEEPS_SOME[0])).numpy(),
                               _mean_of_large_ref(np.asarray(KEEPS_SOME[0])), rtol=1e-5)
    got = loaded(_t(KEEPS_NONE))
    assert type(got) is int and got == 0
    path = os.path.join(tmp_path, "broadcast")  # (a saved model keeps one shape: refused)
    with pytest.raises(TypeError, match="whose dtype or shape only the run decides"):
        d2s.save(d2s.to_static(scalar_start_for_vector_items), path,
                 input_spec=[d2s.InputSpec([2], "float32")])
