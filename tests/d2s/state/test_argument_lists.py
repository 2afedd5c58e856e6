"""A list the caller passes in is the caller's: eager code's appends land in it. When its
length would depend on a tensor (appended in one branch of a tensor `if`, or in a graph loop),
one program cannot grow the caller's Python list, so the call is refused at the user's line
(it used to leave the caller's list unchanged: a silent wrong result, since the caller's own
variable is invisible to the alias check). Changes of a fixed shape still reach it."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import t


def log_big(x, seen):
    if x.sum() > 2:
        seen.append(x)
    return x * 2


def log_steps(x, seen):
    i = rt.zeros([])
    while i < x.sum():
        seen.append(x * i)
        i = i + 1
    return x


def log_both(x, seen):
    if x.sum() > 2:
        seen.append(x)
    else:
        seen.append(-x)
    seen[0] = seen[0] + 1.0
    return x


@pytest.mark.parametrize("fn", [log_big, log_steps])
@pytest.mark.parametrize("start", [[], [[5.0, 5.0]]])
def test_a_list_argument_growing_by_a_tensor_condition_is_refused(fn, start):
    seen = [t(v) for v in start]
    with pytest.raises(d2s.ConversionError, match="caller's list") as info:
        d2s.to_static(fn)(t([4.0, 1.0]), seen)
    assert "test_argument_lists.py" in str(info.value)
    assert len(seen) == len(start)  # (nothing half-written)


def test_a_list_argument_changed_the_same_way_on_every_path_sees_each_change():
    sf = d2s.to_static(log_both)
    eager_seen, static_seen = [], []
    for xv in ([4.0, 1.0], [0.5, 0.5], [3.0, 3.0]):
        log_both(t(xv), eager_seen)
        sf(t(xv), static_seen)
    want = [np.array([4.0, 1.0]) + 3.0, -np.array([0.5, 0.5]), np.array([3.0, 3.0])]
    for e, s, w in zip(eager_seen, static_seen, want, strict=True):
        np.testing.assert_allclose(e.numpy(), w)
        np.testing.assert_allclose(s.numpy(), w)
    assert len(static_seen) == 3 and all(type(v) is rt.Tensor for v in static_seen)
