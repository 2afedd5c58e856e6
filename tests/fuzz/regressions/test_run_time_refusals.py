"""A documented refusal that the program raises when it runs is a refusal, not an internal
error (found by observe-sets seed 32503: 4 of 150 examples counted as internal errors).

`table = {}; table[2] = 1`, then `table[int(x[0] > 0.0)] = 2`: the key exists only when the
program runs (an int of a bool converts since: its two values are keys with presence flags,
`computed_keys._put_each`; `int(x.argmax())` is of the kind still raised), and docs/d2s.md (Known limitations, "A computed value choosing a Python object")
says the program raises `KeyError` naming the line when it is none of the dict's keys, where
eager code adds it. The campaign's runner took any exception but a `ConversionError` for an
internal error; the control generator already knew the other run-time refusal (`sum()` of a
list the run sizes that got no item). Both now sit in one table, `runner.RUN_TIME_REFUSALS`.
"""
from __future__ import annotations

import pathlib

import pytest

import d2s
import runtime as rt

from .. import GENERATORS, runner


def scores(x):
    table = {2: 1}
    table[int(x.argmax())] = 2
    return table[2]


def test_the_refusal_names_the_users_line_when_the_program_runs():
    assert scores(rt.to_tensor([1.0])) == 1  # eager adds the key 1
    with pytest.raises(KeyError) as info:
        d2s.to_static(scores)(rt.to_tensor([1.0]))
    msg = info.value.args[0]
    assert "table[int(x.argmax())] = 2" in msg and "none of the dict's keys [2]" in msg
    assert runner.refused_when_run(info.value)


def test_other_errors_of_that_type_stay_internal_errors():
    assert not runner.refused_when_run(KeyError("'c'"))
    assert not runner.refused_when_run(TypeError("the key computed by the converted code is "
                                                 "none of the dict's keys"))


def test_found_case_converts():
    # (its key, `int(x[0] > 0.0)`, holds 0 or 1: each a key with a presence flag now)
    path = pathlib.Path(__file__).parent / "found35" / \
        "observe_sets_computed_key_none_of_the_keys.txt"
    out = runner.compare_saved(path, GENERATORS["observe-sets"]()[1])
    assert out.kind == "same", str(out)
