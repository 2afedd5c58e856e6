"""Failures the parameter fuzzer (`gen_observe_params`) found, shrunk into model code: which
parameters a converted call reaches, their `.grad` after `backward()` and what a Momentum
step with weight decay then does, eager vs static vs a NumPy reference, over inputs that take
both paths through one converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

# Two inputs: the encoder's features have a positive mean for the first (frozen), a negative
# one for the second.
INPUTS = [[1.5, -1.0, 0.5], [-1.5, 1.0, -0.5]]


class FrozenWhenConfident(rt.nn.Layer):
    """Stops the encoder's gradient on the inputs whose features have a positive mean (a
    tensor condition), as a model that freezes its encoder on confident inputs."""

    def __init__(self):
        super().__init__()
        self.encoder = rt.nn.Linear(3, 3)
        self.head = rt.nn.Linear(3, 3)
        rng = np.random.default_rng(7)
        for p in self.parameters():
            p.set_value(rng.uniform(-0.8, 0.8, p.shape).astype("float32"))

    def forward(self, x):
        feats = rt.tanh(self.encoder(x))
        if feats.mean() > 0.0:
            feats = feats.detach() * 0.5
        out = feats + rt.sin(self.head(feats)) * 0.25
        return (out * out).mean()


def _reference(net, x):
    """(the loss, whether the encoder is reached) in NumPy."""
    p = {n: v.numpy().astype(np.float64) for n, v in net.named_parameters()}
    feats = np.tanh(x @ p["encoder.weight"] + p["encoder.bias"])
    frozen = feats.mean() > 0.0
    if frozen:
        feats = feats * 0.5
    out = feats + np.sin(feats @ p["head.weight"] + p["head.bias"]) * 0.25
    return (out * out).mean(), not frozen


def test_detach_chosen_by_a_tensor_condition_leaves_grad_none():
    eager, static = FrozenWhenConfident(), FrozenWhenConfident()
    converted = d2s.to_static(static)
    opts = [rt.optimizer.Momentum(0.1, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.05) for m in (eager, static)]
    for step, v in enumerate(INPUTS * 2):
        x = np.array(v, "float32")
        want, reached = _reference(eager, x.astype(np.float64))
        losses = [eager(rt.to_tensor(x)), converted(rt.to_tensor(x))]
        for loss, opt, net in zip(losses, opts, (eager, static), strict=True):
            np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5)
            loss.backward()
            assert (net.encoder.weight.grad is not None) == reached, (step, net)
            assert net.head.weight.grad is not None
            opt.step()
            opt.clear_grad(set_to_zero=False)
        named = [dict(net.named_parameters()) for net in (eager, static)]
        assert len(named[0]) == len(named[1])
        for name, p in named[0].items():
            np.testing.assert_allclose(named[1][name].numpy(), p.numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{name} after step {step}")
    assert len(converted.forward.program_cache) == 1


class Logged(rt.nn.Layer):
    """Returns its loss with the numbers a training loop logs: the loss rounded to 4 digits,
    scaled as a running average would, and the argmax as an int; a tensor `if` picks the
    head."""

    def __init__(self):
        super().__init__()
        self.a = rt.nn.Linear(3, 3)
        self.b = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = rt.tanh(self.a(x)) if x.mean() > 0.0 else rt.tanh(self.b(x))
        loss = (h * h).mean()
        value = loss.item()
        return loss, round(value, 4), value * 0.9 + 0.1, int(rt.argmax(h))


def test_numbers_from_item_are_python_floats_to_the_last_bit():
    """`loss.item()` is a Python float (a double): rounding it, or arithmetic on it, gives
    eager's double; the converted call computed it in float32 (round(1.297...) came back as
    1.2970000505447388; params fuzzer seed 20211, 25 of 25)."""
    rt.seed(3)
    eager = Logged()
    static = Logged()
    static.set_state_dict(eager.state_dict())
    converted = d2s.to_static(static)
    for v in ([1.5, -1.0, 2.5], [-1.5, 1.0, -0.5], [0.3, 0.2, 0.1]):
        x = rt.to_tensor(np.array(v, "float32"))
        want, got = eager(x), converted(x)
        assert len(want) == len(got) == 4
        head = eager.a if float(x.mean()) > 0.0 else eager.b
        p = {n: t.numpy().astype(np.float64) for n, t in head.named_parameters()}
        h = np.tanh(np.array(v) @ p["weight"] + p["bias"])
        np.testing.assert_allclose(got[0].numpy(), (h * h).mean(), rtol=1e-5)
        assert got[0].dtype == want[0].dtype and got[0].stop_gradient is False
        for w, g in zip(want[1:], got[1:], strict=True):
            assert type(g) is type(w) and g == w, (v, w, g)
        assert abs(got[1] - (h * h).mean()) <= 5e-5 and got[1] == round(got[1], 4)
    assert len(converted.forward.program_cache) == 1


class Refiner(rt.nn.Layer):
    """Refines its state for as many trips as the input's first value says (a tensor
    `while`), computing an auxiliary prediction on each trip that the loss does not use."""

    def __init__(self):
        super().__init__()
        self.step = rt.nn.Linear(3, 3)
        self.aux = rt.nn.Linear(3, 3)
        rng = np.random.default_rng(5)
        for p in self.parameters():
            p.set_value(rng.uniform(-0.8, 0.8, p.shape).astype("float32"))

    def forward(self, x):
        h = x
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            aux_logits = self.aux(h)  # noqa: F841  (kept for debugging; no loss reads it)
            h = rt.tanh(self.step(h))
        return (h * h).mean()


class RefinerAuxOnSomeTrips(Refiner):
    """The auxiliary prediction only on the trips whose state has a positive mean (a tensor
    `if` in the loop's body), which also halve the state."""

    def forward(self, x):
        h = x
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            if h.mean() > 0.0:
                aux_logits = self.aux(h)  # noqa: F841  (kept for debugging)
                h = h * 0.5
            h = rt.tanh(self.step(h))
        return (h * h).mean()


def _refined_loss(w, b, x, halved):
    h = x
    for _ in range(int(np.ceil(abs(x[0]) + 0.5))):
        if halved and h.mean() > 0.0:
            h = h * 0.5
        h = np.tanh(h @ w + b)
    return (h * h).mean()


@pytest.mark.parametrize("cls", [Refiner, RefinerAuxOnSomeTrips], ids=lambda c: c.__name__)
def test_value_computed_in_a_graph_loop_and_never_used_gives_no_gradient(cls):
    """A parameter read in a graph loop's body only for a value nothing returned depends on
    (a loop-carried `aux_logits`, also one a tensor `if` in the body sets) has `.grad` None,
    as eagerly: the loop's backward gave it zeros, and Momentum with weight decay moved it
    (params fuzzer seeds 20211 and 20212, 25 and 14 of 150)."""
    eager, static = cls(), cls()
    halved = cls is RefinerAuxOnSomeTrips
    converted = d2s.to_static(static)
    opts = [rt.optimizer.Momentum(0.1, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.05) for m in (eager, static)]
    for trips, v in enumerate([[0.2, 1.0, -1.0], [1.2, -0.5, 0.3], [-2.3, 0.4, 0.9]], 1):
        x = np.array(v)
        assert int(np.ceil(abs(x[0]) + 0.5)) == trips  # 1, 2 and 3 trips
        w, b = (eager.step.weight.numpy().astype(np.float64),
                eager.step.bias.numpy().astype(np.float64))
        want_w = numeric_grad(lambda w_, b=b, x=x: _refined_loss(w_, b, x, halved), w)
        for net, opt, call in ((eager, opts[0], eager), (static, opts[1], converted)):
            loss = call(rt.to_tensor(x.astype("float32")))
            np.testing.assert_allclose(loss.numpy(), _refined_loss(w, b, x, halved),
                                       rtol=1e-5)
            loss.backward()
            assert net.aux.weight.grad is None and net.aux.bias.grad is None
            np.testing.assert_allclose(net.step.weight.grad.numpy(), want_w, rtol=1e-3,
                                       atol=1e-6)
            opt.step()
            opt.clear_grad(set_to_zero=False)
        np.testing.assert_allclose(static.aux.weight.numpy(), eager.aux.weight.numpy())
        np.testing.assert_allclose(static.step.weight.numpy(), eager.step.weight.numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert len(converted.forward.program_cache) == 1
