"""Messages made with f-strings of values the program computes, raised on runs a tensor
decides: `raise ValueError(f"too big: {float(x.sum()):.2f}")` under a tensor `if` raises
eager's class and text when the program runs that branch (it was refused at conversion: "an
f-string of a tensor"), and an assert's f-string message with format specs (`{v:.2f}`) shows
the numbers, not `<Spec object at ...>` (a silently wrong message before)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class RangeError(ValueError):
    pass


def check_inputs(x, limit):
    if x.sum() > limit:
        raise RangeError(f"sum {float(x.sum()):.2f} over {limit}, rows={x.shape[0]}")
    assert x.min() > -5, f"min {x.min().item():.1f} below -5 (max {float(x.max()):+.3f})"
    return x * 2


def _outcome(fn, x, limit):
    try:
        out = fn(rt.to_tensor(x), limit)
        return ("ok", out.numpy().tolist(), str(out.dtype), out.stop_gradient)
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e).split("\n")[0])


@pytest.mark.parametrize("x, want", [
    (np.full((2, 3), 1.0, "float32"), ("ok", [[2.0] * 3] * 2, "rt.float32", True)),
    (np.full((2, 3), 20.0, "float32"), ("RangeError", "sum 120.00 over 100, rows=2")),
    (np.array([[1.0, -7.25, 0.5]], "float32"), ("AssertionError",
                                                 "min -7.2 below -5 (max +1.000)")),
])
def test_messages_formatted_when_the_program_raises(x, want):
    converted = d2s.to_static(check_inputs)
    eager, static = _outcome(check_inputs, x, 100), _outcome(converted, x, 100)
    assert static == eager == want


def test_one_program_raises_on_the_runs_that_take_the_branch():
    converted = d2s.to_static(check_inputs)
    for v in (1.0, 30.0, 2.0, 40.0):
        x = np.full((2, 2), v, "float32")
        assert _outcome(converted, x, 100) == _outcome(check_inputs, x, 100)
    assert len(converted.program_cache) == 1
