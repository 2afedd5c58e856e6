"""A Python number of another type than the list's tensors' number type, put into a list whose
length a tensor decides (issue 35, "Mixed lists in graph loops"): a loop counter appended to
`hist = [x.sum()]` (float32 tensors), `True` flags beside float tensors, a list that starts
with Python ints and gets float tensors, bools beside int64 token tensors. The append was
refused (and before that the int came back as a float32 tensor, silently); the list converts,
each item keeping its Python type beside `[value, is_tensor]`: the returned list, `len`,
`sum` (int + float32 tensor promotes as eager) and `rt.stack` give eager's types and values.
Reading such an item on a run where it is a Python int or bool is refused at the line of the
read on those runs only (the program reads the items as the tensors' number type); a number
the array cannot hold (a float beside int64 tensors) stays refused at the append.

Eager vs static vs a NumPy reference, over trip counts 0, 1 and 3 through one program."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import same_with_reference
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line

XV = np.array([1.5, -2.0, 3.0, 0.5], "float32")
TRIPS = (0, 1, 3)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


class Tracker:
    """Model-style state: the history starts from a loss on `self`, steps are counted."""

    def __init__(self):
        self.scale = 0.5

    def run(self, x, n_t):
        hist = [x.sum() * self.scale]
        for i in range(n_t):
            hist.append(i)  # (a Python int beside the float32 tensor)
            hist += [x[i] * 2.0, i > 1]
        return hist, len(hist), sum(hist), sum(hist, 0.5)


def tracker_reference(xv, k):
    """The items as eager's list holds them (NumPy float32 for the tensors)."""
    items = [np.float32(xv.sum() * 0.5)]
    for i in range(k):
        items += [i, np.float32(xv[i] * 2.0), i > 1]
    return items


def test_a_loop_counter_and_flags_beside_float_tensors_through_one_program():
    tracker = Tracker()
    static = d2s.to_static(tracker.run, full_graph=True)
    for k in TRIPS:
        ref = tracker_reference(XV, k)
        eager = tracker.run(rt.to_tensor(XV), rt.to_tensor(k))
        got = static(rt.to_tensor(XV), rt.to_tensor(k))
        same_with_reference(got[0], eager[0])
        assert [type(v) for v in got[0]] == [rt.Tensor] + [int, rt.Tensor, bool] * k
        np.testing.assert_allclose([float(v) for v in got[0]], [float(v) for v in ref],
                                   rtol=1e-6)
        assert got[1] == eager[1] == 1 + 3 * k and type(got[1]) is int
        for g, e, start in ((got[2], eager[2], 0), (got[3], eager[3], 0.5)):
            same_with_reference(g, e)  # (a float32 tensor: int + tensor promotes as eager)
            np.testing.assert_allclose(float(g), float(np.float32(sum(ref)) + start),
                                       rtol=1e-6)
    assert len(static.program_cache) == 1


def with_steps(x, n):
    out = [x.sum()]
    for i in range(n):
        out.append(i)
        out.append(x[i] * x[i])
    return sum(out) * 2.0, out


def test_gradients_through_the_tensors_beside_the_ints():
    static = d2s.to_static(with_steps, full_graph=True)
    for k in TRIPS:
        def f(v, k=k):
            return 2.0 * (v.sum() + sum(i + v[i] ** 2 for i in range(k)))
        want = numeric_grad(f, XV.astype("float64"))
        seen = []
        for fn in (with_steps, static):
            x = rt.to_tensor(XV, stop_gradient=False)
            loss, out = fn(x, rt.to_tensor(k))
            np.testing.assert_allclose(float(loss), f(XV.astype("float64")), rtol=1e-5)
            loss.backward()
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)
            seen.append([(type(v).__name__, getattr(v, "stop_gradient", None)) for v in out])
        assert seen[0] == seen[1]
    assert len(static.program_cache) == 1


def starts_with_ints(x, n):
    out = [0, 1]
    for i in range(n):
        out.append(x[i] * 2)
    return out, len(out), sum(out, 0.5)


