"""A whole training step converted at once (`loss.backward(); opt.step(); opt.clear_grad()`
inside the converted function) whose model reads a parameter only inside a graph loop (`for _
in range(steps)` with a tensor `steps`) or only on one branch of a tensor `if`: on a run where
the loop ran zero times or the branch was not taken, eager leaves that parameter's `.grad`
None, and SGD with weight decay, Momentum, Adam and AdamW skip it. The converted step does the
same: parameters and `.grad` equal eager's after every step of a run that mixes trip counts
and branches through one program (issue 33)."""
import numpy as np
import pytest

import d2s
import runtime as rt


class LoopedHeads(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = rt.nn.Linear(3, 4)
        self.cell = rt.nn.Linear(4, 4)
        self.head_a = rt.nn.Linear(4, 1)
        self.head_b = rt.nn.Linear(4, 1)

    def forward(self, x, steps):
        h = rt.tanh(self.embed(x))
        for _ in range(steps):
            h = rt.tanh(self.cell(h) + h)
        return self.head_a(h) if x.mean() > 0 else self.head_b(h)


OPTIMIZERS = {
    "sgd_weight_decay": lambda ps: rt.optimizer.SGD(0.1, parameters=ps, weight_decay=0.1),
    "momentum": lambda ps: rt.optimizer.Momentum(0.1, momentum=0.9, parameters=ps,
                                                 weight_decay=0.05),
    "adam": lambda ps: rt.optimizer.Adam(0.05, parameters=ps, weight_decay=0.01),
    "adamw": lambda ps: rt.optimizer.AdamW(0.05, parameters=ps, weight_decay=0.1),
}


def train_step(net, opt, x, steps):
    loss = (net(x, steps) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss


def _model(kind):
    rt.seed(5)
    net = LoopedHeads()
    return net, OPTIMIZERS[kind](net.parameters())


# (sign of the input: head_a or head_b, trips of the cell loop); the cell is first reached at
# the third step, head_a at the fourth
SCHEDULE = [(-1, 0), (-1, 0), (-1, 2), (1, 0), (1, 3), (-1, 1), (1, 0)]


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_converted_step_moves_exactly_the_parameters_eager_moves(kind):
    (eager, eager_opt), (static, static_opt) = _model(kind), _model(kind)
    converted = d2s.to_static(train_step)
    untouched = {name: p.numpy().copy() for name, p in static.named_parameters()
                 if name.startswith(("cell.", "head_a."))}
    rng = np.random.default_rng(0)
    for k, (sign, trips) in enumerate(SCHEDULE):
        x = rt.to_tensor(np.abs(rng.standard_normal((2, 3))).astype("float32") * sign)
        steps = rt.to_tensor(trips)
        want = train_step(eager, eager_opt, x, steps)
        got = converted(static, static_opt, x, steps)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
        pairs = list(zip(eager.named_parameters(), static.named_parameters()))
        assert len(pairs) == len(eager.parameters()) == len(static.parameters())
        for (name, e), (_, s) in pairs:
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {k}")
            assert s.grad is None and e.grad is None, name  # (cleared to None)
        if k < 2:  # neither the cell nor head_a was read yet: exactly as they were
            for name, p in static.named_parameters():
                if name in untouched:
                    np.testing.assert_array_equal(p.numpy(), untouched[name], err_msg=name)
    assert len(converted.program_cache) == 1


class GatedLoop(LoopedHeads):
    """The cell loop runs only on the branch that positive inputs take."""

    def forward(self, x, steps):
        h = rt.tanh(self.embed(x))
        if x.mean() > 0:
            for _ in range(steps):
                h = rt.tanh(self.cell(h) + h)
        return self.head_a(h)


@pytest.mark.parametrize("kind", ["sgd_weight_decay", "adam"])
def test_a_loop_inside_a_branch_moves_the_cell_only_when_both_ran(kind):
    rt.seed(6)
    eager, static = GatedLoop(), GatedLoop()
    static.set_state_dict(eager.state_dict())
    eager_opt, static_opt = OPTIMIZERS[kind](eager.parameters()), OPTIMIZERS[kind](
        static.parameters())
    converted = d2s.to_static(train_step)
    cell = static.cell.weight.numpy().copy()
    rng = np.random.default_rng(1)
    for k, (sign, trips) in enumerate([(1, 0), (-1, 2), (-1, 0), (1, 2), (-1, 1)]):
        x = rt.to_tensor(np.abs(rng.standard_normal((2, 3))).astype("float32") * sign)
        steps = rt.to_tensor(trips)
        train_step(eager, eager_opt, x, steps)
        converted(static, static_opt, x, steps)
        if k < 3:  # the branch and the loop have not both run yet: the cell is untouched
            np.testing.assert_array_equal(static.cell.weight.numpy(), cell)
        for (name, e), (_, s) in zip(eager.named_parameters(), static.named_parameters(),
                                     strict=True):
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {k}")
    assert len(converted.program_cache) == 1
