"""Which parameters get a gradient when a parameter is read only on a branch of a tensor `if`
inside a graph loop's body: eager gives it a gradient only when some trip took that branch; a
loop that ran with every trip on the other branch, or that ran zero times, leaves `.grad is
None`. Also for a refinement `while` inside a tensor `if` inside the loop (reached only when a
trip took the branch and the inner loop ran there). One converted Layer per model takes every
path; gradients are checked against finite differences of a NumPy reference (issue 33)."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad


class SwitchedCell(rt.nn.Layer):
    """Each trip of the loop runs cell `a` or cell `b`, as the state's mean says."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 4)
        self.a = rt.nn.Linear(4, 4)
        self.b = rt.nn.Linear(4, 4)
        self.head = rt.nn.Linear(4, 1)

    def forward(self, x, steps):
        h = rt.tanh(self.embed(x))
        for _ in range(steps):
            h = rt.tanh(self.a(h)) if h.mean() > 0 else rt.tanh(self.b(h))
        return (self.head(h) ** 2).mean()


def _switched_reference(p, x, steps):
    """(the loss, the cells the trips ran)."""
    h = np.tanh(x @ p["embed.weight"] + p["embed.bias"])
    ran = []
    for _ in range(steps):
        assert abs(h.mean()) > 1e-3  # (far from the switch: finite differences keep the path)
        cell = "a" if h.mean() > 0 else "b"
        h = np.tanh(h @ p[f"{cell}.weight"] + p[f"{cell}.bias"])
        ran.append(cell)
    return ((h @ p["head.weight"] + p["head.bias"]) ** 2).mean(), ran


class PresetCell(SwitchedCell):
    """The cell is chosen once, before the loop, and tested on every trip."""

    def forward(self, x, steps):
        h = rt.tanh(self.embed(x))
        use_a = x.mean() > 0
        for _ in range(steps):
            if use_a:
                h = rt.tanh(self.a(h))
            else:
                h = rt.tanh(self.b(h))
        return (self.head(h) ** 2).mean()


def _preset_reference(p, x, steps):
    cell = "a" if x.mean() > 0 else "b"
    h = np.tanh(x @ p["embed.weight"] + p["embed.bias"])
    for _ in range(steps):
        h = np.tanh(h @ p[f"{cell}.weight"] + p[f"{cell}.bias"])
    return ((h @ p["head.weight"] + p["head.bias"]) ** 2).mean(), [cell] * steps


class GatedRefiner(rt.nn.Layer):
    """On the trips whose state has a positive mean, refine it until it is within 1."""

    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 3)
        self.cell = rt.nn.Linear(3, 3)
        self.correct = rt.nn.Linear(3, 3)

    def forward(self, x, steps):
        h = self.embed(x)
        for _ in range(steps):
            if h.mean() > 0:
                while h.abs().max() > 1.0:
                    h = 0.5 * h + 0.1 * rt.tanh(self.correct(h))
            h = 2.0 * rt.tanh(self.cell(h))
        return (h * h).mean()


def _refiner_reference(p, x, steps):
    """(the loss, how many times the correction ran)."""
    h = x @ p["embed.weight"] + p["embed.bias"]
    corrections = 0
    for _ in range(steps):
        assert abs(h.mean()) > 1e-3
        if h.mean() > 0:
            while np.abs(h).max() > 1.0:
                h = 0.5 * h + 0.1 * np.tanh(h @ p["correct.weight"] + p["correct.bias"])
                corrections += 1
        h = 2.0 * np.tanh(h @ p["cell.weight"] + p["cell.bias"])
    return (h * h).mean(), corrections


def _pair(cls, seed):
    rt.seed(seed)
    eager, static = cls(), cls()
    static.set_state_dict(eager.state_dict())
    return eager, d2s.to_static(static)


def _params64(layer):
    return {k: v.numpy().astype("float64") for k, v in layer.state_dict().items()}


