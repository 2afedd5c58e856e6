"""The learning rate as converted code reads it: `opt.get_lr()` inside a converted function is
the rate in force when the program runs (a scheduler stepped, or `set_lr` called, between
calls), as the Python float eager code gets, to the last bit, from one program. A scheduler's
`step()` inside a converted function advances it each time the program runs; reading its
Python `last_epoch` after that step raises at the user's line (it would be the old one)."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, assert_same_optimizer


def train_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    lr = opt.get_lr()
    return {"loss": loss.item(), "lr": lr, "scaled": loss * lr}


SCHEDULES = {
    "step": lambda: rt.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5),
    "cosine": lambda: rt.optimizer.lr.CosineAnnealingDecay(0.1, T_max=4),
    "fixed": lambda: 0.05,
}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_get_lr_in_a_converted_step_follows_the_schedule(schedule):
    rt.seed(0)
    base = nn.Linear(4, 3)
    rng = np.random.default_rng(0)
    data = [(rt.to_tensor(rng.standard_normal((5, 4)).astype("float32")),
             rt.to_tensor(rng.integers(0, 3, 5))) for _ in range(5)]
    runs = []
    for fn in (train_step, d2s.to_static(train_step)):
        model, lr = copy.deepcopy(base), SCHEDULES[schedule]()
        runs.append((fn, model, rt.optimizer.AdamW(lr, parameters=model.parameters(),
                                                   weight_decay=0.01), lr))
    for i, (x, y) in enumerate(data):
        outs = [fn(model, opt, x, y) for fn, model, opt, _ in runs]
        assert_same_leaves(outs[1], outs[0])
        assert type(outs[1]["lr"]) is float and outs[1]["lr"] == runs[0][2].get_lr()
        for _, _, opt, lr in runs:  # the loop steps the schedule between calls
            if isinstance(lr, float):
                opt.set_lr(0.05 / (i + 2))
            else:
                lr.step()
    (_, m1, o1, _), (static, m2, o2, _) = runs
    assert_same_model(m2, m1)
    assert_same_optimizer(o2, o1)
    assert static.get_traced_count() == 1


def step_inside(model, opt, sched, x):
    loss = model(x).mean()
    loss.backward()
    opt.step()
    sched.step()
    return loss


def step_then_read_the_epoch(model, opt, sched, x):
    loss = model(x).mean()
    sched.step()
    return loss, sched.last_epoch


@pytest.mark.parametrize("schedule", ["step", "cosine"])
def test_scheduler_step_inside_a_converted_function_steps_each_call(schedule):
    """Each call advances the schedule, as eagerly: `last_epoch`, the rate and the
    parameters the next call updates with it, from one program."""
    rt.seed(0)
    m1 = nn.Linear(4, 3)
    m2 = copy.deepcopy(m1)
    s1, s2 = SCHEDULES[schedule](), SCHEDULES[schedule]()
    o1 = rt.optimizer.SGD(s1, parameters=m1.parameters())
    o2 = rt.optimizer.SGD(s2, parameters=m2.parameters())
    static = d2s.to_static(step_inside)
    for _ in range(5):
        want, got = step_inside(m1, o1, s1, rt.ones([2, 4])), static(m2, o2, s2, rt.ones([2, 4]))
        assert float(got) == float(want)
        assert (s2.last_epoch, s2()) == (s1.last_epoch, s1())
        assert_same_model(m2, m1)
        assert_same_optimizer(o2, o1)
    assert static.get_traced_count() == 1


def test_reading_the_epoch_after_a_step_inside_raises_at_its_line():
    model = nn.Linear(4, 3)
    sched = rt.optimizer.lr.StepDecay(0.1, step_size=1)
    with pytest.raises(RuntimeError, match=r"reading StepDecay.last_epoch \(at .*test_learning_"
                                           r"rate_reads.py:\d+\) after its step\(\)"):
        d2s.to_static(step_then_read_the_epoch)(model, None, sched, rt.ones([2, 4]))
    assert sched.last_epoch == 0 and sched() == 0.1  # (nothing stepped)
