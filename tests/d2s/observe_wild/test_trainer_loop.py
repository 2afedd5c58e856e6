"""A training loop as projects write it: a `Trainer` whose `train_step` (converted) runs the
forward, `(loss / k).backward()`, steps the optimizer every `k` calls (a Python counter,
`if (self.step + 1) % k == 0`), updates an `AverageMeter` passed in with `loss.item()`,
keeps a history list and the best loss so far (`if loss.item() < self.best_loss:`, a tensor
condition on a Python float kept on the object); a model whose head a tensor condition picks.
Every observable is compared with eager code after each call: the returned dict (Python
types), the meter's and the trainer's attributes, parameters, BatchNorm statistics, which
`.grad` is None, and the optimizer's state (its keys too: an unreached head has none)."""
import copy
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import (
    assert_same_leaves,
    assert_same_model,
    assert_same_optimizer,
    grads_none,
    user_state,
)


class TwoHeadNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1D(8)
        self.drop = nn.Dropout(0.25)
        self.head_a = nn.Linear(8, 3)
        self.head_b = nn.Linear(8, 3)

    def forward(self, x):
        h = self.drop(F.relu(self.bn(self.body(x))))
        if x.mean() > 0:
            return self.head_a(h)
        return self.head_b(h)


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg, self.values = 0.0, 0, 0.0, []

    def update(self, val, n=1):
        self.values.append(val)
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Trainer:
    def __init__(self, model, opt, accum_steps=2):
        self.model, self.opt, self.accum_steps = model, opt, accum_steps
        self.step, self.history, self.best_loss = 0, [], float("inf")

    def train_step(self, x, y, meter):
        self.model.train()
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        (loss / self.accum_steps).backward()
        if (self.step + 1) % self.accum_steps == 0:
            self.opt.step()
            self.opt.clear_grad(set_to_zero=False)
        self.step += 1
        meter.update(loss.item(), x.shape[0])
        acc = (logits.argmax(-1) == y).astype("float32").mean()
        self.history.append(float(acc))
        if loss.item() < self.best_loss:  # noqa: PLR1730  (the idiom under test)
            self.best_loss = loss.item()
        return {"loss": loss.item(), "acc": acc, "first_pred": int(logits[0].argmax())}


def _batches(n=6):
    rng = np.random.default_rng(0)
    return [(rt.to_tensor((rng.standard_normal((6, 4)) * (1 + i % 3) + (-1) ** (i // 2)).astype(
        "float32")), rt.to_tensor(rng.integers(0, 3, 6))) for i in range(n)]


OPTIMIZERS = {
    "momentum": lambda ps: rt.optimizer.Momentum(0.1, 0.9, parameters=ps, weight_decay=0.01),
    "adam": lambda ps: rt.optimizer.Adam(0.05, parameters=ps),
    "adamw": lambda ps: rt.optimizer.AdamW(0.05, parameters=ps, weight_decay=0.05),
}


@pytest.mark.slow
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_trainer_step_matches_eager_in_every_observable(opt_name):
    rt.seed(0)
    base = TwoHeadNet()
    runs = []
    for convert in (False, True):
        model = copy.deepcopy(base)
        trainer = Trainer(model, OPTIMIZERS[opt_name](model.parameters()))
        if convert:
            trainer.train_step = d2s.to_static(trainer.train_step)
        runs.append((trainer, AverageMeter(), []))
    heads_reached = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (one program per value of self.step)
        for x, y in _batches():
            for trainer, meter, results in runs:
                rt.seed(3)  # the same dropout masks
                results.append(trainer.train_step(x, y, meter))
            (eager, e_meter, e_res), (static, s_meter, s_res) = runs
            assert_same_leaves(s_res[-1], e_res[-1])
            assert user_state(s_meter) == user_state(e_meter)
            assert user_state(static) == user_state(eager)
            assert_same_model(static.model, eager.model)
            assert_same_optimizer(static.opt, eager.opt)
            heads_reached |= {n.split(".")[0] for n, none in grads_none(eager.model).items()
                              if not none}
    assert {"head_a", "head_b"} <= heads_reached  # both paths ran through one program
    for trainer, meter, results in runs:  # a NumPy reference: Python's own arithmetic
        total = 0.0
        for r in results:
            total += r["loss"] * 6
        assert meter.sum == total and meter.count == 6 * len(results)
        assert trainer.best_loss == min(r["loss"] for r in results)
        assert trainer.history == [float(np.float32(r["acc"].numpy())) for r in results]
        assert all(type(r["loss"]) is float and type(r["first_pred"]) is int for r in results)


class EarlyStopper:
    def __init__(self, patience=2):
        self.patience, self.bad_epochs, self.best, self.stop = patience, 0, float("inf"), False


def evaluate(model, x, y, stopper):
    model.eval()
    with rt.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    pred = logits.argmax(-1)
    if loss.item() < stopper.best:
        stopper.best = loss.item()
        stopper.bad_epochs = 0
    else:
        stopper.bad_epochs += 1
    stopper.stop = stopper.bad_epochs >= stopper.patience
    model.train()
    return {"loss": loss, "acc": (pred == y).astype("float32").mean().item(),
            "correct": int((pred == y).sum()), "pred": pred.numpy()}


def _stopper_reference(losses, patience=2):
    best, bad, out = float("inf"), 0, []
    for v in losses:
        best, bad = (v, 0) if v < best else (best, bad + 1)
        out.append({"patience": patience, "bad_epochs": bad, "best": best,
                    "stop": bad >= patience})
    return out


def test_evaluate_with_early_stopping_is_one_program_equal_to_eager():
    """`model.eval()` ... `model.train()` inside the converted function, `no_grad`, a NumPy
    array and Python numbers returned, the stopper's best loss (a float the tensor condition
    replaces), counter and flag: one program serves every call."""
    rt.seed(0)
    model = TwoHeadNet()
    static = d2s.to_static(evaluate)
    rng = np.random.default_rng(1)
    data = [(rt.to_tensor((rng.standard_normal((5, 4)) * s).astype("float32")),
             rt.to_tensor(rng.integers(0, 3, 5))) for s in (1.0, 0.5, 3.0, 2.0, 0.2, 4.0)]
    stoppers = EarlyStopper(), EarlyStopper()
    losses, states = [], [[], []]
    for x, y in data:
        want = evaluate(model, x, y, stoppers[0])
        got = static(model, x, y, stoppers[1])
        assert_same_leaves(got, want)
        assert model.training and model.drop.training  # as the functions left it
        losses.append(want["loss"].item())
        for s, st in zip(states, stoppers, strict=True):
            s.append(user_state(st))
    assert states[0] == states[1] == _stopper_reference(losses)
    assert any(s["stop"] for s in states[0]) and not all(s["stop"] for s in states[0])
    assert static.get_traced_count() == 1
