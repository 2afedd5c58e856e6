"""Issue 12, item 2 follow-up: inside a `try` body (and in the functions it calls), a call
made after an earlier call of the same statement failed at run time does not happen, as in
eager code: `self.a(x) + self.b(x)`, `self.norm(self.check(x))`, `[self.check(v) for v in
xs]`. Its writes to Layer state (buffers, BatchNorm's running statistics) are made only where
the calls before it passed. d2s's own conversion errors are never taken by the user's
`except ValueError` / `except Exception` clauses (eager code never raises them).

Eager vs static through ONE program, over inputs where no call fails, a later call fails, or
an earlier call fails (and a later one would have).
"""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError
from tests.finite_differences import numeric_grad


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


class Gate(rt.nn.Layer):
    """Counts its calls in a buffer and rejects large inputs (a run-time check)."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit
        self.register_buffer("calls", rt.zeros([1]))

    def forward(self, h):
        self.calls = self.calls + 1
        if h.abs().max() > self.limit:
            raise ValueError("activation too large")
        return h * 2.0


class TwoGates(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.first, self.second = Gate(3.0), Gate(5.0)

    def forward(self, x):
        try:
            y = self.first(x) + self.second(x * 2.0)
        except ValueError:
            y = rt.zeros_like(x) - 1.0
        return y


def _state(net):
    return [b.numpy().copy() for b in net.buffers()]


def _run_pair(make, rows):
    eager, static = make(), d2s.to_static(make())
    static.set_state_dict(eager.state_dict())
    for row in rows:
        want, got = eager(_t(row)), static(_t(row))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=str(row))
        for w, g in zip(_state(eager), _state(static), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=str(row))
    assert len(static.forward.program_cache) == 1
    return eager, static


def test_second_call_of_a_statement_does_not_run_after_the_first_failed():
    # passes; second fails (|2x| > 5); first fails (the second would too); passes again
    eager, _ = _run_pair(TwoGates, [[1.0, 1.0], [2.0, 2.9], [4.0, 4.0], [0.5, 0.5]])
    assert eager.first.calls.item() == 4 and eager.second.calls.item() == 3


class CheckThenNorm(rt.nn.Layer):
    """`self.norm(self.check(x))`: BatchNorm's running statistics move only where the check
    passed."""

    def __init__(self):
        super().__init__()
        self.check = Gate(3.0)
        self.norm = rt.nn.BatchNorm1D(2)

    def forward(self, x):
        try:
            out = self.norm(self.check(x))
        except ValueError:
            out = x * 0.0
        return out


def test_outer_call_does_not_run_after_its_argument_failed():
    _run_pair(CheckThenNorm, [[[1.0, 2.0], [0.0, -1.0]], [[9.0, 2.0], [0.0, 1.0]],
                              [[0.5, 0.5], [2.0, -2.0]]])


class PerChunk(rt.nn.Layer):
    """A comprehension of checked calls: items after the failing one are not computed."""

    def __init__(self):
        super().__init__()
        self.gates = rt.nn.LayerList([Gate(4.0), Gate(4.0), Gate(4.0)])

    def forward(self, x):
        try:
            parts = [g(x * float(k + 1)) for k, g in enumerate(self.gates)]
            out = rt.stack(parts).sum(0)
        except ValueError:
            out = -rt.ones_like(x)
        return out


def test_comprehension_items_after_a_failed_item_are_not_computed():
    # all pass; the third fails; the second fails (so the third is never called)
    _run_pair(PerChunk, [[1.0, 1.0], [1.5, 0.0], [2.5, 0.0], [0.1, 0.2]])


def _scale(h):
    if h.sum() < 0:
        raise ArithmeticError("negative mass")
    return h * h


def _shift(h, log):
    log.calls = log.calls + 1
    assert (h < 10).all(), "out of range"
    return h + 1.0


class Helpers(rt.nn.Layer):
    """Plain helpers, one writing Layer state through an argument, nested in a helper."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", rt.zeros([1]))

    def both(self, h):
        return _scale(h) * _shift(h, self)  # the helper's own statement: same rule

    def forward(self, x):
        try:
            y = self.both(x).sum()
        except ArithmeticError:
            y = x.sum() * 0.0 - 1.0
        except AssertionError:
            y = x.sum() * 0.0 - 2.0
        return y


def test_calls_in_a_helper_converted_for_the_try():
    # passes; _shift's assertion fails; _scale fails first (so _shift's write never happens)
    _run_pair(Helpers, [[1.0, 2.0], [12.0, 1.0], [-12.0, 1.0], [0.5, 0.5]])


def test_gradients_where_every_call_passes():
    net = d2s.to_static(TwoGates())
    for row in ([1.0, 0.5], [-1.0, 2.0]):
        x = _t(row)
        x.stop_gradient = False
        net(x).sum().backward()
        want = numeric_grad(lambda a: float(TwoGates()(rt.to_tensor(a)).sum().item()),
                            np.asarray(row, "float64"), eps=1e-3)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


# -- d2s's own errors are not the user's -----------------------------------------------------

def keys_in_a_branch(x):
    d = {}
    try:
        if x.sum() > 0:
            d["pos"] = x  # a key set on some paths only: its presence is a graph value
        y = x * 2.0
        found = d.get("pos", "none")  # a str default: a value of two types, by the run
    except ValueError:
        y, found = x * 0.0, None
    return y, found


