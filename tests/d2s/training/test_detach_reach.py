"""A `detach()` that a tensor `if` chooses: the parameters whose only gradient path it cuts
keep `.grad` None on the runs that take it, as eagerly (an optimizer with weight decay and
momentum leaves them alone), and a loss detached on the whole run raises at `backward()`.
Eager vs converted vs NumPy, over inputs that take each path through one program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

_CUT = "backward() on a tensor with stop_gradient=True"


def _init(net, seed):
    rng = np.random.default_rng(seed)
    for p in net.parameters():
        p.set_value(rng.uniform(-0.8, 0.8, p.shape).astype("float32"))


class GatedDistill(rt.nn.Layer):
    """A student reads the teacher's features; on confident inputs (a tensor condition) the
    teacher is frozen, on very confident ones (a nested condition) the skip path is too; on
    others (an `elif`) only the skip path; `mix` reads the input on its own path."""

    def __init__(self):
        super().__init__()
        self.teacher = rt.nn.Linear(3, 3)
        self.skip = rt.nn.Linear(3, 3)
        self.student = rt.nn.Linear(3, 3)
        self.mix = rt.nn.Linear(3, 1)
        _init(self, 3)

    def forward(self, x):
        t = rt.tanh(self.teacher(x))
        s = rt.tanh(self.skip(x))
        aux = self.mix(x).sum()  # (a path of its own: never cut)
        if t.mean() > 0.0:
            t = t.detach()
            if s.sum() > 0.0:
                s = s.detach() * 0.5
        elif s.mean() < -0.5:
            s = s.detach()
        h = rt.tanh(self.student(t + s))
        return (h * h).mean() + aux * 0.1


def _distill_reference(p, x):
    """(loss, {parameter: reached}) in float64."""
    t = np.tanh(x @ p["teacher.weight"] + p["teacher.bias"])
    s = np.tanh(x @ p["skip.weight"] + p["skip.bias"])
    aux = (x @ p["mix.weight"] + p["mix.bias"]).sum()
    teacher, skip = True, True
    if t.mean() > 0.0:
        teacher = False
        if s.sum() > 0.0:
            s, skip = s * 0.5, False
    elif s.mean() < -0.5:
        skip = False
    h = np.tanh((t + s) @ p["student.weight"] + p["student.bias"])
    return (h * h).mean() + aux * 0.1, {"teacher": teacher, "skip": skip}


# teacher frozen and skip frozen / teacher frozen only / both trained / skip frozen only
DISTILL_INPUTS = [[-2.5, -2.5, -2.5], [-2.5, -2.5, -1.5], [-2.5, 0.5, 1.5], [0.5, -2.5, 2.5]]


def test_detach_under_nested_tensor_ifs_matches_eager_and_numpy():
    eager, static = GatedDistill(), GatedDistill()
    converted = d2s.to_static(static)
    opts = [rt.optimizer.Momentum(0.1, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.05) for m in (eager, static)]
    paths = set()
    for step, v in enumerate(DISTILL_INPUTS * 2):
        x = np.array(v, "float32")
        params = {n: p.numpy().astype(np.float64) for n, p in eager.named_parameters()}
        want, reached = _distill_reference(params, x.astype(np.float64))
        paths.add(tuple(reached.values()))
        for net, fn, opt in zip((eager, static), (eager, converted), opts, strict=True):
            loss = fn(rt.to_tensor(x))
            np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5)
            loss.backward()
            for layer in ("teacher", "skip"):
                got = getattr(net, layer).weight.grad
                assert (got is not None) == reached[layer], (step, layer, fn)
            assert net.student.weight.grad is not None and net.mix.weight.grad is not None
            opt.step()
            opt.clear_grad(set_to_zero=False)
        for (name, p), q in zip(eager.named_parameters(), static.parameters(), strict=True):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {step}")
    assert len(paths) == 4
    assert len(converted.forward.program_cache) == 1


@pytest.mark.parametrize("v", [DISTILL_INPUTS[1], DISTILL_INPUTS[2]])
def test_reached_gradients_match_finite_differences(v):
    net = GatedDistill()
    converted = d2s.to_static(net)
    x = np.array(v, "float32")
    converted(rt.to_tensor(x)).backward()
    params = {n: p.numpy().astype(np.float64) for n, p in net.named_parameters()}
    for name in ("skip.weight", "student.weight"):
        def loss_of(w, name=name):
            return _distill_reference({**params, name: w}, x.astype(np.float64))[0]
        want = numeric_grad(loss_of, params[name])
        got = dict(net.named_parameters())[name].grad
        assert got is not None
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-6, err_msg=name)


class FrozenStep(rt.nn.Layer):
    """A whole training step; on the inputs whose first feature exceeds the second's the
    features (and so the whole loss) are detached: eager `backward()` raises there."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 3)
        _init(self, 5)
        self.opt = rt.optimizer.Momentum(0.1, momentum=0.9, parameters=self.parameters(),
                                         weight_decay=0.05)

    def forward(self, x):
        h = rt.tanh(self.embed(x))
        if x[0] > x[1]:
            h = h.detach() * 0.5
        loss = (h * h).mean()
        loss.backward()
        self.opt.step()
        self.opt.clear_grad()
        return loss.item()


def _frozen_reference(p, x):
    h = np.tanh(x @ p["embed.weight"] + p["embed.bias"])
    return None if x[0] > x[1] else (h * h).mean()


def test_step_whose_loss_a_tensor_if_detaches_raises_as_eager():
    eager, static = FrozenStep(), FrozenStep()
    converted = d2s.to_static(static)
    for v in ([-1.0, 0.5, 2.0], [1.0, 0.5, 2.0], [0.2, 0.9, -1.0]):
        x = np.array(v, "float32")
        params = {n: p.numpy().astype(np.float64) for n, p in eager.named_parameters()}
        want = _frozen_reference(params, x.astype(np.float64))
        for fn in (eager, converted):
            if want is None:
                with pytest.raises(RuntimeError, match="^" + _CUT.replace("(", r"\(")
                                   .replace(")", r"\)")):
                    fn(rt.to_tensor(x))
            else:
                np.testing.assert_allclose(fn(rt.to_tensor(x)), want, rtol=1e-5)
        for p, q in zip(eager.parameters(), static.parameters(), strict=True):
            np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6)
    assert len(converted.forward.program_cache) == 1


class Frozen(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 3)

    def forward(self, x):
        h = rt.tanh(self.embed(x))
        if x[0] > x[1]:
            h = h.detach() * 0.5
        return (h * h).mean()


def test_returned_loss_detached_on_this_run_refuses_backward_as_eager():
    net = Frozen()
    converted = d2s.to_static(net)
    for v, cut in (([1.0, 0.5, 2.0], True), ([-1.0, 0.5, 2.0], False)):
        for fn in (net, converted):
            loss = fn(rt.to_tensor(np.array(v, "float32")))
            assert loss.stop_gradient is cut
            if cut:
                with pytest.raises(RuntimeError, match="stop_gradient=True"):
                    loss.backward()
                assert net.embed.weight.grad is None
            else:
                loss.backward()
                assert net.embed.weight.grad is not None
                net.embed.weight.grad = None
