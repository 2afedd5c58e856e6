"""The learning rate as converted code reads it: `opt.get_lr()` inside a converted function is
the rate in force when the program runs (a scheduler stepped, or `set_lr` called, between
calls), as the Python float eager code gets, to the last bit, from one program. A scheduler's
`step()` inside a converted function (its Python would run once, while tracing) raises at the
user's line."""
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


def test_scheduler_step_inside_a_converted_function_raises_at_its_line():
    model = nn.Linear(4, 3)
    sched = rt.optimizer.lr.StepDecay(0.1, step_size=1)
    opt = rt.optimizer.SGD(sched, parameters=model.parameters())
    with pytest.raises(RuntimeError, match=r"StepDecay.step\(\) \(at .*test_learning_rate_"
                                           r"reads.py:\d+\) inside a function converted"):
        d2s.to_static(step_inside)(model, opt, sched, rt.ones([2, 4]))
    assert sched.last_epoch == 0 and sched() == 0.1  # (nothing stepped)