def everything_caught(x):
    cache = []
    try:
        if x.mean() > 0:
            cache.append(None)  # a list of Nones growing on a tensor path: no array holds them
        out = x + float(len(cache))
    except Exception:
        out = x
    return out


@pytest.mark.parametrize("fn", [keys_in_a_branch, everything_caught])
def test_a_conversion_error_is_not_caught_by_the_users_except(fn):
    with pytest.raises(ConversionError) as info:
        d2s.to_static(fn)(_t([1.0, 2.0]))
    assert "test_try_after_failure.py" in str(info.value)


def _logged_net():
    seen = {}

    class Logged(Gate):
        def forward(self, h):
            seen["last"] = h  # a dict key set only on the path where the call runs
            return super().forward(h)

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.a, self.b = Gate(3.0), Logged(5.0)

        def forward(self, x):
            try:
                y = self.a(x) + self.b(x)
            except ValueError:
                y = x
            return y
    return Net(), seen


def test_a_dict_key_set_only_where_the_call_runs_is_there_after_the_runs_that_set_it():
    """A closure's dict given a key by a call that runs only where the call before it did
    not raise: the key has a presence flag, and after each call the dict holds it where the
    run set it (and keeps what it held elsewhere), as eager code leaves it."""
    (eager, seen_e), (net, seen_s) = _logged_net(), _logged_net()
    static = d2s.to_static(net)
    for v in ([4.0, 5.0], [1.0, 2.0], [9.0, 9.0], [1.0, 1.0]):  # raises, runs, ...
        np.testing.assert_allclose(static(_t(v)).numpy(), eager(_t(v)).numpy())
        assert {k: t.tolist() for k, t in seen_s.items()} == {
            k: t.tolist() for k, t in seen_e.items()}
        assert all(type(t) is rt.Tensor for t in seen_s.values())


def test_a_closure_list_grown_by_a_conditional_call_gets_eagers_items():
    """The call runs only where the one before it did not fail: the list it appends to (a
    closure variable of a Layer's method) grows by a tensor condition, so it is a tensor
    array in the program, and after each call holds the Tensors eager code holds."""
    def build(trace):
        class Logged(Gate):
            def forward(self, h):
                trace.append(h)
                return super().forward(h)

        class Net(rt.nn.Layer):
            def __init__(self):
                super().__init__()
                self.a, self.b = Gate(3.0), Logged(5.0)

            def forward(self, x):
                try:
                    y = self.a(x) + self.b(x)
                except ValueError:
                    y = x
                return y
        return Net()

    eager_trace, static_trace = [], []
    eager, static = build(eager_trace), d2s.to_static(build(static_trace))
    for row in ([1.0, 2.0], [4.0, 1.0], [1.0, 1.0]):  # the second fails in self.a
        np.testing.assert_allclose(static(_t(row)).numpy(), eager(_t(row)).numpy())
        assert len(static_trace) == len(eager_trace)
        for s, e in zip(static_trace, eager_trace, strict=True):
            assert type(s) is rt.Tensor
            np.testing.assert_allclose(s.numpy(), e.numpy())
    assert len(eager_trace) == 2
    np.testing.assert_allclose(static.b.calls.numpy(), [2.0])


class GateThenExpert(rt.nn.Layer):
    """`self.gate(x) + self.experts[i](x)` with a tensor `i`: the expert switch (and its
    run-time range check) runs only where the gate passed."""

    def __init__(self):
        super().__init__()
        self.gate = Gate(3.0)
        self.experts = rt.nn.LayerList([rt.nn.Linear(2, 2) for _ in range(2)])

    def forward(self, x, i):
        try:
            y = self.gate(x) + self.experts[i](x)
        except ValueError:
            y = x * 0.0
        return y


def test_a_layer_switch_after_a_failed_call_does_not_check_its_index():
    eager, static = GateThenExpert(), d2s.to_static(GateThenExpert())
    static.set_state_dict(eager.state_dict())
    # passes; the gate fails; the gate fails and the index is out of range (eager: the
    # gate's ValueError, caught); passes; the index out of range: IndexError from both
    for row, i in (([1.0, 1.0], 0), ([5.0, 1.0], 1), ([5.0, 1.0], 7), ([1.0, 2.0], 1)):
        want, got = eager(_t(row), rt.to_tensor(i)), static(_t(row), rt.to_tensor(i))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    for m in (eager, static):
        with pytest.raises(IndexError):
            m(_t([1.0, 1.0]), rt.to_tensor(5))
    assert len(static.forward.program_cache) == 1


def _over(h, limit):
    if h.max() > limit:
        raise ValueError(f"over {limit}")
    return h


class CheckedTwice(rt.nn.Layer):
    def forward(self, x):
        try:
            y = _over(x, 5.0)
        except ValueError:
            y = _over(x * 0.1, 0.6)  # the clause's own check: not caught by this `try`
        else:
            y = _over(y * 2.0, 8.0) + 1.0  # neither is the `else`'s
        return y


def unread_exception_name(x):
    try:
        return CheckedTwice()(x)
    except ValueError as err:  # bound, never read: any of the three errors may be caught
        return x * 0.0 - 7.0


def test_except_as_name_that_is_not_read_catches_any_of_several_errors():
    static = d2s.to_static(unread_exception_name)
    # passes; the else's check; the clause's check passes; the clause's check fails
    for row in ([1.0, 1.0], [4.5, 1.0], [5.5, 1.0], [7.0, 1.0]):
        want, got = unread_exception_name(_t(row)), static(_t(row))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, err_msg=str(row))
    assert len(static.program_cache) == 1
