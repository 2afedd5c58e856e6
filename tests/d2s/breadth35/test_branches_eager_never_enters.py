"""Branches eager never enters (issue 35): the Python-decided part of a tensor `if`'s
condition prunes the branch when the program is built, and an error raised while tracing a
branch says that both branches of a tensor `if` are traced, at the failing line."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.ops.registry import OpError

from .messages import assert_at_user_line


class Block(rt.nn.Layer):
    """A residual block whose projection exists only when configured."""

    def __init__(self, project: bool):
        super().__init__()
        self.project = project
        self.proj = rt.nn.Linear(3, 3) if project else None

    def forward(self, x):
        if x.mean() > 0 and self.project:
            x = self.proj(x)        # None when not configured: eager never gets here
        if x.mean() < -1 or not self.project:
            x = x * 2.0
        return x


def reference(block, x):
    if x.mean() > 0 and block.project:
        w, b = block.proj.weight.numpy(), block.proj.bias.numpy()
        x = x @ w + b
    if x.mean() < -1 or not block.project:
        x = x * 2.0
    return x


@pytest.mark.parametrize("project", [False, True])
def test_a_python_false_in_the_condition_prunes_the_branch(project):
    rt.seed(3)
    block = Block(project)
    static = d2s.to_static(block, full_graph=True)
    draws = [[[0.5, 1.0, 2.0]], [[-3.0, -1.0, -2.0]], [[-0.1, 0.05, -0.2]]]
    for values in draws:
        x = np.array(values, "float32")
        want = reference(block, x)
        np.testing.assert_allclose(block(rt.to_tensor(x)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), want, rtol=1e-5)
    assert len(static.forward.program_cache) == 1


def scaled_sum(x, extras, use_extras):
    total = x.sum()
    if total > 0 and use_extras and len(extras) > 5:
        total = total + extras[5]   # IndexError if traced with a short list
    return total


def test_a_python_false_later_in_the_chain_prunes_too():
    static = d2s.to_static(scaled_sum, full_graph=True)
    for values in ([1.0, 2.0], [-4.0, 1.0]):
        x = rt.to_tensor(values)
        for extras, use in (([0.5], True), ([0.5] * 6, False)):
            want = np.float32(sum(values))
            np.testing.assert_allclose(scaled_sum(x, extras, use).numpy(), want)
            np.testing.assert_allclose(static(x, extras, use).numpy(), want)
    # the branch is real when the Python part says so: positive and negative take each path
    extras = [0.0] * 5 + [10.0]
    np.testing.assert_allclose(static(rt.to_tensor([1.0, 2.0]), extras, True).numpy(), 13.0)
    np.testing.assert_allclose(static(rt.to_tensor([-4.0, 1.0]), extras, True).numpy(), -3.0)


def project_negatives(x, w):
    if x.mean() > 0:
        y = x + 1.0
    else:
        y = rt.matmul(x, w)     # [n] @ [3, 3] only fits for n == 3
    return y


def test_an_error_from_a_branch_says_both_branches_are_traced():
    w = rt.ones([3, 3])
    x = rt.to_tensor([1.0, 2.0])
    np.testing.assert_allclose(project_negatives(x, w).numpy(), [2.0, 3.0])  # eager runs
    with pytest.raises(OpError, match="matmul") as info:
        d2s.to_static(project_negatives, full_graph=True)(x, w)
    lines, first = inspect.getsourcelines(project_negatives)
    failing = first + next(i for i, ln in enumerate(lines) if "rt.matmul" in ln)
    text = assert_at_user_line(info.value, __file__, failing)
    assert "Both branches of an `if` whose condition is a tensor are built" in text
    assert f'line {failing - 3}: if x.mean() > 0' in text
    assert text.count("Raised while d2s traced a branch") == 1


def shift_if_large(x):
    h = x * 1.0
    if rt.sum(h) > 1.0:
        h = h + hit         # noqa: F821  (read before the branch binds it: eager never gets here)
        hit = 0             # noqa: F841
    return h


def test_a_name_a_branch_reads_before_binding_it_says_both_branches_are_traced():
    x = rt.to_tensor([-0.25, -1.25, -0.25])
    np.testing.assert_allclose(shift_if_large(x).numpy(), [-0.25, -1.25, -0.25])  # eager runs
    with pytest.raises(UnboundLocalError, match="'hit'") as info:
        d2s.to_static(shift_if_large)(x)
    lines, first = inspect.getsourcelines(shift_if_large)
    failing = first + next(i for i, ln in enumerate(lines) if "h + hit" in ln)
    text = assert_at_user_line(info.value, __file__, failing)
    assert f"line {failing - 1}: if rt.sum(h) > 1.0" in text
    assert text.count("Raised while d2s traced a branch") == 1
