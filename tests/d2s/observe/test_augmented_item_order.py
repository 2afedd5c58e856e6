"""`d[k] op= f()` reads `d[k]` before Python evaluates the right side (issue 33): what `f`
stores under the key is overwritten by the sum of the old item and `f`'s result, and a key
that is missing raises eager's `KeyError` before `f` runs (converted code read the item after
the right side: the helper's store leaked into the sum, and a missing key the helper set was
no error). Eager vs converted vs a reference, the dict the function builds and the caller's
objects after the call."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class Log:
    def __init__(self):
        self.calls = 0


def reset_and_weigh(meter, key, log):
    """A helper as metric code writes it: it resets the entry, then returns a weight."""
    log.calls += 1
    meter[key] = 100.0
    return 0.5


def accumulate(x, key, log):
    meter = {"loss": 1.0, "acc": 2.0}
    name = key  # (a key held by a name: `meter[name]`)
    meter[name] += reset_and_weigh(meter, name, log) * float(x.sum())
    return x * 2, meter


def accumulate_computed(x, log):
    votes = {0: 1.0, 1: 2.0}
    votes[int(x.sum() > 0)] += reset_and_weigh(votes, 0, log)
    return votes


def _reference(x, key):
    meter = {"loss": 1.0, "acc": 2.0}
    if key not in meter:
        return KeyError(key), 0
    meter[key] = {"loss": 1.0, "acc": 2.0}[key] + 0.5 * float(x.sum())
    return meter, 1


def _outcome(fn, *args):
    log = Log()
    try:
        out = fn(*args, log)
    except KeyError as e:
        return KeyError(*e.args), log.calls
    return out, log.calls


@pytest.mark.parametrize("key", ["loss", "acc", "steps"])
def test_the_item_is_read_before_the_right_side(key):
    converted = d2s.to_static(accumulate)
    for data in (np.ones(3, "float32"), np.arange(3, dtype="float32")):  # (one program each)
        x = rt.to_tensor(data)
        want, calls = _reference(data, key)
        for fn in (accumulate, converted):
            got, got_calls = _outcome(fn, x, key)
            assert got_calls == calls
            if isinstance(want, KeyError):
                assert type(got) is KeyError and got.args == want.args
                continue
            doubled, meter = got
            np.testing.assert_array_equal(doubled.numpy(), data * 2)
            assert meter == want and all(type(v) is float for v in meter.values())
    assert len(converted.program_cache) == (key != "steps")  # (a trace that raises: none)


def test_a_computed_key_is_read_before_the_right_side():
    converted = d2s.to_static(accumulate_computed)
    for data, want in ((np.ones(3, "float32"), {0: 100.0, 1: 2.5}),
                       (-np.ones(3, "float32"), {0: 1.5, 1: 2.0})):
        for fn in (accumulate_computed, converted):
            got, calls = _outcome(fn, rt.to_tensor(data))
            assert calls == 1
            assert got == want and all(type(v) is float for v in got.values())
    assert len(converted.program_cache) == 1
