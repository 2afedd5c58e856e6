"""A dict whose keys tensor `if`s set (presence flags, issue 35's `semantic_area_report`):
`max(d, key=d.get)` / `min(...)` pick among the keys present on the run (a str the run
picks; eager's ValueError where none is); and the dict's truth (`if d:`, `x if d else y`,
`bool(d)`, `not d`) is whether a key exists on the run (it was the trace's dict before: a
silent 1 where eager gives 0)."""
import inspect
import re

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line

NAMES = ("background", "road", "car")


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


class AreaReport:
    def __init__(self, min_frac):
        self.min_frac = min_frac

    def __call__(self, scores):
        report = {}
        for c, name in enumerate(NAMES):
            if scores[c] >= self.min_frac:
                report[name] = scores[c]
        return max(report, key=report.get), min(report.keys(), key=report.__getitem__)


def ref_area_report(scores, min_frac):
    report = {n: s for n, s in zip(NAMES, scores) if s >= min_frac}
    return max(report, key=report.get), min(report, key=report.get)


INPUTS = [[0.5, 0.25, 0.75], [0.125, 0.5, 0.25], [0.5, 0.5, 0.125], [0.25, 0.75, 0.75],
          [0.25, 0.125, 0.25]]


def test_max_and_min_by_value_pick_among_the_present_keys_in_one_program():
    fn = AreaReport(0.25)
    static = d2s.to_static(fn.__call__)
    for sv in INPUTS:
        want = ref_area_report(sv, 0.25)
        for got in (fn(rt.to_tensor(sv)), static(rt.to_tensor(sv))):
            assert got == want and [type(v) for v in got] == [str, str], (sv, got, want)
    assert len(static.program_cache) == 1


def test_no_key_present_raises_eagers_value_error_at_the_users_line():
    fn = AreaReport(0.6)
    static = d2s.to_static(fn.__call__)
    assert static(rt.to_tensor([0.0, 0.75, 0.0])) == ("road", "road")
    with pytest.raises(ValueError) as eager:
        fn(rt.to_tensor([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError, match=re.escape(str(eager.value))) as e:
        static(rt.to_tensor([0.5, 0.5, 0.5]))
    assert_at_user_line(e.value, __file__, line_of(AreaReport.__call__, "return max("))


def truths(x):
    seen = {}
    if x[0] > 0:
        seen["first"] = x[0]
    if x[1] > 0:
        seen["second"] = x[1]
    if seen:
        n = len(seen) * 10
    else:
        n = -1
    keys = seen.keys()
    return n, (1.5 if seen else 0.0), bool(seen), not seen, not keys


def ref_truths(x):
    seen = {k: v for k, v in zip(("first", "second"), x) if v > 0}
    return (len(seen) * 10 if seen else -1, 1.5 if seen else 0.0, bool(seen), not seen,
            not seen.keys())


def test_truth_of_a_dict_follows_the_keys_present_on_the_run():
    static = d2s.to_static(truths)
    for xv in ([1.0, 2.0], [-1.0, 2.0], [1.0, -2.0], [-1.0, -2.0]):
        want = ref_truths(xv)
        for got in (truths(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
            assert tuple(got) == want, (xv, got, want)
            assert [type(v) for v in got] == [int, float, bool, bool, bool]
    assert len(static.program_cache) == 1


def noted(x):
    out = {"loss": x.mean()}
    if x.mean() > 0.5:
        out["note"] = "high"
    return out


def noted_on_every_path(x):
    out = {"loss": x.mean(), "note": ""}
    if x.mean() > 0.5:
        out["note"] = "high"
    return out


def test_a_str_key_set_on_one_path_is_there_on_the_runs_that_set_it():
    """A str under a key one path sets has a presence flag (its id, None's where unset):
    the returned dict has the key where eager's has it (`branch_keys`)."""
    static = d2s.to_static(noted)
    for xv, keys in (([1.0, 2.0], ["loss", "note"]), ([0.0, 0.25], ["loss"])):
        got, want = static(rt.to_tensor(xv)), noted(rt.to_tensor(xv))
        assert list(got) == list(want) == keys and got.get("note") == want.get("note")
    static = d2s.to_static(noted_on_every_path)
    for xv, note in (([1.0, 2.0], "high"), ([0.0, 0.25], "")):
        assert static(rt.to_tensor(xv))["note"] == note == noted_on_every_path(
            rt.to_tensor(xv))["note"]