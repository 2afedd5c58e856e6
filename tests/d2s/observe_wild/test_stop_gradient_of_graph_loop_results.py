"""A value accumulated in a graph loop (`for row in x` over a run-time batch, a `while` on a
tensor) that only some trips give a gradient path, by a tensor `if` inside the body
(`total = total + self.fc(row)` for the rows that pass, `total - 1` for the others). Eager
code's result has `stop_gradient=True` on the inputs where no trip took the path; the
converted call gave False (silent; found by the corpus's dynamic-batch case
`layers.RowwiseLoop` once the corpus compared stop_gradient). The first trace of the loop saw
the run-decided flag, but the retrace after the loop variable's static flag changed lost it.
Compared with eager: values, stop_gradient, and `.grad` after `backward()`."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn


class RowScore(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        total = rt.zeros([1])
        for row in x:
            if row.sum() > 0:
                total = total + self.fc(row.unsqueeze(0)).squeeze(0)
            else:
                total = total - 1
        return total


def advantage_weighted(values, adv, n, head):
    loss = rt.zeros([])
    i = rt.to_tensor(0)
    while i < n:
        if adv[i] > 0:
            loss = loss + (head(values[i]) * adv[i]).sum()
        else:
            loss = loss * 0.5
        i += 1
    return loss


def _np_rows(x, w, b):
    total = np.zeros(1, np.float32)
    for row in x:
        total = total + (row @ w + b) if row.sum() > 0 else total - 1
    return total


ROWS = [-np.ones((3, 4), np.float32), np.ones((3, 4), np.float32),
        np.array([[1, 1, 1, 1], [-1, -1, -1, -1]], np.float32)]


@pytest.mark.parametrize("x", ROWS)
def test_rows_loop_result_stop_gradient_is_eagers(x):
    rt.seed(0)
    eager = RowScore()
    rt.seed(0)
    layer = RowScore()
    static = d2s.to_static(layer, input_spec=[d2s.InputSpec([None, 4], "float32")])
    want, got = eager(rt.to_tensor(x)), static(rt.to_tensor(x))
    ref = _np_rows(x, eager.fc.weight.numpy(), eager.fc.bias.numpy())
    np.testing.assert_allclose(want.numpy(), ref, rtol=1e-5)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    assert got.stop_gradient == want.stop_gradient == (x.sum(axis=1) <= 0).all()
    if not want.stop_gradient:
        want.backward()
        got.backward()
        for pw, pg in zip(eager.parameters(), layer.parameters(), strict=True):
            np.testing.assert_allclose(pg.grad.numpy(), pw.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("adv", [[-1.0, -2.0, -0.5], [1.0, -2.0, 0.5]])
def test_while_loop_result_stop_gradient_is_eagers(adv):
    rt.seed(1)
    head = nn.Linear(2, 1)
    static = d2s.to_static(advantage_weighted)
    values = rt.to_tensor(np.ones((3, 2), np.float32))
    args = (values, rt.to_tensor(adv), rt.to_tensor(3), head)
    want, got = advantage_weighted(*args), static(*args)
    assert got.stop_gradient == want.stop_gradient == all(a <= 0 for a in adv)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
