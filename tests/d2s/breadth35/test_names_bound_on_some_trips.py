"""Names first bound inside a graph loop that a trip may find unbound (issue 35; AutoGraph's
loop_initializing_variant_variable): `for i in range(n_tensor): if i == 0: level = x / else:
level = level + 1` reads `level` on later trips only; `if x[i] > 0: last = x[i] * 2` binds
`last` on some trips only. The loop carries an "is bound" flag beside the name
(`operators/loop_bound.py`): a trip that reads it unbound raises eager's `UnboundLocalError`
when the program runs, at the user's line, and so does a read after the loop where no trip
bound it. Before, the first form was refused at conversion, and the second returned the zero
placeholder where eager raises (silent). One program serves every input here; gradients
match eager's."""
import numpy as np
import pytest

import d2s
import runtime as rt

UNBOUND = "cannot access local variable '{}' where it is not associated with a value"


def level_from_the_first_trip(x, n):
    for i in range(n):
        if i == 0:
            level = x * 2.0
        else:
            level = level + x
    return level


def level_read_before_it_is_bound(x, n):
    for i in range(n):
        if i == 1:
            level = x
        else:
            level = level + 1.0
    return level


def last_positive(x, n):
    for i in range(n):
        if x[i] > 0:
            last = x[i] * 2.0
    return last


class Differences(rt.nn.Layer):
    """A helper-style state: the previous row, bound on the first trip, in a method."""

    def __init__(self):
        super().__init__()
        self.scale = 0.5

    def forward(self, x, n):
        total = rt.zeros_like(x[0])
        for i in range(n):
            if i == 0:
                prev = x[i]
            else:
                total = total + (x[i] - prev) * self.scale
                prev = x[i]
        return total


def _reference(fn, x, n):
    """NumPy: the eager semantics, None where eager raises UnboundLocalError."""
    if fn is level_from_the_first_trip:
        return None if n == 0 else x * 2.0 + (n - 1) * x
    if fn is level_read_before_it_is_bound:
        return None
    if fn is last_positive:
        kept = [v * 2.0 for v in x[:n] if v > 0]
        return np.float32(kept[-1]) if kept else None
    return sum((x[i] - x[i - 1]) * 0.5 for i in range(1, n)) if n else np.zeros_like(x[0])


CASES = {
    level_from_the_first_trip: [([1.0, 2.0], 3), ([1.0, -2.0], 1), ([0.5, 0.5], 0)],
    level_read_before_it_is_bound: [([1.0, 2.0], 3), ([1.0, 2.0], 0)],
    last_positive: [([1.0, -1.0, 2.0], 3), ([-1.0, -2.0, 3.0], 2), ([-1.0, 2.0, 3.0], 3),
                    ([1.0, 2.0, 3.0], 0)],
}


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_eager_static_and_numpy_agree_on_every_path(fn):
    converted = d2s.to_static(fn)
    name = "last" if fn is last_positive else "level"
    for data, n in CASES[fn]:
        x = np.array(data, np.float32)
        want = _reference(fn, x, n)
        if want is None:
            with pytest.raises(UnboundLocalError, match=UNBOUND.format(name)):
                fn(rt.to_tensor(x, stop_gradient=False), rt.to_tensor(n))
            with pytest.raises(UnboundLocalError, match=UNBOUND.format(name)) as e:
                converted(rt.to_tensor(x, stop_gradient=False), rt.to_tensor(n))
            notes = "".join(getattr(e.value, "__notes__", []))
            assert "level = level + 1.0" in notes or "for i in range(n):" in notes
            continue
        xe = rt.to_tensor(x, stop_gradient=False)
        xs = rt.to_tensor(x, stop_gradient=False)
        eager, static = fn(xe, rt.to_tensor(n)), converted(xs, rt.to_tensor(n))
        np.testing.assert_allclose(static.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(eager.numpy(), want, rtol=1e-6)
        assert static.dtype == eager.dtype and static.shape == eager.shape
        assert static.stop_gradient == eager.stop_gradient
        ge, = rt.grad(eager.sum(), xe)
        gs, = rt.grad(static.sum(), xs)
        np.testing.assert_allclose(gs.numpy(), ge.numpy(), rtol=1e-6)
    assert len(converted.program_cache) == 1  # (inputs that need a gradient: one key)


def test_a_read_before_any_trip_bound_it_names_the_users_line():
    converted = d2s.to_static(level_read_before_it_is_bound)
    with pytest.raises(UnboundLocalError) as e:
        converted(rt.to_tensor(np.ones(2, np.float32)), rt.to_tensor(3))
    assert "level = level + 1.0" in "".join(e.value.__notes__)


def test_a_layer_keeps_the_previous_row_from_the_first_trip():
    eager_layer, static_layer = Differences(), Differences()
    static = d2s.to_static(static_layer)
    rows = np.array([[1.0, 2.0], [3.0, 1.0], [0.5, 4.0], [2.0, 2.0]], np.float32)
    for n in (4, 1, 0, 2):
        want = _reference(Differences, rows, n)
        got = static(rt.to_tensor(rows), rt.to_tensor(n))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(eager_layer(rt.to_tensor(rows), rt.to_tensor(n)).numpy(),
                                   want, rtol=1e-6)
    assert static.forward.get_traced_count() == 1
