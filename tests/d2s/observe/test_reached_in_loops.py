"""Which parameters get a gradient when a parameter is read only inside a graph loop: a loop
that ran zero times on this call (`for _ in range(steps)` with a tensor `steps` of 0, a
refinement `while` whose condition is false at once) leaves it `.grad is None`, as eager; a
loop that ran gives it its gradient. 0, 1 and 3 trips run through ONE converted Layer, and
gradients are checked against finite differences of a NumPy reference (issue 33)."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


class TinyRNN(rt.nn.Layer):
    """An RNN-like stack: the cell runs `steps` times (a tensor: one program for all)."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 4)
        self.cell = rt.nn.Linear(4, 4)
        self.head = rt.nn.Linear(4, 1)

    def forward(self, x, steps):
        h = rt.tanh(self.embed(x))
        for _ in range(steps):
            h = rt.tanh(self.cell(h) + h)
        return (self.head(h) ** 2).mean()


def _rnn_reference(p, x, steps):
    h = np.tanh(x @ p["embed.weight"] + p["embed.bias"])
    for _ in range(steps):
        h = np.tanh(h @ p["cell.weight"] + p["cell.bias"] + h)
    return ((h @ p["head.weight"] + p["head.bias"]) ** 2).mean()


class Refiner(rt.nn.Layer):
    """Refines its estimate until every entry is within 1 (zero trips for small inputs)."""

    def __init__(self):
        super().__init__()
        self.proj = rt.nn.Linear(3, 3)
        self.correct = rt.nn.Linear(3, 3)

    def forward(self, x):
        y = self.proj(x)
        while y.abs().max() > 1.0:
            y = 0.5 * y + 0.1 * rt.tanh(self.correct(y))
        return (y * y).mean()


def _refiner_trips(p, x):
    y = x @ p["proj.weight"] + p["proj.bias"]
    trips = 0
    while np.abs(y).max() > 1.0:
        y = 0.5 * y + 0.1 * np.tanh(y @ p["correct.weight"] + p["correct.bias"])
        trips += 1
    return (y * y).mean(), trips


def _pair(cls):
    rt.seed(3)
    eager, static = cls(), cls()
    static.set_state_dict(eager.state_dict())
    return eager, d2s.to_static(static)


def _params64(layer):
    return {k: v.numpy().astype("float64") for k, v in layer.state_dict().items()}


def _check_gradients(eager, static, loss_of, used):
    """`.grad` None exactly where eager's is (and where `used` says), values against finite
    differences of `loss_of(params)`."""
    pairs = list(zip(eager.named_parameters(), static.named_parameters()))
    assert len(pairs) == len(eager.parameters()) == len(static.parameters())
    params = _params64(eager)
    for (name, e), (_, s) in pairs:
        assert (e.grad is None) == (s.grad is None) == (not used(name)), name
        if e.grad is None:
            continue

        def f(v, name=name):
            return loss_of({**params, name: v})

        want = numeric_grad(f, params[name])
        np.testing.assert_allclose(e.grad.numpy(), want, rtol=1e-3, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(s.grad.numpy(), want, rtol=1e-3, atol=1e-6, err_msg=name)


def test_rnn_cell_has_a_gradient_only_when_the_loop_ran():
    eager, static = _pair(TinyRNN)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    for steps in (0, 1, 3, 0, 3):  # one program; the cached call path too
        for layer in (eager, static):
            layer.clear_gradients()
            loss = layer(rt.to_tensor(x), rt.to_tensor(steps))
            np.testing.assert_allclose(
                loss.numpy(), _rnn_reference(_params64(eager), x, steps), rtol=1e-5)
            loss.backward()
        _check_gradients(eager, static,
                         lambda p, steps=steps: _rnn_reference(p, x.astype("float64"), steps),
                         lambda name, steps=steps: steps > 0 or not name.startswith("cell."))
    assert len(static.forward.program_cache) == 1


def test_refiner_correction_has_a_gradient_only_when_the_loop_ran():
    eager, static = _pair(Refiner)
    base = np.array([[0.4, -0.3, 0.5], [0.2, 0.1, -0.4]], "float32")
    for scale, trips in ((0.1, 0), (2.0, 1), (8.0, 3), (0.1, 0)):  # one program for all
        x = base * scale
        assert _refiner_trips(_params64(eager), x.astype("float64"))[1] == trips
        for layer in (eager, static):
            layer.clear_gradients()
            layer(rt.to_tensor(x)).backward()
        _check_gradients(eager, static,
                         lambda p, x=x: _refiner_trips(p, x.astype("float64"))[0],
                         lambda name, trips=trips: trips > 0 or not name.startswith("correct."))
    assert len(static.forward.program_cache) == 1


class GatedRNN(TinyRNN):
    """The loop runs only on the branch of a tensor `if` that positive inputs take."""

    def forward(self, x, steps):
        h = rt.tanh(self.embed(x))
        if x.mean() > 0:
            for _ in range(steps):
                h = rt.tanh(self.cell(h) + h)
        return (self.head(h) ** 2).mean()


def test_loop_inside_a_branch_reaches_its_reads_when_both_ran():
    eager, static = _pair(GatedRNN)
    x = np.abs(np.random.default_rng(1).standard_normal((2, 3))).astype("float32")
    for sign, steps in ((1, 2), (-1, 2), (1, 0), (-1, 0), (1, 1)):
        for layer in (eager, static):
            layer.clear_gradients()
            layer(rt.to_tensor(sign * x), rt.to_tensor(steps)).backward()
        ran = steps if sign > 0 else 0
        _check_gradients(eager, static,
                         lambda p, ran=ran, sign=sign: _rnn_reference(
                             p, sign * x.astype("float64"), ran),
                         lambda name, ran=ran: ran > 0 or not name.startswith("cell."))
    assert len(static.forward.program_cache) == 1
