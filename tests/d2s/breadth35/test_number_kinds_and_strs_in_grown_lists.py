"""Lists whose length a tensor decides that hold Python numbers of several types, or that get
strs beside numbers (issue 35, internal errors found by random programs):

- printed (`print(out)`, `print(out[-1])`, f-strings with a spec): each item as eager shows it
  (a bool read back from `[0.5]` grown by `append(True)` printed as a float64 Tensor, silently,
  and `print(out)` of any list a graph loop grew failed with `py_print: 'list' object has no
  attribute 'shape'`);
- a str put beside numbers or tensors by `append`, `insert`, `extend`, `+` or `+=` (which
  failed with `unsupported dtype dtype('<U1')`, or `array_write: x is i64[] but array holds
  int32` for an int into a list of strs): a clear error at the user's line that says strs
  cannot be put in such a list beside other values.

Eager vs static vs a reference, over trip counts 0, 1 and 3 through one program."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import same_with_reference

from .messages import assert_at_user_line

XV = np.array([1.5, -2.0, 3.0, 0.5], "float32")
TRIPS = (0, 1, 3)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def flags_and_counts(x, n):
    seen = [0.5]
    for i in range(n):
        seen.append(i % 2 == 0)  # (a Python bool: the counter is a graph value)
        seen.append(i)
    print("seen", seen)
    print(seen[0], seen[-1], f"{seen[-1]:>4}|{seen[0]!r}")
    return seen, sum(seen), len(seen)


def flags_reference(xv, k):
    seen = [0.5]
    for i in range(k):
        seen += [i % 2 == 0, i]
    return seen


def test_numbers_of_several_types_printed_and_returned_as_eager(capsys):
    static = d2s.to_static(flags_and_counts, full_graph=True)
    for k in TRIPS:
        want = flags_reference(XV, k)
        eager = flags_and_counts(rt.to_tensor(XV), rt.to_tensor(k))
        eager_text = capsys.readouterr().out
        got = static(rt.to_tensor(XV), rt.to_tensor(k))
        assert capsys.readouterr().out == eager_text
        same_with_reference(got, eager)
        assert got[0] == want and [type(v) for v in got[0]] == [type(v) for v in want]
        assert type(got[1]) is float and got[1] == sum(want)
    assert len(static.program_cache) == 1


class Recorder:
    """Model-style: a history on `self` that a step loop grows, printed by a helper."""

    def __init__(self):
        self.names = ["start"]

    def show(self, hist):
        print("hist:", hist)

    def step(self, x, n):
        hist = [x.sum()]
        names = list(self.names)
        for i in range(n):
            hist.append(i)
            hist.append(x[i] * 2.0)
            names.append("step")
        self.show(hist)
        print(names, tuple(hist))
        return len(hist), names


def test_lists_of_tensors_numbers_and_strs_printed_as_eager(capsys):
    rec = Recorder()
    static = d2s.to_static(rec.step, full_graph=True)
    for k in TRIPS:
        eager = rec.step(rt.to_tensor(XV), rt.to_tensor(k))
        eager_text = capsys.readouterr().out
        got = static(rt.to_tensor(XV), rt.to_tensor(k))
        assert capsys.readouterr().out == eager_text
        same_with_reference(got, eager)
        assert eager_text.count("Tensor(") == 2 * (1 + k)
    assert len(static.program_cache) == 1


def str_appended(x, n):
    out = [0.5]
    for _ in range(n):
        out.append("a")
    return len(out)


def str_inserted(x, n):
    out = [x.sum()]
    for _ in range(n):
        out.insert(0, "a")
    return len(out)


def str_extended(x, n):
    out = []
    for i in range(n):
        out.append(i)
        out.extend(["a", 1])
    return len(out)


def str_added(x, n):
    out = [0.5]
    for _ in range(n):
        out += ["a"]
    return len(out)


def str_joined(x, n):
    out = [x.sum()]
    for _ in range(n):
        out = out + ["a"]
    return len(out)


def int_into_strs(x, n):
    names = ["b"]
    for _ in range(n):
        names += [1]
    return len(names)


def int_appended_to_strs(x, n):
    names = ["b"]
    for _ in range(n):
        names.append(1)
    return len(names)


@pytest.mark.parametrize("fn, line", [
    (str_appended, "out.append"), (str_inserted, "out.insert"), (str_extended, "out.extend"),
    (str_added, "out +="), (str_joined, "out = out +"), (int_into_strs, "names +="),
    (int_appended_to_strs, "names.append")])
def test_strs_beside_other_values_are_an_error_at_the_line(fn, line):
    x = rt.to_tensor(XV)
    assert fn(x, rt.to_tensor(2)) >= 3  # (eager: the list holds them)
    with pytest.raises((d2s.StateChangeError, TypeError)) as info:
        d2s.to_static(fn, full_graph=True)(x, rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(fn, line))
    assert "cannot be" in text and "whose condition is a tensor" in text
    assert "Keep strs and other values in separate lists" in text
    assert "dtype(" not in text and "array_write" not in text


def strs_only(x, n):
    names = ["a"]
    for _ in range(n):
        names += ["b"]
    return names


def test_strs_added_to_a_list_of_strs_still_convert():
    static = d2s.to_static(strs_only, full_graph=True)
    for k in TRIPS:
        assert static(rt.to_tensor(XV), rt.to_tensor(k)) == ["a"] + ["b"] * k


def checked(x, n):
    out = [0.5]
    for i in range(n):
        out.append(i > 0)
    assert x.sum() < 0, f"last {out[-1]} of {out}"
    return x


def test_an_assert_message_shows_such_a_list_and_item_as_eager():
    # (was an internal error naming the assert op and its Variables)
    static = d2s.to_static(checked, full_graph=True)
    for k in TRIPS:
        with pytest.raises(AssertionError) as want:
            checked(rt.to_tensor(XV), rt.to_tensor(k))
        with pytest.raises(AssertionError) as got:
            static(rt.to_tensor(XV), rt.to_tensor(k))
        assert str(got.value).splitlines()[0] == str(want.value).splitlines()[0]
        assert str(got.value).splitlines()[0].startswith("last ")
    assert len(static.program_cache) == 1
