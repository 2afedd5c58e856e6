"""Every case of the end-to-end corpus (tests/d2s/corpus) that saves is saved as an inference
model, loaded with all the load-time checks, and gives the live converted function's answer:
the checks refuse no program d2s writes. (Slow: about 20 s.)"""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.corpus import (  # noqa: F401  (registers the cases)
    cases_assert_print_len_cast, cases_break_continue, cases_calls, cases_for, cases_if,
    cases_layers, cases_list_dict, cases_logical, cases_misc, cases_return, cases_while)
from tests.d2s.corpus.registry import CASES
from tests.d2s.corpus.test_corpus import _make_layer, _to_inputs


def _leaves(out) -> list:
    if isinstance(out, rt.Tensor):
        return [out.numpy()]
    if isinstance(out, dict):
        return [a for v in out.values() for a in _leaves(v)]
    if isinstance(out, (list, tuple)):
        return [a for v in out for a in _leaves(v)]
    return []


@pytest.mark.slow
def test_every_corpus_program_round_trips(tmp_path):
    loaded = 0
    for c in CASES:
        static = d2s.to_static(_make_layer(c) if c.is_layer else c.fn)
        args = c.args[0]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                live = static(*_to_inputs(args))
                d2s.save(static, str(tmp_path / c.name))
        except Exception:  # noqa: BLE001  (not saveable, e.g. raises for this input)
            continue
        model = d2s.load(str(tmp_path / c.name))
        tensors = [rt.to_tensor(a) for a in args if isinstance(a, np.ndarray)]
        with contextlib.redirect_stdout(io.StringIO()):
            got = model(*tensors)
        want = _leaves(live)
        assert [a.tolist() for a in _leaves(got)] == [a.tolist() for a in want], c.name
        loaded += 1
    assert loaded >= 280