def _check_gradients(eager, static, loss_of, used):
    """`.grad` None exactly where eager's is (and where `used` says), values against finite
    differences of `loss_of(params)`."""
    assert len(eager.parameters()) == len(static.parameters())
    params = _params64(eager)
    for (name, e), (_, s) in zip(eager.named_parameters(), static.named_parameters()):
        assert (e.grad is None) == (s.grad is None) == (not used(name)), name
        if e.grad is None:
            continue

        def f(v, name=name):
            return loss_of({**params, name: v})

        want = numeric_grad(f, params[name])
        np.testing.assert_allclose(e.grad.numpy(), want, rtol=1e-3, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(s.grad.numpy(), want, rtol=1e-3, atol=1e-6, err_msg=name)


def _run(eager, static, *args):
    losses = []
    for layer in (eager, static):
        layer.clear_gradients()
        loss = layer(*[rt.to_tensor(a) for a in args])
        loss.backward()
        losses.append(loss.numpy())
    return losses


def test_a_cell_has_a_gradient_only_when_some_trip_ran_it():
    eager, static = _pair(SwitchedCell, 1)
    base = np.random.default_rng(0).standard_normal((2, 3))
    seen = set()
    # (scale of the input, trips): a only, b only, both, none, b then a, a only again
    for scale, steps in ((3.0, 2), (-3.0, 1), (3.0, 3), (1.0, 0), (-1.0, 3), (0.3, 2)):
        x = base * scale
        want, ran = _switched_reference(_params64(eager), x, steps)
        seen.add(frozenset(ran))
        for loss in _run(eager, static, x.astype("float32"), np.int64(steps)):
            np.testing.assert_allclose(loss, want, rtol=1e-5)
        _check_gradients(eager, static,
                         lambda p, x=x, steps=steps: _switched_reference(p, x, steps)[0],
                         lambda name, ran=ran: name.split(".")[0] not in {"a", "b"} - set(ran))
    assert seen == {frozenset("a"), frozenset("b"), frozenset("ab"), frozenset()}
    assert len(static.forward.program_cache) == 1


def test_a_condition_computed_before_the_loop_and_tested_in_its_body():
    eager, static = _pair(PresetCell, 1)
    base = np.abs(np.random.default_rng(2).standard_normal((2, 3)))
    for scale, steps in ((1.0, 2), (-1.0, 2), (1.0, 0), (-1.0, 1), (2.0, 1)):
        x = base * scale
        want, ran = _preset_reference(_params64(eager), x, steps)
        for loss in _run(eager, static, x.astype("float32"), np.int64(steps)):
            np.testing.assert_allclose(loss, want, rtol=1e-5)
        _check_gradients(eager, static,
                         lambda p, x=x, steps=steps: _preset_reference(p, x, steps)[0],
                         lambda name, ran=ran: name.split(".")[0] not in {"a", "b"} - set(ran))
    assert len(static.forward.program_cache) == 1


def test_a_loop_inside_a_branch_inside_a_loop_reaches_its_reads_when_it_ran():
    eager, static = _pair(GatedRefiner, 2)
    base = np.abs(np.random.default_rng(1).standard_normal((2, 3)))
    seen = set()
    for scale, steps in ((0.2, 2), (-0.2, 2), (4.0, 2), (-4.0, 1), (4.0, 0), (4.0, 3)):
        x = base * scale
        want, corrections = _refiner_reference(_params64(eager), x, steps)
        seen.add((steps > 0, corrections > 0))
        for loss in _run(eager, static, x.astype("float32"), np.int64(steps)):
            np.testing.assert_allclose(loss, want, rtol=1e-5)
        _check_gradients(eager, static,
                         lambda p, x=x, steps=steps: _refiner_reference(p, x, steps)[0],
                         lambda name, steps=steps, c=corrections: (
                             not name.startswith("cell.") or steps > 0) and (
                             not name.startswith("correct.") or c > 0))
    assert seen == {(False, False), (True, False), (True, True)}
    assert len(static.forward.program_cache) == 1
