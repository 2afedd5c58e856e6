"""A `collections.deque` changed inside a tensor `if` or a graph loop (n-step returns, a
sliding window of recent rewards cleared at episode ends). The mutation log did not follow
deques, so the trace's `append`/`clear` ran once, as Python, whatever the run decided: the
`window.clear()` under `if done > 0:` emptied the window on every step, and an n-step return
of [1, 1.5, 1.75, 1, 1.5] came back [1, 1, 1, 1, 1] with `len(window)` 0 (silent). Now such a
deque is refused at the user's `if` / loop, naming it; a deque changed only by Python-decided
code converts as before."""
from collections import deque

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def n_step_returns(rewards, dones, n, gamma):
    window = deque(maxlen=n)
    out = []
    for r, d in zip(rewards, dones):
        window.append(r)
        g = 0.0
        for k, rk in enumerate(window):
            g = g + (gamma ** k) * rk
        out.append(g)
        if d > 0:
            window.clear()
    return rt.stack(out), len(window)


def recent_until_threshold(x, limit):
    recent = deque([x], maxlen=2)
    i = rt.to_tensor(1)
    while recent[-1].sum() < limit:
        recent.append(recent[-1] * 2.0)
        i += 1
    return recent[-1], i


def _np_n_step(rewards, dones, n, gamma):
    window, out = [], []
    for r, d in zip(rewards, dones):
        window = (window + [r])[-n:]
        out.append(sum(gamma ** k * v for k, v in enumerate(window)))
        if d > 0:
            window = []
    return np.asarray(out, np.float32), len(window)


def _line(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if text in s)


def test_deque_cleared_under_a_tensor_if_is_refused_at_the_if():
    rewards, dones = rt.to_tensor([1.0, 1, 1, 1, 1]), rt.to_tensor([0.0, 0, 1, 0, 0])
    want, want_len = n_step_returns(rewards, dones, 3, 0.5)
    ref, ref_len = _np_n_step([1.0] * 5, [0, 0, 1, 0, 0], 3, 0.5)
    np.testing.assert_allclose(want.numpy(), ref)
    assert want_len == ref_len == 2
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(n_step_returns)(rewards, dones, 3, 0.5)
    text = assert_at_user_line(info.value, __file__, _line(n_step_returns, "if d > 0:"))
    assert "window is a collections.deque" in text and "Use a list" in text


def test_deque_appended_in_a_graph_while_is_refused_at_the_while():
    x = rt.to_tensor([1.0, 1.0])
    want, steps = recent_until_threshold(x, 10.0)
    assert want.numpy().tolist() == [8.0, 8.0] and int(steps) == 4
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(recent_until_threshold)(x, 10.0)
    text = assert_at_user_line(info.value, __file__, _line(recent_until_threshold, "while"))
    assert "recent is a collections.deque" in text


def test_deque_changed_by_python_decided_code_converts():
    """The same function with Python `dones`: every change is decided at trace time."""
    static = d2s.to_static(n_step_returns)
    for dones in ([0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 1, 0, 0, 1]):
        rewards = rt.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])
        want, want_len = n_step_returns(rewards, dones, 3, 0.5)
        got, got_len = static(rewards, dones, 3, 0.5)
        ref, ref_len = _np_n_step([1.0, 2, 3, 4, 5], dones, 3, 0.5)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy())
        np.testing.assert_allclose(got.numpy(), ref)
        assert type(got_len) is int and got_len == want_len == ref_len
