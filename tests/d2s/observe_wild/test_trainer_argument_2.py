"""A `fit_step(model, opt, sched, state, x, y, x_val, y_val)` function as small training
scripts write it: a `TrainState` object passed in whose fields the step reads and writes (a
dict of history lists, the best validation accuracy, a patience counter, a flag), the
learning rate read with `get_lr()` and logged, a validation pass under `model.eval()` and
`rt.no_grad()` then `model.train()` again, and metrics returned as Python numbers, bools and
lists (`.tolist()`, `.item()`, `int()`), a NumPy array (`.numpy()`), nested in dicts and lists.
The caller steps the scheduler between calls. Compared with eager after every call: the
returned structure leaf by leaf (Python types), the state object's fields, parameters,
BatchNorm statistics, the optimizer's state, `model.training`."""
import copy

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
        self.bn = nn.BatchNorm1D(8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


class TrainState:
    def __init__(self, patience=2):
        self.history = {"loss": [], "val_acc": [], "lr": []}
        self.best_acc, self.bad_steps, self.patience, self.improved = 0.0, 0, patience, False


def fit_step(model, opt, state, x, y, x_val, y_val):
    model.train()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    lr = opt.get_lr()
    model.eval()
    with rt.no_grad():
        val_pred = model(x_val).argmax(-1)
        val_acc = (val_pred == y_val).astype("float32").mean()
    model.train()
    state.history["loss"].append(loss.item())
    state.history["val_acc"].append(val_acc.item())
    state.history["lr"].append(lr)
    state.improved = val_acc.item() > state.best_acc
    if state.improved:
        state.best_acc = val_acc.item()
        state.bad_steps = 0
    else:
        state.bad_steps += 1
    return {"train": {"loss": loss.item(), "lr": lr},
            "val": [val_acc.item(), int((val_pred == y_val).sum()), val_pred.tolist()],
            "stop": state.bad_steps >= state.patience,
            "probs": F.softmax(logits, -1).detach().numpy()}


def _data(n=6):
    rng = np.random.default_rng(0)
    t = rt.to_tensor
    return [(t(rng.standard_normal((6, 4)).astype("float32")), t(rng.integers(0, 3, 6)),
             t((rng.standard_normal((5, 4)) * (1 + i)).astype("float32")),
             t(rng.integers(0, 3, 5))) for i in range(n)]


def _reference(history, patience=2):
    """The state's fields from the logged accuracies, as Python computes them."""
    best, bad = 0.0, 0
    for acc in history["val_acc"]:
        best, bad = (acc, 0) if acc > best else (best, bad + 1)
    return best, bad, bad >= patience


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:d2s. fit_step has been traced")  # (per history length)
def test_fit_step_with_a_state_argument_matches_eager():
    rt.seed(0)
    base = Net()
    runs = []
    for fn in (fit_step, d2s.to_static(fit_step)):
        model = copy.deepcopy(base)
        sched = rt.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5)
        runs.append((fn, model, rt.optimizer.Momentum(sched, 0.9, parameters=model.parameters(),
                                                      weight_decay=0.01), sched, TrainState()))
    improved = []
    for x, y, xv, yv in _data():
        outs = [fn(m, o, st, x, y, xv, yv) for fn, m, o, _, st in runs]
        assert_same_leaves(outs[1], outs[0])
        (_, m1, o1, _, st1), (_, m2, o2, _, st2) = runs
        assert user_state(st2) == user_state(st1)
        assert st2.history == st1.history and all(
            len(v) == len(st1.history["loss"]) for v in st2.history.values())
        assert_same_model(m2, m1)
        assert_same_optimizer(o2, o1)
        assert m2.training and m2.bn.training
        assert type(st2.best_acc) is float and type(st2.improved) is bool
        improved.append(st1.improved)
        for _, _, _, sched, _ in runs:
            sched.step()
        best, bad, stop = _reference(st1.history)
        assert (st2.best_acc, st2.bad_steps, outs[1]["stop"]) == (best, bad, stop)
    assert True in improved and False in improved  # both paths of the tensor condition
    assert st2.history["lr"] == [0.1, 0.1, 0.05, 0.05, 0.025, 0.025]
