"""Attributes, dict entries and list items of objects changed inside a graph loop (issue 35):

- attributes the loop carries by name (`self.h = ...` in the body) beside another attribute
  that a Python-decided branch assigns were refused with `StateChangeError: o.bias is changed
  inside a loop ... only once its values have their loop shapes`: each trace of the body
  stores the loop's parameter into the attribute, which the mutation log took for a change
  its probe had missed. They convert.
- a value whose shape is the same on every trip but differs from its value before the loop
  (`self.mem = x[:1]`, then `self.mem = x` in the body) converts, as for a local name;
- a value whose dtype or rank the body changes is refused as for a local name, naming the
  place (`"cache['mem']"`, `'box.total'`), at the user's loop.

Eager vs static vs NumPy over 0, 1 and 3 trips through one program; gradients against finite
differences."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line

X = np.array([1.0, -2.0, 0.5], "float32")


class Smoother:
    """A streaming smoother whose `use_bias` is a Python config decided at construction."""

    def __init__(self, use_bias: bool):
        self.use_bias = use_bias

    def run(self, x, n):
        self.h = x * 1.0
        self.bias = x * 0.0
        for _ in range(n):
            if self.use_bias:
                self.bias = self.bias + x * 0.25
            self.h = self.h * 0.5 + self.bias
        return self.h


def smoother_ref(x, n, use_bias):
    h, bias = x * 1.0, x * 0.0
    for _ in range(n):
        if use_bias:
            bias = bias + x * 0.25
        h = h * 0.5 + bias
    return h


@pytest.mark.parametrize("use_bias", [False, True])
def test_attributes_carried_by_name_beside_a_python_decided_assignment(use_bias):
    eager, converted = Smoother(use_bias), Smoother(use_bias)
    static = d2s.to_static(converted.run)
    for n in (0, 1, 3):
        want = smoother_ref(X.astype("float64"), n, use_bias)
        for model, run in ((eager, eager.run), (converted, static)):
            x = rt.to_tensor(X, stop_gradient=False)
            out = run(x, rt.to_tensor(n))
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
            np.testing.assert_allclose(model.h.numpy(), want, rtol=1e-6)
            out.sum().backward()
            grad = numeric_grad(lambda v, n=n: float(smoother_ref(v, n, use_bias).sum()),
                                X.astype("float64"))
            np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


class Memory:
    pass


def remember(x, n):
    box = Memory()
    box.mem = x[:1]
    cache = {"mem": x[:1]}
    slots = [x[:1]]
    for _ in range(n):
        box.mem = x * 2.0
        cache["mem"] = x + 1.0
        slots[0] = x - box.mem
    return box.mem, cache["mem"], slots[0]


def remember_ref(x, n):
    if n == 0:
        return x[:1], x[:1], x[:1]
    return x * 2.0, x + 1.0, -x


def test_a_value_of_one_shape_on_every_trip_but_another_before_the_loop():
    static = d2s.to_static(remember)
    for n in (0, 1, 3):
        want = remember_ref(X, n)
        for run in (remember, static):
            got = run(rt.to_tensor(X), rt.to_tensor(n))
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
    assert len(static.program_cache) == 1


def ranked_attribute(x, n):
    box = Memory()
    box.total = x.sum()
    for _ in range(n):
        box.total = box.total + x
    return box.total


def typed_entry(x, n):
    cache = {"mem": rt.zeros([3], "int64")}
    for _ in range(n):
        cache["mem"] = x * 2.0
    return cache["mem"]


@pytest.mark.parametrize("fn, place, before, after", [
    (ranked_attribute, "'box.total'", "f32[]", "f32[3]"),
    (typed_entry, "\"cache['mem']\"", "i64[3]", "f32[3]"),
])
def test_a_dtype_or_rank_the_body_changes_is_refused_naming_the_place(fn, place, before,
                                                                      after):
    fn(rt.to_tensor(X), rt.to_tensor(2))  # eager code runs
    with pytest.raises(TypeError) as info:
        d2s.to_static(fn)(rt.to_tensor(X), rt.to_tensor(2))
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, ln in enumerate(lines) if "for _ in range(n)" in ln)
    text = assert_at_user_line(info.value, __file__, line)
    assert (f"{place} is {before} before a loop whose condition is a tensor" in text and
            f"and {after} after its body: a value the loop carries keeps its dtype and rank"
            in text), text


def last_window(x, n, by_tensor: bool):
    """A helper records the newest item once the window holds more than one (a closure's
    dict entry, changed through the helper)."""
    cache = {"newest": x[:1] * 0.0}

    def note(window):
        cache["newest"] = window[-1:] * 1.0

    window = x[:1]
    for _ in range(n):
        if (rt.shape(window)[0] > 1) if by_tensor else (window.shape[0] > 1):
            note(window)
        window = rt.concat([window, x[1:2] * 2.0])
    return cache["newest"], window


def last_window_ref(x, n):
    window, newest = x[:1], x[:1] * 0.0
    for _ in range(n):
        if len(window) > 1:
            newest = window[-1:]
        window = np.concatenate([window, x[1:2] * 2.0])
    return newest, window


def test_a_change_decided_by_a_shape_that_grows_converts_with_a_tensor_shape():
    static = d2s.to_static(last_window)
    for n in (0, 1, 3):
        want = last_window_ref(X, n)
        for run in (last_window, static):
            got = run(rt.to_tensor(X), rt.to_tensor(n), True)
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)


def test_a_change_a_python_shape_decides_after_the_first_trip_is_refused_with_the_fix():
    x, n = rt.to_tensor(X), rt.to_tensor(3)
    np.testing.assert_allclose(last_window(x, n, False)[0].numpy(), [-4.0])  # eager runs
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(last_window)(x, n, False)
    lines, first = inspect.getsourcelines(last_window)
    line = first + next(i for i, ln in enumerate(lines) if "for _ in range(n)" in ln)
    text = assert_at_user_line(info.value, __file__, line)
    assert ("cache['newest'] is changed inside a loop whose condition is a tensor" in text and
            "only once its values have their loop shapes: a Python decision on a value's "
            "shape or stop_gradient" in text and "`if rt.shape(h)[0] > 1:`" in text), text


class Stream:
    """Model-code state: `trace` is set only when `debug` (a Python config) is on."""

    def __init__(self, debug: bool):
        self.debug = debug


def warm_up(x, n, stream):
    h = x * 1.0
    for _ in range(n):
        if stream.debug:
            stream.trace = h
        h = h * 0.5 + 1.0
    if h.sum() > 0:
        h = h * 2.0
    elif stream.debug:
        stream.last = h
    return h


def warm_up_ref(x, n):
    h = x * 1.0
    for _ in range(n):
        h = h * 0.5 + 1.0
    return h * 2.0 if h.sum() > 0 else h


def test_an_attribute_set_only_where_python_decides_not_to_is_left_unset():
    """The converted code passes the attribute's absence along as a placeholder; after the
    call the object has no such attribute, as in eager code (it held the placeholder)."""
    static = d2s.to_static(warm_up)
    for xv in (X, -3.0 * np.abs(X)):
        for n in (0, 2):
            want = warm_up_ref(xv, n)
            for run in (warm_up, static):
                stream = Stream(debug=False)
                out = run(rt.to_tensor(xv), rt.to_tensor(n), stream)
                np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
                assert not hasattr(stream, "trace") and not hasattr(stream, "last")
