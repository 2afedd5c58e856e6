"""A conditional expression over a list a tensor filter sizes (issue 35, Dynamo's
comprehension filter): `sum(kept) if kept else 0.0` is a tensor where `kept` has items and
the float 0.0 where it is empty. `sum(kept)` alone is the int 0 on the runs where `kept` is
empty, which the `if` never takes: one program gives eager's Python types on every input; a
run that does give that int (eager's `0`, where the other path has a float) raises a clear
TypeError at the user's line instead of returning 0.0."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


class Gate:
    def __init__(self, thr):
        self.thr = thr

    def kept_mass(self, x):
        kept = [v * 2.0 for v in x if v > self.thr]
        total = sum(kept) if kept else 0.0
        return len(kept), total, [total, len(kept) > 1]


def ref_kept_mass(x, thr):
    kept = [float(v) * 2.0 for v in x if v > thr]
    total = sum(kept) if kept else 0.0
    return len(kept), total, [total, len(kept) > 1]


INPUTS = [[1.0, -2.0, 3.0], [-1.0, -2.0, -3.0], [0.5, 0.25, -4.0], [-0.5, 0.0, 2.0]]


def test_sum_of_a_filtered_list_or_a_float_in_one_program():
    gate = Gate(0.0)
    static = d2s.to_static(gate.kept_mass)
    for xv in INPUTS:
        want = ref_kept_mass(np.asarray(xv, np.float64), 0.0)
        for got in (gate.kept_mass(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
            assert len(got) == 3 and len(got[2]) == 2
            assert got[0] == want[0] and type(got[0]) is int
            np.testing.assert_allclose(float(got[1]), want[1], rtol=1e-6)
            # (a tensor where items were kept, eager's Python float 0.0 where none were)
            assert isinstance(got[1], float) == (want[0] == 0), got
            assert isinstance(got[2][0], float) == (want[0] == 0), got
            assert bool(got[2][1]) == want[2][1]
    assert len(static.program_cache) == 1


def mass_or_default(x):
    kept = [v for v in x if v > 0]
    total = sum(kept) if x.sum() > -5 else 0.0  # (`sum([])` is the int 0 in eager)
    return total


def test_a_run_giving_the_narrower_number_raises_at_the_users_line():
    static = d2s.to_static(mass_or_default)
    for xv, want in (([1.0, 2.0], 3.0), ([-3.0, -4.0], 0.0)):
        got = static(rt.to_tensor(xv))
        np.testing.assert_allclose(float(got), want)
        assert isinstance(got, float) == isinstance(mass_or_default(rt.to_tensor(xv)), float)
    assert mass_or_default(rt.to_tensor([-1.0, -2.0])) == 0  # (eager: the int 0)
    with pytest.raises(TypeError) as e:
        static(rt.to_tensor([-1.0, -2.0]))
    text = assert_at_user_line(e.value, __file__, line_of(mass_or_default, "total ="))
    assert "an int on this input" in text and "0.0" in text


def plain_int_or_tensor(x):
    kept = [v for v in x if v > 0]
    return sum(kept, 0.0) if kept else 0      # (an int on every run of the else path)


def test_a_plain_narrower_number_on_one_path_is_still_refused():
    with pytest.raises(d2s.ConversionError, match="an int and a float"):
        d2s.to_static(plain_int_or_tensor)(rt.to_tensor([1.0, -1.0]))
