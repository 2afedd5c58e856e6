"""Every case of the end-to-end corpus (tests/d2s/corpus) whose arguments are arrays and that
saves is saved as an inference model, loaded with all the load-time checks, and gives the live
converted function's answer: the same nesting (lists, tuples, dicts and their keys in order),
the same Python type of every leaf, the same values (to float32 rounding: BatchNorm is folded).
The checks refuse no program d2s writes. (Slow: about 90 s.)"""
from __future__ import annotations

import contextlib
import dataclasses
import io

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.corpus import test_corpus  # noqa: F401  (imports every case module)
from tests.d2s.corpus.registry import CASES
from tests.d2s.corpus.test_corpus import _make_layer, _to_inputs


def _skeleton(out):
    """The nesting and leaf types of `out`, and its arrays in order (namedtuples as tuples
    and dataclasses as dicts of their fields: a saved model keeps no Python classes)."""
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        out = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}
    if isinstance(out, rt.Tensor):
        return "Tensor", [out.numpy()]
    if isinstance(out, dict):
        parts = [(k, _skeleton(v)) for k, v in out.items()]
        return ("dict", [(k, s) for k, (s, _) in parts]), [a for _, (_, x) in parts for a in x]
    if isinstance(out, (list, tuple)):
        parts = [_skeleton(v) for v in out]
        kind = "list" if isinstance(out, list) else "tuple"
        return (kind, [s for s, _ in parts]), [a for _, x in parts for a in x]
    if out is None or isinstance(out, str):
        return ("constant", out), []
    return type(out).__name__, [np.asarray(out)]


@pytest.mark.slow
def test_every_corpus_program_round_trips(tmp_path):
    loaded = 0
    for c in CASES:
        args = c.args[0]
        if not all(isinstance(a, np.ndarray) for a in args):  # (a loaded model takes tensors)
            continue
        static = d2s.to_static(_make_layer(c) if c.is_layer else c.fn)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                live = static(*_to_inputs(args))
                d2s.save(static, str(tmp_path / c.name))
        except Exception:  # noqa: BLE001  (not saveable, e.g. raises for this input)
            continue
        model = d2s.load(str(tmp_path / c.name))
        with contextlib.redirect_stdout(io.StringIO()):
            got = model(*[rt.to_tensor(a) for a in args])
        (want_form, want), (got_form, values) = _skeleton(live), _skeleton(got)
        assert got_form == want_form, c.name
        for a, b in zip(values, want, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, c.name
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=c.name)
        loaded += 1
    assert loaded >= 450
