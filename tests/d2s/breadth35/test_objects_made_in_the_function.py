"""A plain object the converted function makes itself (a loss scaler, a metric accumulator)
whose methods read and change its fields, under a tensor `if` too: the values were right, but
the guards recorded the fields of the object the trace made, which the trace itself changed,
so every call traced again (one program per call; corpus case
wild3_training.amp_unscale_and_update). Such an object is made anew on every call: its own
fields are not guarded, and what it holds from outside (a config passed to it) still is."""
import numpy as np

import d2s
import runtime as rt


class LossScaler:
    def __init__(self, init_scale=8.0, growth_interval=2):
        self.scale = init_scale
        self.growth_interval = growth_interval
        self.growth_tracker = 0

    def update(self, found_inf):
        if found_inf:
            self.scale = self.scale * 0.5
            self.growth_tracker = 0
        else:
            self.growth_tracker += 1
            if self.growth_tracker == self.growth_interval:
                self.scale = self.scale * 2.0
                self.growth_tracker = 0


def scales_after(grads):
    scaler = LossScaler()
    for g in grads:
        scaler.update(rt.logical_not(rt.isfinite(g).all()))
    return scaler.scale, scaler.growth_tracker


def _numpy(grads):
    scale, tracker = 8.0, 0
    for g in grads:
        if not np.isfinite(g).all():
            scale, tracker = scale * 0.5, 0
        else:
            tracker += 1
            if tracker == 2:
                scale, tracker = scale * 2.0, 0
    return scale, tracker


GRAD_SETS = [[[1.0, 2.0], [3.0, 4.0]], [[1.0, np.inf], [3.0, 4.0]], [[1.0, 2.0], [np.nan, 1.0]],
             [[np.inf, 1.0], [np.inf, 1.0]]]


def test_one_program_serves_every_path_of_the_scaler():
    static = d2s.to_static(scales_after)
    seen = set()
    for grads in GRAD_SETS:
        arrays = [np.array(g, np.float32) for g in grads]
        expected = _numpy(arrays)
        seen.add(expected)
        for fn in (scales_after, static):
            got = fn([rt.to_tensor(a) for a in arrays])
            assert len(got) == len(expected)
            assert [float(v) for v in got] == list(expected)
    assert len(seen) == 4, "the inputs take different paths"
    assert len(static.program_cache) == 1


class Config:
    factor = 2.0


class Scaler:
    def __init__(self, cfg):
        self.cfg = cfg

    def apply(self, x):
        return x * self.cfg.factor


CFG = Config()


def scaled_by_config(x):
    return Scaler(CFG).apply(x)


def test_what_a_made_object_holds_from_outside_is_still_guarded():
    static = d2s.to_static(scaled_by_config)
    x = rt.to_tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(static(x).numpy(), [2.0, 4.0])
    CFG.factor = 3.0
    try:
        np.testing.assert_allclose(static(x).numpy(), [3.0, 6.0])
        np.testing.assert_allclose(scaled_by_config(x).numpy(), [3.0, 6.0])
        assert len(static.program_cache) == 2
    finally:
        CFG.factor = 2.0
