"""Run every training case (`cases_wild5_training.py`, `cases_wild7_training.py`) eagerly
and converted from the same start, argument set after argument set, and compare all a user
observes after every call (`training_steps.same`). Known failures are listed in `known_failures.TRAINING` and run as
strict xfails."""
from __future__ import annotations

import contextlib
import io
import warnings

import pytest

import d2s
import runtime as rt

from . import (
    cases_wild5_training,  # noqa: F401  (registers the cases)
    cases_wild7_training,  # noqa: F401
    cases_wild8_training,  # noqa: F401
    known_failures,
)
from .test_corpus import _to_inputs
from .training_steps import TRAIN_CASES, TrainCase, same


def _params():
    out = []
    for c in TRAIN_CASES:
        reason = known_failures.TRAINING.get(c.name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


def _built(c: TrainCase) -> tuple:
    rt.seed(0)
    return tuple(c.setup())


def _call(fn, objects, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (inf/nan steps, both modes)
        result = fn(*objects, *_to_inputs(args))
    return result, out.getvalue()


def test_the_training_corpus_size():
    assert len(TRAIN_CASES) >= 30
    stale = set(known_failures.TRAINING) - {c.name for c in TRAIN_CASES}
    assert not stale, f"known_failures.TRAINING names no case: {sorted(stale)}"


@pytest.mark.parametrize("c", _params())
def test_training_step(c: TrainCase):
    eager, conv = _built(c), _built(c)
    static = d2s.to_static(c.fn)
    for i, args in enumerate(c.args):
        where = f"{c.name} call {i}"
        want, printed = _call(c.fn, eager, args)
        got, got_printed = _call(static, conv, args)
        same(want, got, f"{where}: result", c.rtol, c.atol)
        assert got_printed == printed, f"{where}: printed {got_printed!r}, eager {printed!r}"
        for k, (a, b) in enumerate(zip(eager, conv, strict=True)):
            same(a, b, f"{where}: argument {k}", c.rtol, c.atol)
        if c.between is not None:
            c.between(*eager)
            c.between(*conv)
