"""A gradient in a graph loop's body that walks into what was freed before the loop ran (by a
gradient before it, or by the trips of an earlier loop) raises eager's "already freed" inside
the call, at its line, on the trip eager raises on, also where the result is detached before
it is returned (issue 33: the converted call returned values there). Inputs take different
numbers of trips through one converted program; the outcome (which call raises, or the
values and the input's gradient) is eager's."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

X0 = np.array([0.5, -1.0, 2.0], "float32")


def _step(x_adv):
    loss = (rt.tanh(x_adv) * 2.0).sum()
    (g,) = rt.grad(loss, x_adv)  # frees x_adv's graph
    return x_adv + 0.1 * g.sign()


def warm_start_then_attack(x, n):
    x_adv = x * 1.0
    (g0,) = rt.grad((x_adv * 2.0).sum(), x_adv)  # frees x * 1.0 before the loop
    x_adv = x_adv + g0
    i = 0
    while i < n:
        x_adv = _step(x_adv)  # eager raises on the first trip
        i += 1
    return x_adv.detach()


def two_attacks(x, n, m):
    x_adv = x * 1.0
    i = 0
    while i < n:
        x_adv = _step(x_adv)
        i += 1
    j = 0
    while j < m:  # its first trip walks what the first loop's trips freed
        x_adv = _step(x_adv)
        j += 1
    return x_adv.detach()


def restarts(x, n):
    x_adv = x * 1.0
    for _ in range(2):  # a Python loop: two graph loops, one after the other
        i = 0
        while i < n:
            x_adv = _step(x_adv)
            i += 1
    return x_adv


def attack_on_a_branch(x, n, warm):
    x_adv = x * 1.0
    if warm > 0:  # a tensor `if`: its gradient frees x * 1.0 on the runs that take it
        (g0,) = rt.grad((x_adv * 3.0).sum(), x_adv)
        x_adv = x_adv + g0
    i = 0
    while i < n:
        x_adv = _step(x_adv)
        i += 1
    return x_adv.detach()


def _outcome(fn, args):
    """('call', message) where the call raises, ('backward', message) where a backward
    through the result does, else ('ok', gradient of x); and the returned values."""
    try:
        out = fn(*args)
    except RuntimeError as e:
        return ("call", str(e).splitlines()[0]), None
    try:
        out.sum().backward()
    except RuntimeError as e:
        return ("backward", str(e).splitlines()[0]), out.numpy()
    return ("ok", args[0].grad.numpy()), out.numpy()


def _numpy_attack(x, trips):
    for _ in range(trips):
        x = x + 0.1 * np.sign(2.0 * (1.0 - np.tanh(x) ** 2))
    return x


def _where(trips_before: int, trips: int, freed_before: bool) -> str:
    """Eager's outcome: a trip raises in the call where it walks a graph freed before it (by
    a gradient before the loop, or by an earlier trip: from the second trip of all on); else
    the result comes back (a backward through it is eager's, if anything raises there)."""
    return "call" if trips and (freed_before or trips_before + trips >= 2) else "returned"


# per function: (loop counts, eager's outcome, trips run and what was added before them)
CASES = {
    warm_start_then_attack: [((n,), _where(0, n, True), n, 2.0) for n in range(3)],
    two_attacks: [((n, m), _where(n, m, False) if m else _where(0, n, False), n + m, 0.0)
                  for n in range(3) for m in range(3)],
    restarts: [((n,), _where(0, 2 * n, False), 2 * n, 0.0) for n in range(3)],
    attack_on_a_branch: [((n, w), _where(0, n, bool(w)), n, 3.0 * w)
                         for n in range(3) for w in (0, 1)],
}


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_a_gradient_through_what_was_freed_before_the_loop_raises_in_the_call(fn):
    static = d2s.to_static(fn)
    for counts, where, trips, added in CASES[fn]:
        got = []
        for f in (fn, static):
            x = rt.to_tensor(X0, stop_gradient=False)
            got.append(_outcome(f, (x, *map(rt.to_tensor, counts))))
        (eager, e_values), (conv, s_values) = got
        assert eager[0] == conv[0] and (eager[0] == "call") == (where == "call"), (
            counts, eager, conv)
        if where == "call":
            assert conv[1] == eager[1] and "already freed" in eager[1]
        else:
            assert conv[1].__class__ is eager[1].__class__
            if eager[0] == "ok":
                np.testing.assert_allclose(conv[1], eager[1], rtol=1e-6)
            else:
                assert conv[1] == eager[1]
            np.testing.assert_allclose(s_values, e_values, rtol=1e-6)
            np.testing.assert_allclose(e_values, _numpy_attack(X0 + added, trips), rtol=1e-6)
    assert len(static.program_cache) == 1


def test_the_error_names_the_users_line():
    static = d2s.to_static(warm_start_then_attack)
    with pytest.raises(RuntimeError) as info:
        static(rt.to_tensor(X0, stop_gradient=False), rt.to_tensor(1))
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert "already freed" in text
    assert "(g,) = rt.grad(loss, x_adv)" in text and "test_grad_frees_graph_across" in text
