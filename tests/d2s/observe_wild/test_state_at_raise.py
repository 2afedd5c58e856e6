"""A converted call that raises when its program runs (an early-stopping `raise`, an `assert`
on the loss, a name bound on one path only) leaves the caller's objects as eager code leaves
them: what the call changed before the raise stands (counters, meters, logged records,
tensors kept on the model, parameters an optimizer step already updated), what it would
change after the raise does not. Compared with eager code and a NumPy reference, over calls
that take both paths through one program (the third call on takes the fast call path)."""
import copy

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn
from runtime.program.variable import Variable

from .helpers import assert_same_model


class Diverged(Exception):
    pass


class Meter:
    def __init__(self):
        self.count = 0
        self.total = 0.0
        self.history = []
        self.finished = 0


def fit_batch(w, x, meter, limit):
    loss = ((x * w) ** 2).mean()
    meter.count += 1
    meter.total += loss.item()
    meter.history.append(loss.item())
    if loss > limit:
        raise Diverged(f"the loss went over {limit}")
    meter.finished += 1
    return loss


SCALES = [0.5, 3.0, 1.0, 4.0, 0.2, 5.0, 0.7, 0.1]


def _batch(scale):
    return rt.to_tensor(np.linspace(-1.0, 1.0, 4, dtype="float32") * scale)


def _fit(fn, w):
    meter, raised = Meter(), []
    for s in SCALES:
        try:
            fn(w, _batch(s), meter, 2.0)
        except Diverged as e:
            raised.append(str(e))
    return meter, raised


@pytest.mark.filterwarnings("ignore:d2s.*traced:UserWarning")  # (a program per history)
def test_a_meter_updated_before_an_early_stop_is_as_eager_leaves_it():
    w = rt.to_tensor(np.array([1.0, -0.5, 2.0, 0.25], "float32"))
    static = d2s.to_static(fit_batch)
    want, want_raised = _fit(fit_batch, w)
    got, got_raised = _fit(static, w)
    losses = [float(((np.linspace(-1, 1, 4, dtype="float32") * s * w.numpy()) ** 2).mean())
              for s in SCALES]
    over = [v > 2.0 for v in losses]
    assert got_raised == want_raised and len(want_raised) == sum(over) == 3
    for meter in (got, want):
        assert meter.count == len(SCALES) and meter.finished == len(SCALES) - sum(over)
        assert type(meter.total) is float and meter.total == pytest.approx(sum(losses), 1e-5)
        assert len(meter.history) == len(losses)
        assert all(type(v) is float for v in meter.history)
        assert meter.history == pytest.approx(losses, rel=1e-5)


class EarlyStopping(nn.Layer):
    """A loss with early stopping: counts its calls, keeps the last loss (a Tensor) and the
    best one."""

    def __init__(self):
        super().__init__()
        self.register_buffer("w", rt.to_tensor(np.array([1.0, -0.5, 2.0, 0.25], "float32")))
        self.calls = 0
        self.best = rt.to_tensor(np.float32(np.inf))
        self.last = None

    def forward(self, x):
        loss = ((x * self.w) ** 2).mean()
        self.calls += 1
        self.last = loss
        if loss > 2.0:
            raise Diverged("the loss went over 2.0")
        self.best = rt.minimum(self.best, loss)
        return loss


def test_the_fast_call_path_writes_back_the_state_at_the_raise():
    eager = EarlyStopping()
    static = d2s.to_static(copy.deepcopy(eager))
    out = []
    for model in (eager, static):
        seen = []
        for s in SCALES:
            try:
                model(_batch(s))
            except Diverged:
                pass
            seen.append((model.calls, model.last, model.best.item()))
        out.append(seen)
    want, got = out
    assert len(got) == len(want) == len(SCALES)
    for (gc, gl, gb), (wc, wl, wb) in zip(got, want, strict=True):
        assert gc == wc and gb == pytest.approx(wb, rel=1e-6)
        assert type(gl) is rt.Tensor and gl.item() == pytest.approx(wl.item(), rel=1e-6)
    assert len({id(last) for _, last, _ in got}) == len(SCALES)  # a new Tensor each call
    assert static.forward.get_traced_count() == 1
    assert static.forward._cache.last_entry.fast is not None


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.step = 0
        self.register_buffer("seen", rt.zeros([], "int64"))
        self.last_loss = None

    def forward(self, x, y):
        self.step += 1
        self.seen += x.shape[0]
        loss = F.cross_entropy(self.fc(x), y)
        self.last_loss = loss
        return loss


class Logger:
    def __init__(self):
        self.records = []


def train_step(model, opt, x, y, logger, limit):
    loss = model(x, y)
    loss.backward()
    opt.step()
    opt.clear_grad()
    logger.records.append({"step": model.step, "loss": loss.item()})
    assert loss < limit, "the loss diverged"
    logger.records.append("checked")
    return loss


def _batches():
    rng = np.random.default_rng(1)
    out = []
    for i in range(7):
        x = rng.standard_normal((5, 4)).astype("float32") * (6.0 if i % 3 == 1 else 0.5)
        out.append((rt.to_tensor(x), rt.to_tensor(rng.integers(0, 3, 5))))
    return out


