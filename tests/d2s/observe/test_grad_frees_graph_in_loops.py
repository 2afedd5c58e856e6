"""`rt.grad` (and in-place writes) inside a graph loop's body or an `if` nested in another
free the graph as eager code's do: a second gradient through a graph freed before it in its
block raises eager's "already freed" error on the runs that take it; a returned value whose
graph a loop trip (a nested branch) freed raises it at `backward()` on the runs where that
block ran, while values the loop computes apart from it keep their gradients. Inputs take
zero, one and several trips through one converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

X0 = np.array([0.5, -1.0, 2.0], "float32")


def _x(x0=X0):
    return rt.to_tensor(x0, stop_gradient=False)


def _error(call, *args):
    try:
        call(*args)
    except RuntimeError as e:
        return str(e).splitlines()[0]
    return None


def _backward(t):
    t.sum().backward()


def penalty_per_trip(x, n):
    last = x * 0.5
    other = x * 3.0
    pen = rt.zeros([])
    i = 0
    while i < n:
        z = x * 2.0
        y = rt.tanh(z)
        (g,) = rt.grad(y.sum(), z)  # frees y's graph on every trip
        pen = pen + (g * g).sum()
        last = y * 1.0
        other = other * 2.0
        i += 1
    return last, other, pen


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_a_loop_trip_frees_what_it_took_the_gradient_through(trips):
    static = d2s.to_static(penalty_per_trip)
    slope = 1 - np.tanh(2 * X0) ** 2
    for fn in (penalty_per_trip, static):
        x = _x()
        last, other, pen = fn(x, rt.to_tensor(trips))
        np.testing.assert_allclose(pen.numpy(), trips * (slope ** 2).sum(), rtol=1e-5)
        assert (last.stop_gradient, other.stop_gradient, pen.stop_gradient) == (
            False, False, True)
        freed = _error(_backward, last)
        assert (freed is not None and "already freed" in freed) == (trips > 0), fn
        other.sum().backward()  # (computed apart from it: its own gradient)
        expected = np.full(3, 3.0 * 2 ** trips) + (0.5 if trips == 0 else 0.0)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def grad_twice_per_trip(x, n):
    acc = x * 0.0
    i = 0
    while i < n:
        z = x * 1.0
        y = rt.sin(z) * 2.0
        (g,) = rt.grad(y.sum(), z)
        (g2,) = rt.grad(y.sum(), z)  # eager: "already freed" on every trip
        acc = acc + g + g2
        i += 1
    return acc


@pytest.mark.parametrize("trips", [0, 2])
def test_a_second_grad_through_a_graph_the_trip_freed_raises_eagers_error(trips):
    static = d2s.to_static(grad_twice_per_trip)
    errors = [_error(lambda fn=fn: fn(_x(), rt.to_tensor(trips)))
              for fn in (grad_twice_per_trip, static)]
    assert errors[0] == errors[1]
    assert (errors[0] is not None and "already freed" in errors[0]) == (trips > 0)


def grad_twice(x):
    y = rt.exp(x)
    (g,) = rt.grad(y.sum(), x)
    (g2,) = rt.grad(y.sum(), x, retain_graph=True)
    return g + g2


def test_a_second_grad_through_a_freed_graph_at_the_top_level_raises():
    errors = [_error(lambda fn=fn: fn(_x())) for fn in (grad_twice, d2s.to_static(grad_twice))]
    assert errors[0] == errors[1] and "already freed" in errors[0]


def grad_in_nested_if(x):
    y = x * 2
    side = x * x
    if x.sum() > 0:  # noqa: SIM102  (an if nested in another is the point)
        if x.max() > 1.5:
            (g,) = rt.grad(y.sum(), x)  # frees y's graph on runs taking both branches
            y = y + g
    return y, side


@pytest.mark.parametrize("x0", [X0, np.array([0.5, 0.25, 1.0], "float32"),
                                np.array([-0.5, -1.0, 2.0], "float32")])
def test_a_grad_under_a_nested_if_frees_on_the_runs_that_take_it(x0):
    static = d2s.to_static(grad_in_nested_if)
    took = x0.sum() > 0 and x0.max() > 1.5
    for fn in (grad_in_nested_if, static):
        x = _x(x0)
        y, side = fn(x)
        np.testing.assert_allclose(y.numpy(), 2 * x0 + 2 * took, rtol=1e-6)
        freed = _error(_backward, y + side)
        assert (freed is not None and "already freed" in freed) == took, fn
        if took:
            side.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * x0 + (0 if took else 2), rtol=1e-6)


def overwrite_in_loop(x, n):
    buf = x * 1.0
    sq = buf * buf  # saves buf for its gradient
    other = x * 4.0
    i = 0
    while i < n:
        buf[0] = 0.0  # eager: sq's backward then sees buf modified in place
        i += 1
    return sq, other, buf


@pytest.mark.parametrize("trips", [0, 2])
def test_an_in_place_write_in_a_loop_body_after_a_read(trips):
    static = d2s.to_static(overwrite_in_loop)
    errors = []
    for fn in (overwrite_in_loop, static):
        x = _x()
        sq, other, _ = fn(x, rt.to_tensor(trips))
        np.testing.assert_allclose(sq.numpy(), X0 * X0, rtol=1e-6)
        errors.append(_error(_backward, sq))
        assert (errors[-1] is not None) == (trips > 0), fn
        other.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full(3, 4.0) + (
            2 * X0 if trips == 0 else 0), rtol=1e-6)
    assert errors[0] == errors[1]


def pgd_from_leaf(x, n):
    x_adv = x
    i = 0
    while i < n:
        loss = (rt.tanh(x_adv) * 2.0).sum()
        (g,) = rt.grad(loss, x_adv)  # frees x_adv's history: eager raises on trip 3
        x_adv = x_adv + 0.1 * g.sign()
        i += 1
    return x_adv


def pgd_from_a_copy(x, n):
    x_adv = x * 1.0
    i = 0
    while i < n:
        loss = (rt.tanh(x_adv) * 2.0).sum()
        (g,) = rt.grad(loss, x_adv)  # eager raises on trip 2: x * 1.0 is freed on trip 1
        x_adv = x_adv + 0.1 * g.sign()
        i += 1
    return x_adv


def pgd_on_even_trips(x, n):
    x_adv = x * 1.0
    i = 0
    while i < n:
        if i % 2 == 0:  # (a tensor `if`: the gradient frees on the trips that take it)
            loss = (rt.tanh(x_adv) * 2.0).sum()
            (g,) = rt.grad(loss, x_adv)
            x_adv = x_adv + 0.1 * g.sign()
        else:
            x_adv = x_adv * 1.0
        i += 1
    return x_adv


def pgd_from_leaf_on_even_trips(x, n):
    x_adv = x
    i = 0
    while i < n:
        if i % 2 == 0:
            loss = (rt.tanh(x_adv) * 2.0).sum()
            (g,) = rt.grad(loss, x_adv)
            x_adv = x_adv + 0.1 * g.sign()
        else:
            x_adv = x_adv * 1.0
        i += 1
    return x_adv


def pgd_when_asked(x, n):
    x_adv = x * 1.0
    if n > 0:  # (a tensor `if` around the loop)
        i = 0
        while i < n:
            loss = (rt.tanh(x_adv) * 2.0).sum()
            (g,) = rt.grad(loss, x_adv)
            x_adv = x_adv + 0.1 * g.sign()
            i += 1
    return x_adv


def truncated_bptt(x, w, n):
    h = x
    i = 0
    total = rt.zeros([3])
    while i < n:
        h = rt.tanh(h * w)
        (g,) = rt.grad(h.sum(), h)  # no h.detach(): the next trip walks into this one
        total = total + g
        i += 1
    return h, total


def _outcome(fn, args):
    """Where eager code (or the converted call) raises: ('call', message), ('backward',
    message), or ('ok', gradient of the first input) after a backward through the first
    result; the returned values besides."""
    try:
        out = fn(*args)
    except RuntimeError as e:
        return ("call", str(e).splitlines()[0]), None
    first = out[0] if isinstance(out, tuple) else out
    values = [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
    try:
        first.sum().backward()
    except RuntimeError as e:
        return ("backward", str(e).splitlines()[0]), values
    return ("ok", args[0].grad.numpy()), values


@pytest.mark.parametrize("fn, expected", [
    (pgd_from_leaf, ["ok", "ok", "backward", "call"]),
    (pgd_from_a_copy, ["ok", "backward", "call", "call"]),
    (pgd_on_even_trips, ["ok", "backward", "backward", "call"]),
    (pgd_when_asked, ["ok", "backward", "call", "call"]),
    (pgd_from_leaf_on_even_trips, ["ok", "ok", "ok", "backward"]),
    (truncated_bptt, ["ok", "backward", "call", "call"])])
def test_a_trip_whose_gradient_walks_what_an_earlier_trip_freed_raises_on_that_trip(
        fn, expected):
    static = d2s.to_static(fn)
    w = rt.to_tensor(np.array([0.5, 1.5, -1.0], "float32"))
    for trips in range(4):
        got = []
        for f in (fn, static):
            x = _x()
            args = (x, rt.to_tensor(trips)) if fn is not truncated_bptt else (
                x, w, rt.to_tensor(trips))
            got.append(_outcome(f, args))
        (eager, e_values), (conv, s_values) = got
        assert eager[0] == conv[0] == expected[trips], (trips, eager, conv)
        if eager[0] == "ok":
            np.testing.assert_allclose(conv[1], eager[1], rtol=1e-6)
        else:
            assert conv[1] == eager[1] and "already freed" in eager[1]
        if e_values is not None:
            assert len(e_values) == len(s_values)
            for e, s in zip(e_values, s_values):
                np.testing.assert_allclose(s, e, rtol=1e-5, atol=1e-6)


def test_the_trip_error_names_the_users_line():
    static = d2s.to_static(pgd_from_a_copy)
    with pytest.raises(RuntimeError) as info:
        static(_x(), rt.to_tensor(3))
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert "already freed" in text
    assert "(g,) = rt.grad(loss, x_adv)" in text and "test_grad_frees_graph_in_loops.py" in text


class Accumulator:
    """A helper object holding a buffer the loop reads, then writes in place, each trip."""

    def __init__(self, x):
        self.buf = x * 1.0

    def step(self, out, x):
        out = out + self.buf * x  # (multiply saves buf for its gradient)
        self.buf[0] = 5.0
        return out


def read_then_written_per_trip(x, n):
    acc = Accumulator(x)
    out = rt.zeros([3])
    i = 0
    while i < n:
        out = acc.step(out, x)
        i += 1
    return out, x * 2.0


def written_under_nested_if(x):
    buf = x * 1.0
    sq = buf * buf
    if x.sum() > 0:  # noqa: SIM102  (an if nested in another is the point)
        if x.max() > 1.5:
            buf[1] = 0.0
    return sq, x * 2.0


@pytest.mark.parametrize("fn, cases", [
    (read_then_written_per_trip, [(0, False), (1, True), (2, True)]),
    (written_under_nested_if, [(np.array([1.0, 2.0, 0.0], "float32"), True),
                               (np.array([1.0, 1.0, 0.0], "float32"), False),
                               (np.array([-1.0, -2.0, 0.0], "float32"), False)])])
def test_a_write_after_a_read_in_a_loop_trip_or_a_nested_if(fn, cases):
    static = d2s.to_static(fn)
    for arg, raises in cases:
        errors, values = [], []
        for f in (fn, static):
            x = _x(X0 if fn is read_then_written_per_trip else arg)
            out, side = f(x, rt.to_tensor(arg)) if fn is read_then_written_per_trip else f(x)
            values.append(out.numpy())
            side.sum().backward()  # (computed apart from the written value)
            np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0), rtol=1e-6)
            errors.append(_error(_backward, out) if not out.stop_gradient else None)
        np.testing.assert_allclose(values[1], values[0], rtol=1e-6)
        assert errors[0] == errors[1]
        assert (errors[0] is not None and "modified in place" in errors[0]) == raises


def freed_then_detached_on_some_runs(x):
    y = x * 2
    (g,) = rt.grad(y.sum(), x)  # frees y's graph
    if x.sum() > 0:
        y = y.detach()  # (then a backward() says it has no gradient path at all)
    return y, g


@pytest.mark.parametrize("x0, message", [
    (np.array([1.0, 2.0, 0.5], "float32"), "stop_gradient=True"),
    (np.array([-1.0, -2.0, 0.5], "float32"), "already freed")])
def test_a_freed_result_a_branch_detached_has_no_gradient_path(x0, message):
    errors = []
    for fn in (freed_then_detached_on_some_runs, d2s.to_static(freed_then_detached_on_some_runs)):
        y, _ = fn(_x(x0))
        assert y.stop_gradient == (message != "already freed")
        errors.append(_error(_backward, y))
    assert errors[0] == errors[1] and message in errors[0]


class Regularised(nn.Layer):
    """A critic whose two optional penalties each take an input gradient of one score."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x, use_gp, use_r1):
        score = rt.tanh(self.fc(x)).sum()
        total = score * 0.0
        if use_gp > 0:  # noqa: SIM102  (a nested branch frees as well)
            if x.sum() > -100.0:
                (g,) = rt.grad(score, x)  # frees the score's graph on these runs
                total = total + ((g.norm(p=2, axis=1) - 1) ** 2).mean()
        if use_r1 > 0:
            (g2,) = rt.grad(score, x)  # eager: "already freed" where the first ran
            total = total + (g2 * g2).sum()
        elif use_gp > 1:
            total = total * 2.0
        return total


