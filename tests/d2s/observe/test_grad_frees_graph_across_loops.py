"""A gradient in a graph loop's body that walks into what was freed before the loop ran (by a
gradient before it, or by the trips of an earlier loop), or, for a loop in another loop's
body, into what an earlier trip of either loop freed, raises eager's "already freed" inside
the call, at its line, on the trip eager raises on, also where the result is detached before
it is returned (issue 33: the converted call returned values there), and never where eager
runs (a fresh leaf per step or per epoch). Inputs take different numbers of trips through
one converted program; the outcome (which call raises, or the values and the input's
gradient) is eager's."""
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


def epochs_of_attacks(x, m, n):
    x_adv = x * 1.0
    k = 0
    while k < m:  # a loop around the attack: its next trip walks what the last one freed
        i = 0
        while i < n:
            x_adv = _step(x_adv)
            i += 1
        k += 1
    return x_adv.detach()


def epochs_from_the_input(x, m, n):
    x_adv = x  # a leaf on the first trip of both loops: nothing freed there
    k = 0
    while k < m:
        i = 0
        while i < n:
            x_adv = _step(x_adv)
            i += 1
        k += 1
    return x_adv.detach()


def fresh_leaf_per_step(x, m, n):  # eager never raises
    x_adv = x.detach()
    k = 0
    while k < m:
        i = 0
        while i < n:
            x_adv.stop_gradient = False
            x_adv = _step(x_adv).detach()
            i += 1
        k += 1
    return x_adv


def fresh_start_per_epoch(x, m, n):  # raises only where an epoch takes two steps
    x_adv = x * 1.0
    k = 0
    while k < m:
        i = 0
        while i < n:
            x_adv = _step(x_adv)
            i += 1
        x_adv = (x_adv * 1.0).detach()
        x_adv.stop_gradient = False
        x_adv = x_adv * 1.0
        k += 1
    return x_adv


class Smoother:
    """A helper whose method takes a gradient after an inner attack, per epoch."""

    def __init__(self, every):
        self.every = every

    def __call__(self, h, m, n):
        k = 0
        while k < m:
            if k % self.every == 0:  # a tensor `if` around the inner loop
                i = 0
                while i < n:
                    h = _step(h)
                    i += 1
            (g,) = rt.grad((h * h).sum(), h)  # walks what the inner trips freed
            h = (h + g).detach() * 1.0
            k += 1
        return h


def smoothed(x, m, n):
    return Smoother(2)(x * 1.0, m, n)


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
    grad = args[0].grad
    return ("ok", None if grad is None else grad.numpy()), out.numpy()


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


NESTED = {  # (m, n) -> where eager raises, from eager runs (None: it returns)
    epochs_of_attacks: {(1, 2), (2, 1), (2, 2)},
    epochs_from_the_input: {(2, 2)},
    fresh_leaf_per_step: set(),
    fresh_start_per_epoch: {(1, 2), (2, 2)},
    smoothed: {(1, 1), (1, 2), (2, 0), (2, 1), (2, 2)},
}


@pytest.mark.parametrize("fn", list(NESTED), ids=lambda f: f.__name__)
def test_loops_in_loops_raise_where_eager_raises_and_nowhere_else(fn):
    static = d2s.to_static(fn)
    for m in range(3):
        for n in range(3):
            got = []
            for f in (fn, static):
                x = rt.to_tensor(X0, stop_gradient=False)
                got.append(_outcome(f, (x, rt.to_tensor(m), rt.to_tensor(n))))
            (eager, e_values), (conv, s_values) = got
            assert eager == conv if eager[0] != "ok" else conv[0] == "ok", (m, n, eager, conv)
            assert (eager[0] == "call") == ((m, n) in NESTED[fn]), (m, n, eager)
            if eager[0] == "ok":
                assert (conv[1] is None) == (eager[1] is None), (m, n)
                if eager[1] is not None:
                    np.testing.assert_allclose(conv[1], eager[1], rtol=1e-6)
            if e_values is not None:
                np.testing.assert_allclose(s_values, e_values, rtol=1e-6)
    assert len(static.program_cache) == 1


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
