"""Found by the observe-params generator (seed 29101): `round(loss.item(), 4)` of a small
negative loss returned `-0.0` eagerly (Python's rounding of a float keeps the number's sign)
and `0.0` from the converted call (the graph's rounding added 1 to floor(-0.1)): the same
number, but a user printing or logging it sees another text. Now a rounded zero keeps the
number's sign, on every path through one program."""
import math

import numpy as np

import d2s
import runtime as rt


class Log:
    digits = 4


def metric(v, log):
    return round(v, log.digits)


def step(x, y, log):
    loss = (x * y).mean() * 1e-4
    if x.sum() > 0:
        shown = metric(loss.item(), log)
    else:
        shown = round(float(loss) * 10.0, 2)
    return shown, round(loss.item(), 0), round(float(loss.sum() * 1e6), 1)


INPUTS = ([0.5, -0.5, 0.25], [-0.25, 0.75, 1.0], [-1.0, 0.5, -0.25], [0.5, 0.25, 0.5])


def reference(xv, yv):
    loss = float(np.mean(np.float32(xv) * np.float32(yv)) * np.float32(1e-4))
    shown = round(loss, 4) if sum(xv) > 0 else round(loss * 10.0, 2)
    return shown, round(loss, 0), round(loss * 1e6, 1)


def test_a_rounded_zero_keeps_the_sign_of_the_number():
    static = d2s.to_static(step)
    log, signs = Log(), set()
    for xv in INPUTS:
        for yv in (INPUTS[0], INPUTS[2]):
            x, y = rt.to_tensor(np.float32(xv)), rt.to_tensor(np.float32(yv))
            want, got, ref = step(x, y, log), static(x, y, log), reference(xv, yv)
            for w, g, r in zip(want, got, ref, strict=True):
                assert type(g) is float and repr(g) == repr(w), (xv, yv, want, got)
                assert math.copysign(1.0, g) == math.copysign(1.0, r)
                assert math.isclose(g, r, abs_tol=0.11)  # (float32 vs float64 halves)
            signs.update(math.copysign(1.0, g) for g in got if g == 0.0)
    assert signs == {-1.0, 1.0}  # (both zeros occur)
    assert static.get_traced_count() == 1  # (one program for every path)
