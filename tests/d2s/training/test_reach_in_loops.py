"""Which parameters a call through a tensor `while` reaches, as eagerly: a `return` inside the
loop (its test then reads the "returned" flag under an `and`), and `detach()` in the loop's
body. Parameters whose reads this run skipped, or whose every gradient path a `detach()` cut,
keep `.grad` None; an optimizer with weight decay and momentum then moves the same ones.
Eager vs converted vs NumPy, over inputs that take each path through one program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


def _init(net, seed):
    rng = np.random.default_rng(seed)
    for p in net.parameters():
        p.set_value(rng.uniform(-0.8, 0.8, p.shape).astype("float32"))


def _linear(p, name, h):
    return h @ p[f"{name}.weight"] + p[f"{name}.bias"]


def _params(net) -> dict:
    return {n: p.numpy().astype(np.float64) for n, p in net.named_parameters()}


def _train_alike(make, reference, inputs, layers):
    """Eager and converted copies of `make()` trained side by side on `inputs`: the loss as
    NumPy's `reference(params, x)` gives it, `.grad` None exactly for the `layers` the
    reference did not reach, and the parameters equal after each Momentum step."""
    eager, static = make(), make()
    converted = d2s.to_static(static)
    opts = [rt.optimizer.Momentum(0.1, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.05) for m in (eager, static)]
    paths = set()
    for step, v in enumerate(inputs * 2):
        x = np.array(v, "float32")
        want, reached = reference(_params(eager), x.astype(np.float64))
        paths.add(tuple(sorted(reached.items())))
        for net, fn, opt in zip((eager, static), (eager, converted), opts, strict=True):
            loss = fn(rt.to_tensor(x))
            np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5)
            loss.backward()
            for layer in layers:
                got = getattr(net, layer).weight.grad
                assert (got is not None) == reached[layer], (step, layer, fn)
            opt.step()
            opt.clear_grad(set_to_zero=False)
        named = [dict(m.named_parameters()) for m in (eager, static)]
        assert len(named[0]) == len(named[1])
        for name, p in named[0].items():
            np.testing.assert_allclose(named[1][name].numpy(), p.numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{name} after step {step}")
    assert len(paths) == len(inputs)
    assert len(converted.forward.program_cache) == 1
    return static, converted


class EarlyExit(rt.nn.Layer):
    """Refines `h` for at most three steps while the step it proposes stays small (the test
    reads `step` too); a step that pushes the mean over 0.5 returns the head's loss from inside
    the loop, else the fallback's after it."""

    def __init__(self):
        super().__init__()
        self.step = rt.nn.Linear(3, 3)
        self.head = rt.nn.Linear(3, 1)
        self.fallback = rt.nn.Linear(3, 1)
        _init(self, 7)

    def forward(self, x):
        h = x
        k = 0
        while k < 3 and rt.abs(self.step(h)).sum() < 2.0:
            h = rt.tanh(self.step(h)) + h
            k += 1
            if h.mean() > 0.5:
                return (self.head(h) ** 2).sum()
        return (self.fallback(h) ** 2).sum()


def _early_exit_reference(p, x):
    """(loss, {layer: reached}) in float64."""
    h, k = x, 0
    reached = {"step": False, "head": False, "fallback": False}
    while k < 3 and np.abs(_linear(p, "step", h)).sum() < 2.0:
        h = np.tanh(_linear(p, "step", h)) + h
        reached["step"] = True
        k += 1
        if h.mean() > 0.5:
            reached["head"] = True
            return (_linear(p, "head", h) ** 2).sum(), reached
    reached["fallback"] = True
    return (_linear(p, "fallback", h) ** 2).sum(), reached


# no trip / trips, no return / a return from inside the loop
EARLY_EXIT_INPUTS = [[0.4, -0.7, -1.4], [0.3, 0.7, 0.1], [1.3, 0.9, -1.5]]


def test_return_inside_a_tensor_while_reaches_as_eager():
    _train_alike(EarlyExit, _early_exit_reference, EARLY_EXIT_INPUTS,
                 ("step", "head", "fallback"))


@pytest.mark.parametrize("v", EARLY_EXIT_INPUTS[1:])
def test_early_exit_gradients_match_finite_differences(v):
    net = EarlyExit()
    converted = d2s.to_static(net)
    x = np.array(v, "float32")
    converted(rt.to_tensor(x)).backward()
    params = _params(net)
    reached = _early_exit_reference(params, x.astype(np.float64))[1]
    for name in ("step.weight", "head.weight", "fallback.weight"):
        got = dict(net.named_parameters())[name].grad
        assert (got is not None) == reached[name.split(".")[0]], name
        if got is not None:
            want = numeric_grad(lambda w, name=name: _early_exit_reference(
                {**params, name: w}, x.astype(np.float64))[0], params[name])
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-6, err_msg=name)


class TruncatedRecurrence(rt.nn.Layer):
    """A recurrent cell run for a tensor number of steps (`for i in range(n)`, n from the
    input); a step whose state grows past a limit truncates backpropagation there
    (`h.detach()` under a tensor `if`), as truncated BPTT does. The input projection is
    reached only while no step truncated; the cell only when a step ran after the last
    truncation."""

    def __init__(self):
        super().__init__()
        self.inp = rt.nn.Linear(3, 3)
        self.cell = rt.nn.Linear(3, 3)
        self.out = rt.nn.Linear(3, 1)
        _init(self, 11)

    def forward(self, x):
        h = rt.tanh(self.inp(x))
        for _ in range(rt.cast(rt.clip(x[0] + 1.0, 0.0, 3.0), "int64")):
            h = rt.tanh(self.cell(h) + x * 0.5)
            if rt.abs(h).sum() > 1.5:
                h = h.detach()
        return (self.out(h) ** 2).sum()


