"""The Python type of what a converted call gives back: a result that eager code makes a
Python number (`loss.item()`, `int(t)`, `float(t)`, `bool(t)`, arithmetic on those), alone or
inside tuples, lists and dicts, comes back as that Python `int`/`float`/`bool`, and so do the
numbers converted code stores on an argument object or a Layer attribute. Tensors made of such
numbers (`rt.to_tensor(n)`, `rt.full([], n)`) stay Tensors. Each case runs eager, static and
a NumPy reference, with inputs that take both sides of the tensor tests in one program."""
import json

import numpy as np
import pytest

import d2s
import runtime as rt

INPUTS = [np.array([1.0, -2.0, 3.5], "float32"), np.array([-4.0, 0.5, -1.0], "float32")]


def summary(x):
    loss = (x * x).mean()
    return {"loss": loss.item(), "best": int(x.argmax()), "any_pos": bool((x > 0).any()),
            "mean": float(x.mean()), "scaled": [x.sum().item() * 2, -x.max().item()]}


def reference(x):
    return {"loss": float((x * x).mean()), "best": int(x.argmax()),
            "any_pos": bool((x > 0).any()), "mean": float(x.mean()),
            "scaled": [float(x.sum()) * 2, -float(x.max())]}


def _assert_same_leaves(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            _assert_same_leaves(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same_leaves(g, w)
    else:
        assert got == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("calls", [1, 4])  # the slow call path, then the fast one
def test_python_numbers_come_back_as_python_numbers(calls):
    static = d2s.to_static(summary)
    for _ in range(calls):
        for x in INPUTS:
            want = reference(x.astype("float64"))
            _assert_same_leaves(summary(rt.to_tensor(x)), want)
            got = static(rt.to_tensor(x))
            _assert_same_leaves(got, want)
            json.dumps(got)  # what a user does with the numbers: no Tensor inside


def number_or_tensor(x):
    n = x.sum().item()
    big = n > 0  # a Python bool eagerly, whichever way it goes
    return n, big, rt.to_tensor(n), rt.full([], n), rt.zeros_like(x.sum()) + n


def test_tensors_made_of_numbers_stay_tensors():
    static = d2s.to_static(number_or_tensor)
    for x in INPUTS:
        for got in (number_or_tensor(rt.to_tensor(x)), static(rt.to_tensor(x))):
            n, big, t1, t2, t3 = got
            assert type(n) is float and type(big) is bool
            assert big == (float(x.sum()) > 0)
            for t in (t1, t2, t3):
                assert isinstance(t, rt.Tensor) and t.dtype == rt.float32 and t.shape == []
                np.testing.assert_allclose(t.numpy(), x.sum(), rtol=1e-6)


def test_bool_of_a_returned_mask_leaves_the_mask_a_tensor():
    def f(x):
        mask = (x > 0).any()
        return mask, bool(mask)

    static = d2s.to_static(f)
    for x in INPUTS:
        mask, flag = static(rt.to_tensor(x))
        assert isinstance(mask, rt.Tensor) and mask.dtype == rt.bool
        assert type(flag) is bool and flag == bool((x > 0).any())


class Box:
    pass


def record(x, box):
    box.last = float(x.sum())
    box.positive = bool(x.sum() > 0)
    box.index = int(x.argmax())
    return x * 2


class Tracker(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 1)
        self.last = 0.0
        self.improved = False

    def forward(self, x):
        loss = self.fc(x).mean()
        self.improved = bool(loss < self.last)
        self.last = float(loss)
        return loss


def test_numbers_stored_on_arguments_are_python_numbers():
    static = d2s.to_static(record)
    for _ in range(2):
        for x in INPUTS:
            eager, conv = Box(), Box()
            record(rt.to_tensor(x), eager)
            static(rt.to_tensor(x), conv)
            assert vars(conv) == vars(eager)
            for k, v in vars(eager).items():
                assert type(getattr(conv, k)) is type(v), k
            assert conv.positive == (float(x.sum()) > 0)


def test_numbers_stored_on_a_layer_are_python_numbers():
    rt.seed(3)
    eager = Tracker()
    static = d2s.to_static(Tracker())
    static.set_state_dict(eager.state_dict())
    for x in INPUTS * 2:
        want = eager(rt.to_tensor(x[None]))
        got = static(rt.to_tensor(x[None]))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        assert type(static.last) is float and type(static.improved) is bool
        assert static.last == pytest.approx(eager.last, rel=1e-6)
        assert static.improved == eager.improved
