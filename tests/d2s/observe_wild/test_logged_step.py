"""A training step with the pieces projects add around the update: a config object whose
field the caller changes between calls (label smoothing), a NaN guard that raises
(`if not rt.isfinite(loss): raise FloatingPointError(...)`, before `loss.backward()`), an EMA
copy of the weights updated under `no_grad`, a Layer counting its calls, a buffer counting
samples in training mode, and every other call a line printed and a dict appended to a log.
Compared with eager code: results, the exception (type and message), parameters, EMA
weights, the log's records (Python types), the printed text and the counters."""
import copy
import dataclasses
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, assert_same_optimizer


@dataclasses.dataclass
class Config:
    label_smoothing: float = 0.0
    log_every: int = 2


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.calls = 0
        self.register_buffer("seen", rt.zeros([], "int64"))

    def forward(self, x):
        self.calls += 1
        if self.training:
            self.seen += x.shape[0]
        return self.fc2(F.relu(self.fc1(x)))


class Logger:
    def __init__(self):
        self.records = []


def train_step(model, ema, opt, x, y, cfg, logger):
    logits = model(x)
    eps = cfg.label_smoothing
    loss = F.cross_entropy(logits, y) * (1 - eps) - eps * F.log_softmax(logits, -1).mean()
    if not rt.isfinite(loss):
        raise FloatingPointError("the loss is not finite")
    loss.backward()
    opt.step()
    opt.clear_grad()
    with rt.no_grad():
        for pe, p in zip(ema.parameters(), model.parameters()):
            pe.set_value(pe * 0.9 + p * 0.1)
    if model.calls % cfg.log_every == 0:
        print(f"call {model.calls}: loss", loss.item(), "smoothing", eps)
        logger.records.append({"call": model.calls, "loss": loss.item()})
    return loss.item(), logits.argmax(-1)


def _data():
    rng = np.random.default_rng(0)
    data = [(rt.to_tensor(rng.standard_normal((6, 4)).astype("float32")),
             rt.to_tensor(rng.integers(0, 3, 6))) for _ in range(5)]
    return data + [(rt.to_tensor(np.full((6, 4), np.nan, "float32")), data[0][1])]


def _run(step, base, capsys):
    model, ema = copy.deepcopy(base), copy.deepcopy(base)
    opt = rt.optimizer.Momentum(0.1, 0.9, parameters=model.parameters(), weight_decay=0.01)
    cfg, logger, results = Config(), Logger(), []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (a program per value of model.calls)
        for i, (x, y) in enumerate(_data()):
            cfg.label_smoothing = 0.1 * (i % 3)  # read through an argument: guarded
            try:
                results.append(step(model, ema, opt, x, y, cfg, logger))
            except FloatingPointError as e:
                results.append((type(e), str(e).splitlines()[0]))
    return results, model, ema, opt, logger, capsys.readouterr().out


@pytest.mark.slow
def test_logged_step_with_a_nan_guard_matches_eager(capsys):
    rt.seed(0)
    base = Net()
    want = _run(train_step, base, capsys)
    got = _run(d2s.to_static(train_step), base, capsys)
    assert_same_leaves(got[0], want[0])
    assert want[0][-1] == (FloatingPointError, "the loss is not finite")
    assert_same_model(got[1], want[1])
    assert_same_model(got[2], want[2])
    assert_same_optimizer(got[3], want[3])
    assert got[4].records == want[4].records and len(want[4].records) == 2
    assert all(type(r["loss"]) is float for r in got[4].records)
    assert got[5] == want[5] and "call 4: loss " in want[5]
    assert int(got[1].seen) == int(want[1].seen) == 36


def test_counter_changed_before_a_run_time_raise_is_written_back(capsys):
    rt.seed(0)
    base = Net()
    want = _run(train_step, base, capsys)
    got = _run(d2s.to_static(train_step), base, capsys)
    assert got[1].calls == want[1].calls == 6


def guarded_loss(w, x):
    loss = (x * w).sum()
    if not rt.isfinite(loss):
        raise FloatingPointError("the loss is not finite")
    print("loss", loss.item(), "argmax", int(x.argmax()), "positive", bool(loss > 0))
    return loss


def test_raise_only_branch_keeps_the_rest_after_it_and_numbers_print_as_numbers(capsys):
    """The statements after an `if` whose block only raises stay after it (not in its
    `else`), so a `loss.backward()` there is not inside a tensor `if`; Python numbers print
    as eager prints them."""
    static = d2s.to_static(guarded_loss)
    w = rt.to_tensor([0.5, -2.0])
    for x in ([1.0, 2.0], [3.0, -1.0], [np.nan, 1.0]):
        outs = []
        for fn in (guarded_loss, static):
            try:
                outs.append(fn(w, rt.to_tensor(np.array(x, "float32"))))
            except FloatingPointError as e:
                outs.append(str(e).splitlines()[0])
        assert_same_leaves(outs[1], outs[0])
        printed = capsys.readouterr().out.splitlines()
        assert len(printed) == (0 if np.isnan(x[0]) else 2) and len(set(printed)) <= 1
    (line,) = [t for t in static.code.splitlines() if "_d2s.print_(" in t]
    assert line.startswith("    _d2s.print_(")  # in the function's body, not in a branch
    assert static.get_traced_count() == 1
