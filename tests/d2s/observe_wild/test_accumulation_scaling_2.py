"""A training step with the three pieces projects put around `backward()`: gradient
accumulation over micro-steps (a Python counter on `self`, the optimizer stepped every `k`
calls, by the caller where the converted step says so), loss scaling as a hand-written GradScaler does it (the loss times a Python float
`self.scale`, the gradients unscaled, checked for inf/NaN, the step skipped and the scale
halved on an overflow, grown after `growth_interval` good steps) and `clip_grad_norm_` before
the step. Inputs alternate between batches that overflow and batches that do not, so both
paths of the inf check run through one program per counter value. Compared with eager code
after every call: the returned dict (Python types), the scaler's fields, parameters, which
`.grad` is None, the optimizer's state."""
import copy
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, assert_same_optimizer, user_state


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.tanh(self.fc1(x)))


class LossScaler:
    """A GradScaler as a project writes it: the scale and the counters are Python numbers."""

    def __init__(self, scale=2.0**10, growth_interval=2):
        self.scale, self.growth_interval = scale, growth_interval
        self.good_steps, self.skipped, self.overflows = 0, 0, []


class Accumulator:
    def __init__(self, model, opt, scaler, accum_steps=2, max_norm=1.0):
        self.model, self.opt, self.scaler = model, opt, scaler
        self.accum_steps, self.max_norm, self.micro_step = accum_steps, max_norm, 0

    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        (loss * self.scaler.scale / self.accum_steps).backward()
        self.micro_step += 1
        out = {"loss": loss.item(), "stepped": False, "norm": 0.0}
        if self.micro_step % self.accum_steps != 0:
            return out
        params = [p for p in self.model.parameters() if p.grad is not None]
        inv = 1.0 / self.scaler.scale
        for p in params:
            p.grad = p.grad * inv  # (`set_value` on a gradient has no static form)
        norm = nn.utils.clip_grad_norm_(params, self.max_norm)
        finite = rt.isfinite(norm)
        if finite:  # (the caller steps: `opt.step()` under a tensor `if` raises, documented)
            self.scaler.good_steps += 1
            out["stepped"], out["norm"] = True, norm.item()
        else:
            self.scaler.scale = self.scaler.scale / 2
            self.scaler.good_steps = 0
            self.scaler.skipped += 1
        self.scaler.overflows.append(not bool(finite))
        if self.scaler.good_steps == self.scaler.growth_interval:
            self.scaler.scale = self.scaler.scale * 2.0
            self.scaler.good_steps = 0
        return out

    def fit_step(self, x, y):
        out = self.train_step(x, y)
        if out["stepped"]:
            self.opt.step()
        if self.micro_step % self.accum_steps == 0:
            self.opt.clear_grad(set_to_zero=False)
        return out


def _batches(n=8):
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        x = rng.standard_normal((5, 4)).astype("float32")
        if i in (2, 3):  # a micro-batch whose gradient overflows: its optimizer step is skipped
            x[0, 0] = np.nan  # (a bad sample: every gradient is NaN)
        out.append((rt.to_tensor(x), rt.to_tensor(rng.integers(0, 3, 5))))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("opt_name", ["momentum", "adamw"])
def test_accumulated_scaled_clipped_steps_match_eager(opt_name):
    make_opt = {"momentum": lambda ps: rt.optimizer.Momentum(0.1, 0.9, parameters=ps,
                                                            weight_decay=0.01),
                "adamw": lambda ps: rt.optimizer.AdamW(0.05, parameters=ps, weight_decay=0.05)}
    rt.seed(0)
    base = Net()
    runs = []
    for convert in (False, True):
        model = copy.deepcopy(base)
        acc = Accumulator(model, make_opt[opt_name](model.parameters()), LossScaler())
        if convert:
            acc.train_step = d2s.to_static(acc.train_step)
        runs.append((acc, []))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a program per micro-step)
        for x, y in _batches():
            for acc, results in runs:
                results.append(acc.fit_step(x, y))
            (eager, e_res), (static, s_res) = runs
            assert_same_leaves(s_res[-1], e_res[-1], rtol=1e-4, atol=1e-5)
            assert user_state(static.scaler) == user_state(eager.scaler)
            assert static.micro_step == eager.micro_step
            assert_same_model(static.model, eager.model, rtol=1e-4, atol=1e-5)
            assert_same_optimizer(static.opt, eager.opt, rtol=1e-4, atol=1e-5)
    eager = runs[0][0]
    # a reference: the scale halves on the overflowing window, doubles after two good ones
    assert eager.scaler.overflows == [False, True, False, False]
    assert eager.scaler.scale == 2.0**10 and type(runs[1][0].scaler.scale) is float
    assert [r["stepped"] for r in runs[1][1]] == [False, True, False, False, False, True,
                                                  False, True] == [r["stepped"] for r in runs[0][1]]
    assert all(type(r["norm"]) is float for r in runs[1][1] if r["stepped"])
