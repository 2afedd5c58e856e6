"""Item 1: `raise` under a tensor condition is a run-time check of the program.

The user's exception class and message are raised when, and only when, the raising branch is
taken when the program runs: clean inputs pass through the same program. Inside loops, in
called helpers, in Layers and in saved inference models; `print(program)` shows the op with
the user's line.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import d2s
import runtime as rt


class BadBatch(ValueError):
    """A user's own exception class."""


def _eager_and_static(fn):
    return fn, d2s.to_static(fn)


def _outcome(fn, *args):
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001  (the outcome compared is the exception itself)
        return ("raise", type(e), (str(e).splitlines() or [""])[0])
    return ("value", np.asarray(out.numpy()).tolist())


def check_same(fn, inputs):
    eager, static = _eager_and_static(fn)
    seen = set()
    for args in inputs:
        e = _outcome(eager, *[rt.to_tensor(a) for a in args])
        s = _outcome(static, *[rt.to_tensor(a) for a in args])
        assert e == s, (args, e, s)
        seen.add(e[0])
    assert seen == {"raise", "value"}, "inputs must take both paths"
    return static


def nan_guard(x):
    if rt.isnan(x).any():
        raise ValueError("nan in input")
    return x + 1


def test_raise_only_when_taken():
    f = check_same(nan_guard, [(np.ones(3, "float32"),),
                               (np.array([1, np.nan, 2], "float32"),),
                               (np.zeros(3, "float32"),)])
    assert len(f.program_cache) == 1


def custom_class_with_else(x, limit):
    s = x.sum()
    if s > limit:
        raise BadBatch(f"sum above {float(limit.numpy()) if hasattr(limit, 'numpy') else 0}")
    elif s < 0:
        y = -x
    else:
        y = x * 2
    return y


def test_user_class_and_elif():
    def f(x):
        s = x.sum()
        if s > 10:
            raise BadBatch("sum above 10")
        elif s < 0:
            y = -x
        else:
            y = x * 2
        return y
    static = check_same(f, [(np.full(3, 5, "float32"),), (np.full(3, -1, "float32"),),
                            (np.ones(3, "float32"),)])
    with pytest.raises(BadBatch, match="sum above 10"):
        static(rt.full([3], 5.0))


def test_raise_in_tensor_while_loop():
    def count_down(x):
        i = rt.zeros([], "int64")
        while i < 5:
            if x[i] < 0:
                raise ArithmeticError("negative entry")
            x = x + 0  # keeps x loop state
            i = i + 1
        return x * 3
    check_same(count_down, [(np.arange(5, dtype="float32"),),
                            (np.array([1, 2, -3, 4, 5], "float32"),)])


def test_raise_in_python_loop_and_helper():
    def check_row(r):
        if r.max() > 100:
            raise OverflowError("row too large")
        return r

    def f(x):
        out = []
        for k in range(x.shape[0]):
            out.append(check_row(x[k]))
        return rt.stack(out)
    check_same(f, [(np.ones((3, 2), "float32"),), (np.array([[1, 2], [3, 400], [5, 6]],
                                                             "float32"),)])


def test_raise_under_python_condition_is_immediate():
    def f(x, strict):
        if strict:
            raise RuntimeError("strict mode")
        return x
    static = d2s.to_static(f)
    with pytest.raises(RuntimeError, match="strict mode"):
        static(rt.ones([2]), True)
    np.testing.assert_array_equal(static(rt.ones([2]), False).numpy(), np.ones(2))


def test_bare_class_and_from():
    def f(x):
        if x.mean() > 0:
            raise KeyError
        if x.mean() < -1:
            raise LookupError("low") from None
        return x
    check_same(f, [(np.ones(2, "float32"),), (np.full(2, -3, "float32"),),
                   (np.full(2, -0.5, "float32"),)])


def test_raise_in_layer_forward():
    class Guarded(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = rt.nn.Linear(3, 2)

        def forward(self, x):
            h = self.fc(x)
            if rt.isnan(h).any():
                raise FloatingPointError("nan activations")
            return h
    net = Guarded()
    x = np.ones((4, 3), "float32")
    want = net(rt.to_tensor(x)).numpy()
    static = d2s.to_static(net)
    np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), want, rtol=1e-6)
    x[1, 1] = np.nan
    with pytest.raises(FloatingPointError, match="nan activations"):
        static(rt.to_tensor(x))


def test_printed_program_and_saved_model(tmp_path):
    static = d2s.to_static(nan_guard)
    static(rt.ones([3]))
    text = str(static.concrete_program.main_program)
    line = nan_guard.__code__.co_firstlineno + 2
    assert (f"raise() {{error='ValueError', message='nan in input', "
            f"at='test_raise.py:{line}'}}") in text, text
    prefix = os.path.join(str(tmp_path), "guard")
    d2s.save(static, prefix, input_spec=[d2s.InputSpec([None])])
    loaded = d2s.load(prefix)
    np.testing.assert_array_equal(loaded(rt.ones([4])).numpy(), np.full(4, 2.0))
    with pytest.raises(ValueError, match="nan in input") as info:
        loaded(rt.to_tensor(np.array([np.nan], "float32")))
    assert "test_raise.py" in "\n".join([str(info.value)] + getattr(info.value,
                                                                     "__notes__", []))


def test_tensor_argument_in_message_is_a_conversion_error():
    def f(x):
        if x.sum() > 0:
            raise ValueError(x)
        return x
    with pytest.raises(TypeError, match="tensor argument"):
        d2s.to_static(f)(rt.ones([2]))