@pytest.mark.parametrize("gp, r1", [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0)])
def test_a_gradient_after_one_on_an_earlier_branch_raises_on_the_runs_that_took_it(gp, r1):
    rt.seed(0)
    eager = Regularised()
    layer = Regularised()
    layer.set_state_dict(eager.state_dict())
    static = d2s.to_static(layer)
    x0 = np.array([[1.0, -2.0, 0.5], [0.5, 0.25, -1.0]], "float32")
    got = []
    for fn in (eager, static):
        x = rt.to_tensor(x0, stop_gradient=False)
        got.append(_error(fn, x, rt.to_tensor(gp), rt.to_tensor(r1))
                   or fn(x, rt.to_tensor(gp), rt.to_tensor(r1)).numpy())
    if gp and r1:
        assert got[0] == got[1] and "already freed" in got[0]
    else:
        np.testing.assert_allclose(got[1], got[0], rtol=1e-5, atol=1e-6)


def attack_then_input_gradient(x, n, again):
    x_adv = x * 1.0
    i = 0
    while i < n:
        loss = (rt.tanh(x_adv) * 2.0).sum()
        (g,) = rt.grad(loss, x_adv)
        x_adv = x_adv + 0.1 * g.sign()
        i += 1
    out = x_adv * 3.0
    if again > 0:
        (gx,) = rt.grad(out.sum(), x)  # eager: "already freed" once a trip freed x * 1.0
        out = out + gx
    return out


@pytest.mark.parametrize("trips", [0, 1, 2])
@pytest.mark.parametrize("again", [0, 1])
def test_a_gradient_after_the_loop_through_what_its_trips_freed(trips, again):
    static = d2s.to_static(attack_then_input_gradient)
    got = []
    for fn in (attack_then_input_gradient, static):
        args = (_x(), rt.to_tensor(trips), rt.to_tensor(again))
        got.append(_error(fn, *args) or fn(*args).numpy())
    if (trips, again) in ((1, 1), (2, 0), (2, 1)):  # (trip 2 walks what trip 1 freed)
        assert got[0] == got[1] and "already freed" in got[0]
    else:
        np.testing.assert_allclose(got[1], got[0], rtol=1e-6)