def _train(step, base):
    model = copy.deepcopy(base)
    opt = rt.optimizer.Momentum(0.05, 0.9, parameters=model.parameters(), weight_decay=0.01)
    logger, kept, failed = Logger(), [], 0
    for x, y in _batches():
        try:
            step(model, opt, x, y, logger, 1.5)
        except AssertionError as e:
            assert str(e).splitlines()[0] == "the loss diverged"
            failed += 1
        kept.append(model.last_loss)
    return model, logger, kept, failed


def _reachable_variables(*objs) -> list:
    found, stack, seen = [], list(objs), set()
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, Variable):
            found.append(o)
        elif isinstance(o, dict):
            stack += list(o.values())
        elif isinstance(o, (list, tuple)):
            stack += list(o)
        elif isinstance(o, (nn.Layer, Logger, Trace, Snapshot)):
            stack += list(vars(o).values())
    return found


@pytest.mark.filterwarnings("ignore:d2s.*traced:UserWarning")  # (a program per log)
def test_a_training_step_that_fails_its_assert_leaves_eager_state():
    """Parameters updated by the optimizer step before the failing `assert`, the step
    counter, a buffer, the tensor kept on the model and the logged records: as eager."""
    rt.seed(0)
    base = Net()
    want = _train(train_step, base)
    got = _train(d2s.to_static(train_step), base)
    assert got[3] == want[3] == 2
    assert_same_model(got[0], want[0])
    assert got[0].step == want[0].step == 7 and int(got[0].seen) == int(want[0].seen) == 35
    assert len(got[1].records) == len(want[1].records) == 12
    for g, w in zip(got[1].records, want[1].records, strict=True):
        assert type(g) is type(w)
        if isinstance(w, dict):
            assert g["step"] == w["step"] and type(g["loss"]) is float
            assert g["loss"] == pytest.approx(w["loss"], rel=1e-5)
        else:
            assert g == w
    # the losses kept from each call: one Tensor per call, each with its own value
    assert len({id(t) for t in got[2]}) == len(got[2]) == 7
    np.testing.assert_allclose([t.item() for t in got[2]], [t.item() for t in want[2]],
                               rtol=1e-5)
    assert _reachable_variables(got[0], got[1], got[2]) == []


class Budget:
    def __init__(self):
        self.steps = 0
        self.last = rt.zeros([2])
        self.total = 0.0


def decode(scores, budget):
    """A loop whose condition is a tensor that raises in its body when the running sum goes
    over budget: the counter and the tensor set in the iterations before stand."""
    i = rt.zeros([], "int64")
    acc = rt.zeros([])
    while i < scores.shape[0]:
        acc = acc + scores[i]
        budget.steps += 1
        budget.last = acc * rt.ones([2])
        if acc > 5.0:
            raise RuntimeError("over budget")
        i += 1
    budget.total += acc.item()
    return acc


def test_a_raise_in_a_graph_loop_leaves_what_the_iterations_before_it_set():
    rows = [[1.0, 2.0], [4.0, 3.0], [1.0, 1.0], [-1.0, 2.0], [2.0, 5.0, 1.0]]
    runs = []
    for fn in (decode, d2s.to_static(decode)):
        budget, seen = Budget(), []
        for row in rows:
            try:
                fn(rt.to_tensor(np.array(row, "float32")), budget)
            except RuntimeError as e:
                assert str(e).splitlines()[0] == "over budget"
            seen.append((budget.steps, budget.last.numpy().tolist(), budget.total))
        runs.append(seen)
    # NumPy reference: the steps run until the prefix sum goes over 5 (then it raises)
    steps, total, want = 0, 0.0, []
    for row in rows:
        sums = np.cumsum(np.array(row, "float32"))
        over = np.nonzero(sums > 5.0)[0]
        n = int(over[0]) + 1 if len(over) else len(row)
        steps += n
        total += 0.0 if len(over) else float(sums[-1])
        want.append((steps, [float(sums[n - 1])] * 2, total))
    assert runs[0] == runs[1] == want


class Snapshot:
    def __init__(self, value):
        self.value = value


class Trace:
    def __init__(self):
        self.calls = 0
        self.snap = None


def snapshot_step(x, trace):
    trace.calls += 1
    trace.snap = Snapshot(x * 2)  # an object the call makes, holding a tensor
    if x.sum() < 0:
        raise ValueError("negative batch")
    return x


def test_an_object_made_by_a_call_that_raises_holds_no_variable():
    """Where the program cannot give a value at the raise (an object the call made, whose
    tensors it gives only after a run that returns), the place keeps what it held, and
    never a static Variable; the counter set before the raise stands."""
    static = d2s.to_static(snapshot_step)
    trace = Trace()
    with pytest.raises(ValueError, match="negative batch"):
        static(rt.to_tensor([-1.0, 0.5]), trace)  # the first call's run raises
    assert trace.calls == 1 and trace.snap is None and _reachable_variables(trace) == []
    static(rt.to_tensor([1.0, 0.5]), trace)
    assert trace.calls == 2 and trace.snap.value.numpy().tolist() == [2.0, 1.0]