def test_python_ints_then_float_tensors():
    static = d2s.to_static(starts_with_ints, full_graph=True)
    for k in TRIPS:
        eager = starts_with_ints(rt.to_tensor(XV), rt.to_tensor(k))
        got = static(rt.to_tensor(XV), rt.to_tensor(k))
        same_with_reference(got, eager)
        assert got[0][:2] == [0, 1] and [type(v) for v in got[0][:2]] == [int, int]
        want = 1.5 + sum(float(np.float32(XV[i] * 2)) for i in range(k))
        assert type(got[2]) is (float if k == 0 else rt.Tensor)
        np.testing.assert_allclose(float(got[2]), want, rtol=1e-6)
    assert len(static.program_cache) == 1


def tokens_and_flags(logits, n, bos):
    tokens = [rt.argmax(logits[0])]
    for i in range(n):
        tokens.append(bos == 2)  # (a bool beside the int64 tokens)
        tokens.append(rt.argmax(logits[i]))
    return tokens, sum(tokens)


def test_bools_beside_int64_tokens():
    logits = np.array([[0.1, 0.9, 0.0], [0.7, 0.2, 0.1], [0.0, 0.1, 0.9]], "float32")
    static = d2s.to_static(tokens_and_flags, full_graph=True)
    for k in TRIPS:
        want = [1] + [v for i in range(k) for v in (True, int(np.argmax(logits[i])))]
        eager = tokens_and_flags(rt.to_tensor(logits), rt.to_tensor(k), 2)
        got = static(rt.to_tensor(logits), rt.to_tensor(k), 2)
        same_with_reference(got, eager)
        assert [type(v) for v in got[0]] == [rt.Tensor] + [bool, rt.Tensor] * k
        assert [int(v) for v in got[0]] == want and int(got[1]) == sum(want)
    assert len(static.program_cache) == 1


def stacked(x, n):
    hist = [x.sum()]
    for i in range(n):
        hist.append(i)  # noqa: PERF402  (a Python int in eager code)
    return rt.stack(hist)


def last_position(x, n):
    hist = [x.sum()]
    for i in range(n):
        hist.append(i)  # noqa: PERF402  (a Python int in eager code)
    return hist[-1] * 1.0


def test_what_differs_is_refused_on_the_runs_where_it_does():
    """`rt.stack` of such a list fails eagerly where it holds the int (so it does converted);
    reading the int back as an item is refused on the runs where the item read is one."""
    x = rt.to_tensor(XV)
    with pytest.raises(Exception, match="must be a tensor"):
        stacked(x, rt.to_tensor(2))
    fn = d2s.to_static(stacked, full_graph=True)
    same_with_reference(fn(x, rt.to_tensor(0)), stacked(x, rt.to_tensor(0)))
    with pytest.raises(TypeError) as info:
        fn(x, rt.to_tensor(2))
    assert_at_user_line(info.value, __file__, line_of(stacked, "rt.stack"))

    assert type(last_position(x, rt.to_tensor(2))) is float
    fn = d2s.to_static(last_position, full_graph=True)
    same_with_reference(fn(x, rt.to_tensor(0)), last_position(x, rt.to_tensor(0)))
    with pytest.raises(TypeError) as info:
        fn(x, rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(last_position, "hist[-1]"))
    assert "is a Python int or bool on this run" in text
    assert len(fn.program_cache) == 1


def only_ints_left(x, n):
    hist = [x.sum()]
    for i in range(n):
        hist.append(i)  # noqa: PERF402  (a Python int in eager code)
    hist.pop(0)
    return len(hist), sum(hist)


def test_a_sum_whose_type_the_run_decides_is_refused_on_those_runs():
    """No tensor and no float left: eager's sum is an int, the program's numbers are floats."""
    x = rt.to_tensor(XV)
    assert only_ints_left(x, rt.to_tensor(3)) == (3, 3)
    fn = d2s.to_static(only_ints_left, full_graph=True)
    with pytest.raises(TypeError) as info:
        fn(x, rt.to_tensor(3))
    text = assert_at_user_line(info.value, __file__, line_of(only_ints_left, "return len"))
    assert "sum(out, 0.0)" in text


def floats_beside_tokens(logits, n):
    tokens = [rt.argmax(logits[0])]
    for _ in range(n):
        tokens.append(0.5)
    return len(tokens)


def test_a_float_beside_int64_tensors_stays_refused_at_the_append():
    logits = rt.to_tensor(np.eye(3, dtype="float32"))
    assert floats_beside_tokens(logits, rt.to_tensor(2)) == 3
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(floats_beside_tokens, full_graph=True)(logits, rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(floats_beside_tokens,
                                                             "tokens.append"))
    assert "it gets a Python float" in text