def _truncated_reference(p, x, cut=None):
    """(loss, {layer: reached}, {step: the state it truncated}) in float64; `cut` (the last
    item of a run with other parameters) holds the truncated states fixed, as `detach()`
    does for finite differences."""
    h = np.tanh(_linear(p, "inp", x))
    reached = {"inp": True, "cell": False, "out": True}
    truncated = {}
    for step in range(int(np.clip(np.float32(x[0]) + np.float32(1.0), 0.0, 3.0))):
        h = np.tanh(_linear(p, "cell", h) + x * 0.5)
        reached["cell"] = True
        if np.abs(h).sum() > 1.5:
            h = truncated[step] = h if cut is None else cut[step]
            reached["inp"] = reached["cell"] = False
    return (_linear(p, "out", h) ** 2).sum(), reached, truncated


# no step / steps, none truncated / the last step truncated / a step after a truncation
TRUNCATED_INPUTS = [[-0.3, 0.2, -1.4], [1.3, 0.1, -1.0], [1.0, -0.4, -1.3], [1.7, -0.6, -1.3]]


def test_truncation_under_a_tensor_if_in_a_graph_loop_reaches_as_eager():
    _train_alike(TruncatedRecurrence, lambda p, x: _truncated_reference(p, x)[:2],
                 TRUNCATED_INPUTS, ("inp", "cell", "out"))


@pytest.mark.parametrize("v", TRUNCATED_INPUTS[1:])
def test_truncated_gradients_match_finite_differences(v):
    net = TruncatedRecurrence()
    converted = d2s.to_static(net)
    x = np.array(v, "float32")
    converted(rt.to_tensor(x)).backward()
    params = _params(net)
    _, reached, cut = _truncated_reference(params, x.astype(np.float64))
    for name in ("inp.weight", "cell.weight", "out.weight"):
        got = dict(net.named_parameters())[name].grad
        assert (got is not None) == reached[name.split(".")[0]], name
        if got is not None:
            want = numeric_grad(lambda w, name=name: _truncated_reference(
                {**params, name: w}, x.astype(np.float64), cut)[0], params[name])
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-6, err_msg=name)


class NestedRefineStep(rt.nn.Layer):
    """A whole training step converted at once: an outer tensor `while` runs an inner one
    that refines `h` and detaches it when it saturates; then `backward()` and a Momentum step
    with weight decay inside the function."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 3)
        self.inner = rt.nn.Linear(3, 3)
        self.head = rt.nn.Linear(3, 1)
        _init(self, 5)
        self.opt = rt.optimizer.Momentum(0.1, momentum=0.9, parameters=self.parameters(),
                                         weight_decay=0.05)

    def forward(self, x):
        h = rt.tanh(self.embed(x))
        i = rt.zeros([])
        while i < rt.abs(x[0]):
            i = i + 1.0
            j = rt.zeros([])
            while j < rt.abs(x[1]):
                j = j + 1.0
                h = rt.tanh(self.inner(h)) + h * 0.5
                if rt.abs(h).sum() > 2.5:
                    h = h.detach() * 0.25
        loss = (self.head(h) ** 2).sum()
        loss.backward()
        self.opt.step()
        return loss.item()


def _nested_refine_reference(p, x):
    """(loss, {layer: reached}) in float64 (the float32 loop bounds as the program has them)."""
    h = np.tanh(_linear(p, "embed", x))
    reached = {"embed": True, "inner": False, "head": True}
    for _ in range(int(np.ceil(abs(np.float32(x[0]))))):
        for _ in range(int(np.ceil(abs(np.float32(x[1]))))):
            h = np.tanh(_linear(p, "inner", h)) + h * 0.5
            reached["inner"] = True
            if np.abs(h).sum() > 2.5:
                h = h * 0.25
                reached["embed"] = reached["inner"] = False
    return (_linear(p, "head", h) ** 2).sum(), reached


# both reached / a cut in an earlier trip / a cut in the last trip / no inner trip
NESTED_INPUTS = [[0.5, 1.1, 0.2], [-2.4, 1.6, 2.1], [2.4, 0.9, 0.8], [-2.1, 0.0, 1.2]]


def test_cut_in_a_nested_graph_loop_of_a_converted_step_reaches_as_eager():
    eager, static = NestedRefineStep(), NestedRefineStep()
    converted = d2s.to_static(static)
    paths = set()
    for step, v in enumerate(NESTED_INPUTS * 2):
        x = np.array(v, "float32")
        want, reached = _nested_refine_reference(_params(eager), x.astype(np.float64))
        paths.add(tuple(sorted(reached.items())))
        for net, fn in ((eager, eager), (static, converted)):
            np.testing.assert_allclose(fn(rt.to_tensor(x)), want, rtol=1e-5)
            for layer in reached:
                got = getattr(net, layer).weight.grad
                assert (got is not None) == reached[layer], (step, layer, fn)
            net.opt.clear_grad(set_to_zero=False)
        named = [dict(m.named_parameters()) for m in (eager, static)]
        assert len(named[0]) == len(named[1])
        for name, p in named[0].items():
            np.testing.assert_allclose(named[1][name].numpy(), p.numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{name} after step {step}")
    assert len(paths) == len(NESTED_INPUTS)
    assert len(converted.forward.program_cache) == 1
