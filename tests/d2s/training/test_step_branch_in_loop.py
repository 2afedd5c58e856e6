"""A whole training step converted at once (`loss.backward(); opt.step(); opt.clear_grad()`
inside the converted function) whose model reads a parameter only on a branch of a tensor `if`
inside a graph loop's body (or only in a `while` inside such a branch): on a run where no trip
took the branch, eager leaves that parameter's `.grad` None, and SGD with weight decay,
Momentum, Adam and AdamW skip it. The converted step does the same: parameters equal eager's
after every step of a run that mixes paths through one program (issue 33)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe.test_reached_branches_in_loops import GatedRefiner, PresetCell, SwitchedCell

OPTIMIZERS = {
    "sgd_weight_decay": lambda ps: rt.optimizer.SGD(0.1, parameters=ps, weight_decay=0.1),
    "momentum": lambda ps: rt.optimizer.Momentum(0.1, momentum=0.9, parameters=ps,
                                                 weight_decay=0.05),
    "adam": lambda ps: rt.optimizer.Adam(0.05, parameters=ps, weight_decay=0.01),
    "adamw": lambda ps: rt.optimizer.AdamW(0.05, parameters=ps, weight_decay=0.1),
}


def train_step(net, opt, x, steps):
    loss = net(x, steps)
    loss.backward()
    opt.step()
    opt.clear_grad(set_to_zero=False)
    return loss


def _models(cls, seed, kind):
    rt.seed(seed)
    eager, static = cls(), cls()
    static.set_state_dict(eager.state_dict())
    return (eager, OPTIMIZERS[kind](eager.parameters())), (
        static, OPTIMIZERS[kind](static.parameters()))


def _train(cls, seed, kind, schedule, base):
    """Run `schedule` ((input scale, trips) per step) eagerly and converted; returns, per step,
    the names of the parameters the eager step moved."""
    (eager, eager_opt), (static, static_opt) = _models(cls, seed, kind)
    converted = d2s.to_static(train_step)
    moved = []
    for k, (scale, trips) in enumerate(schedule):
        before = {name: p.numpy().copy() for name, p in static.named_parameters()}
        x = rt.to_tensor((base * scale).astype("float32"))
        want = train_step(eager, eager_opt, x, rt.to_tensor(trips))
        got = converted(static, static_opt, x, rt.to_tensor(trips))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
        assert len(eager.parameters()) == len(static.parameters())
        for (name, e), (_, s) in zip(eager.named_parameters(), static.named_parameters()):
            np.testing.assert_allclose(s.numpy(), e.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} after step {k}")
            assert s.grad is None and e.grad is None, name  # (cleared to None)
        moved.append({name.split(".")[0] for name, p in static.named_parameters()
                      if not np.array_equal(p.numpy(), before[name])})
    assert len(converted.program_cache) == 1
    return moved


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_converted_step_moves_a_cell_only_when_a_trip_ran_it(kind):
    base = np.random.default_rng(0).standard_normal((2, 3))
    schedule = [(3.0, 2), (3.0, 2), (-3.0, 1), (3.0, 3), (1.0, 0), (-1.0, 3)]
    moved = _train(SwitchedCell, 1, kind, schedule, base)
    cells = [m & {"a", "b"} for m in moved]
    # the run has steps whose loop ran one cell only (the other, with weight decay or
    # momentum, stays as it was), steps that ran both, and one with no trip
    assert any(trips > 0 and len(c) == 1 for c, (_, trips) in zip(cells, schedule))
    assert {"a", "b"} in cells
    assert cells[4] == set()


@pytest.mark.parametrize("kind", ["sgd_weight_decay", "adamw"])
def test_converted_step_moves_a_correction_inside_a_branch_only_when_it_ran(kind):
    base = np.abs(np.random.default_rng(1).standard_normal((2, 3)))
    moved = _train(GatedRefiner, 2, kind, [(0.2, 2), (-0.2, 2), (4.0, 2), (4.0, 0)], base)
    assert "correct" not in moved[0] | moved[1]
    assert "correct" in moved[2]


@pytest.mark.parametrize("kind", ["sgd_weight_decay", "momentum"])
def test_converted_step_with_the_cell_chosen_before_the_loop(kind):
    base = np.abs(np.random.default_rng(2).standard_normal((2, 3)))
    schedule = [(1.0, 2), (1.0, 0), (-1.0, 2), (1.0, 1)]
    moved = _train(PresetCell, 1, kind, schedule, base)
    assert [m & {"a", "b"} for m in moved[:3]] == [{"a"}, set(), {"b"}]