def joined(x, n):
    out = [rt.sum(x) * 0.5]
    for i in range(n):
        out += [i, i > 1]  # (the list of tensors meets the numbers in `+=`: was an internal
    other = [x.max()]  # `array_write: x is i64[] but array holds float32`)
    for i in range(n):
        other = other + [x[i], 2]
    return out, other, sum(out) * 0.1 + sum(other, 0.5)


def test_numbers_joined_to_a_list_of_tensors_by_plus():
    static = d2s.to_static(joined, full_graph=True)
    for k in TRIPS:
        out_ref = [np.float32(XV.sum() * 0.5)] + [v for i in range(k) for v in (i, i > 1)]
        other_ref = [XV.max()] + [v for i in range(k) for v in (XV[i], 2)]
        eager = joined(rt.to_tensor(XV), rt.to_tensor(k))
        got = static(rt.to_tensor(XV), rt.to_tensor(k))
        same_with_reference(got, eager)
        assert [type(v) for v in got[0]] == [rt.Tensor] + [int, bool] * k
        assert [type(v) for v in got[1]] == [rt.Tensor] + [rt.Tensor, int] * k
        np.testing.assert_allclose([float(v) for v in got[0]], out_ref, rtol=1e-6)
        np.testing.assert_allclose([float(v) for v in got[1]], other_ref, rtol=1e-6)
        want = np.float32(sum(out_ref)) * 0.1 + np.float32(sum(other_ref)) + 0.5
        np.testing.assert_allclose(float(got[2]), want, rtol=1e-5)
    assert len(static.program_cache) == 1


def counts_beside_doubles(x, n):
    out = [x.sum()]
    for i in range(n):
        out.append(i * 2)
    return len(out)


def test_a_number_beside_tensors_no_item_array_holds_is_refused_at_the_append():
    # (float64 tensors: the Python int came back as a float64 tensor, silently)
    x = rt.to_tensor(XV.astype("float64"))
    assert counts_beside_doubles(x, rt.to_tensor(2)) == 3
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(counts_beside_doubles, full_graph=True)(x, rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(counts_beside_doubles,
                                                             "out.append"))
    assert "a list of tensors of float64" in text and "it gets a Python int" in text


def set_to_a_number(x, n):
    out = [x.sum()]
    for i in range(n):
        out.append(x[i])
    out[0] = 7
    out.insert(1, True)
    return out, len(out), sum(out, 0.5)


def test_a_python_number_set_into_a_list_of_tensors():
    # (`out[0] = 7` gave the item back as a float32 tensor, silently)
    static = d2s.to_static(set_to_a_number, full_graph=True)
    for k in TRIPS:
        eager = set_to_a_number(rt.to_tensor(XV), rt.to_tensor(k))
        got = static(rt.to_tensor(XV), rt.to_tensor(k))
        same_with_reference(got, eager)
        assert got[0][:2] == [7, True] and [type(v) for v in got[0]] == [int, bool] + [
            rt.Tensor] * k
        np.testing.assert_allclose(float(got[2]), 8.5 + XV[:k].sum(), rtol=1e-6)
    assert len(static.program_cache) == 1


class Streaming:
    """Streaming-model state: histories on `self` and in a dict of caches, grown by a step
    loop through their places (not a local name)."""

    def __init__(self):
        self.hist = [rt.to_tensor(0.5)]
        self.cache = {"h": [rt.to_tensor(1.0)]}

    def step(self, x, n):
        for i in range(n):
            self.hist.append(i)
            self.cache["h"].append(i > 0)
            self.cache["h"].append(x[i])
        return len(self.hist)


def test_counters_and_flags_appended_through_self_and_a_dict():
    # (the flag into the dict's list was the internal `array_write: x is f32[] but array
    # holds bool`)
    for k in TRIPS:
        eager, static = Streaming(), Streaming()
        want = eager.step(rt.to_tensor(XV), rt.to_tensor(k))
        got = d2s.to_static(static.step, full_graph=True)(rt.to_tensor(XV), rt.to_tensor(k))
        assert int(got) == want == 1 + k
        same_with_reference(static.hist, eager.hist)
        same_with_reference(static.cache, eager.cache)
        assert [type(v) for v in static.cache["h"]] == [rt.Tensor] + [bool, rt.Tensor] * k
