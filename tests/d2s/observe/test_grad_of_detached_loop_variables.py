"""`rt.grad` in a graph loop's body through a loop variable that the body detaches (issue 33,
the gap of session 20): `xa = (xa - lr * g).detach()` gives `xa` a gradient path on the first
trip only, so eager `rt.grad(loss, xa)` raises "backward() on a tensor with
stop_gradient=True" on the second; the converted call computed a gradient there. The loop now
carries the variable's per-trip flag and the gradient raises eager's error, at the user's
line, on the trips eager raises on; where the loss also reaches a parameter, eager's "input
... is not used" error for the detached input. Zero to three trips through one converted
program."""
import numpy as np
import pytest

import d2s
import runtime as rt

X0 = np.array([0.5, -1.0, 2.0], "float32")


def descent_detached(x, n):
    xa = x * 1.0
    i = 0
    while i < n:
        loss = (xa * xa).sum()
        (g,) = rt.grad(loss, xa)  # eager: raises from the second trip on
        xa = (xa - 0.1 * g).detach()
        i += 1
    return xa


def detached_on_odd_trips(x, n):
    xa = x * 1.0
    i = 0
    while i < n:
        loss = (rt.tanh(xa) * 2.0).sum()
        (g,) = rt.grad(loss, xa, retain_graph=True)
        xa = xa - 0.1 * g
        if i % 2 == 1:
            xa = xa.detach()
        i += 1
    return xa


class Refiner(rt.nn.Layer):
    """The loss reaches a parameter too: it has a gradient path on every trip."""

    def __init__(self):
        super().__init__()
        self.scale = self.create_parameter([3], default_initializer=rt.nn.initializer.Constant(0.5))

    def forward(self, x, n):
        xa = x * 1.0
        i = 0
        while i < n:
            loss = (xa * self.scale).sum()
            (g,) = rt.grad(loss, xa)
            xa = (xa - 0.1 * g).detach()
            i += 1
        return xa * self.scale


def _outcome(fn, args):
    try:
        out = fn(*args)
    except RuntimeError as e:
        return ("call", str(e).splitlines()[0]), None
    values = out.numpy()
    try:
        out.sum().backward()
    except RuntimeError as e:
        return ("backward", str(e).splitlines()[0]), values
    grad = args[0].grad
    return ("ok", None if grad is None else grad.numpy()), values


@pytest.mark.parametrize("fn, expected", [
    (descent_detached, ["ok", "backward", "call", "call"]),
    (detached_on_odd_trips, ["ok", "ok", "backward", "call"])])
def test_a_gradient_through_a_variable_an_earlier_trip_detached_raises_eagers_error(
        fn, expected):
    static = d2s.to_static(fn)
    for trips in range(4):
        got = []
        for f in (fn, static):
            x = rt.to_tensor(X0, stop_gradient=False)
            got.append(_outcome(f, (x, rt.to_tensor(trips))))
        (eager, e_values), (conv, s_values) = got
        assert eager[0] == conv[0] == expected[trips], (trips, eager, conv)
        if eager[0] == "ok":
            np.testing.assert_allclose(conv[1], eager[1], rtol=1e-6)
        else:
            assert conv[1] == eager[1] and "stop_gradient=True" in eager[1]
        if e_values is not None:
            np.testing.assert_allclose(s_values, e_values, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def test_the_error_names_the_users_line():
    static = d2s.to_static(descent_detached)
    with pytest.raises(RuntimeError) as info:
        static(rt.to_tensor(X0, stop_gradient=False), rt.to_tensor(3))
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert "stop_gradient=True" in text
    assert "(g,) = rt.grad(loss, xa)" in text
    assert "test_grad_of_detached_loop_variables.py" in text


@pytest.mark.parametrize("requires, expected", [
    (False, ["ok", "call", "call", "call"]),  # (no gradient path on any trip)
    (True, ["ok", "ok", "call", "call"])])
def test_an_input_without_a_path_on_the_trip_raises_eagers_unused_input_error(
        requires, expected):
    """The loss reaches a parameter on every trip (no "stop_gradient=True" error), but from the
    second trip on `xa` has no gradient path: eager's `rt.grad(loss, xa)` raises "input 0 ...
    is not used", as the converted call now does; the parameter's gradient agrees where
    both run."""
    eager = Refiner()
    static = d2s.to_static(Refiner())
    static.set_state_dict(eager.state_dict())
    kinds = []
    for trips in range(4):
        outcomes = []
        for layer in (eager, static):
            try:
                out = layer(rt.to_tensor(X0, stop_gradient=not requires), rt.to_tensor(trips))
            except RuntimeError as e:
                outcomes.append(("call", str(e).splitlines()[0]))
                continue
            out.sum().backward()
            outcomes.append(("ok", out.numpy(), layer.scale.grad.numpy()))
            layer.clear_gradients()
        want, got = outcomes
        assert got[0] == want[0]
        kinds.append(want[0])
        if want[0] == "ok":
            np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
            np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
        else:
            assert got[1] == want[1] and "is not used to compute the outputs" in want[1]
    assert kinds == expected
