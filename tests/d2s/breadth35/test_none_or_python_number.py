"""A value that is None on some runs and a Python number (`.item()`, `float(t)`, `int(t)`,
`bool(t)`, `sum(floats) / len(floats)`) on others, chosen by a tensor `if` or a conditional
expression: RL episode statistics (`mean_ret = sum(rets) / len(rets) if rets else None`), a
best score kept only when a check passes, a field left None. A None beside a *tensor* already
converted (`none_or_tensor`); beside a value standing for a Python number the conversion
refused ("is a tensor in the if branch and None in the else branch ... one program value
cannot be None for some inputs only"). Now the call gives None exactly where eager has None
and eager's Python number (int, float or bool) elsewhere; a use of the None raises at the
user's line."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def episode_statistics(rewards, dones):
    episode_returns, ep_ret = [], 0.0
    for r, d in zip(rewards, dones):
        ep_ret += float(r)
        if d:
            episode_returns.append(ep_ret)
            ep_ret = 0.0
    mean_ret = sum(episode_returns) / len(episode_returns) if episode_returns else None
    return episode_returns, mean_ret


def best_if_positive(x):
    if x.mean() > 0:
        best = float(x.max())
    else:
        best = None
    n = int(x.sum()) if x.mean() > 0 else None
    return {"best": best, "n": n, "big": bool(x.max() > 1) if x.mean() > 0 else None}


class Tracker:
    def __init__(self):
        self.last = None


def track(x, tracker):
    if x.mean() > 0:
        tracker.last = x.mean().item()
    m = x.max().item() if x.mean() > 0 else None
    if m is not None:
        return x * m
    return x


def use_of_none(x):
    m = x.max().item() if x.mean() > 0 else None
    return m + 1


def _np_stats(rewards, dones):
    rets, ep = [], 0.0
    for r, d in zip(rewards, dones):
        ep += float(r)
        if d:
            rets.append(ep)
            ep = 0.0
    return rets, (sum(rets) / len(rets) if rets else None)


def _same_python(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same_python(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same_python(g, w)
    elif want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("rewards,dones", [([1.0, 2.0, 0.5, 3.0], [0.0, 1.0, 0.0, 1.0]),
                                           ([1.0, 1.0], [0.0, 0.0]), ([5.0], [1.0])])
def test_mean_of_finished_episodes_or_none(rewards, dones):
    static = d2s.to_static(episode_statistics)
    args = (rt.to_tensor(rewards), rt.to_tensor(dones))
    want, got = episode_statistics(*args), static(*args)
    _same_python(want, _np_stats(rewards, dones))
    _same_python(got, want)


@pytest.mark.parametrize("v", [[1.0, 2.0], [0.2, 0.4], [-1.0, -2.0]])
def test_int_float_bool_or_none_in_one_program(v):
    static = d2s.to_static(best_if_positive)
    want, got = best_if_positive(rt.to_tensor(v)), static(rt.to_tensor(v))
    _same_python(got, want)
    assert len(static.program_cache) == 1


@pytest.mark.parametrize("v", [[1.0, 3.0], [-1.0, -2.0]])
def test_attribute_and_is_not_none_test(v):
    static = d2s.to_static(track)
    t1, t2 = Tracker(), Tracker()
    want, got = track(rt.to_tensor(v), t1), static(rt.to_tensor(v), t2)
    _same_python(t2.last, t1.last)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_a_use_of_the_none_raises_at_the_users_line():
    static = d2s.to_static(use_of_none)
    assert static(rt.to_tensor([1.0, 2.0])) == use_of_none(rt.to_tensor([1.0, 2.0])) == 3.0
    with pytest.raises(TypeError):
        use_of_none(rt.to_tensor([-1.0]))
    with pytest.raises(TypeError) as info:
        static(rt.to_tensor([-1.0]))
    line = use_of_none.__code__.co_firstlineno + 2
    assert "is None on this run" in assert_at_user_line(info.value, __file__, line)
