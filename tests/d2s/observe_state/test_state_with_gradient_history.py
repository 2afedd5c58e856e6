"""State kept across calls that HAS gradient history (issue 35, "a trace on every call"; issue
33, "exceptions where eager runs"): an RNN state carried without `.detach()`
(`self.h = tanh(...)`), a tensor moved (`self.prev = self.cur; self.cur = h`), a FIFO of
hidden states or of losses for plateau detection (`self.hist.append(h)`, then `pop(0)` or
`self.hist = self.hist[-k:]`), state moved on an object passed in. Eager keeps each call's
graph: a later call's `backward()` goes on into the earlier call's graph (its parameters get
those gradients too, with `retain_graph=True`) and raises where an earlier `backward()` freed
it. Before, the program read such a tensor as a constant cut from its graph: no gradient
flowed into the earlier call (silently wrong `.grad`), a `backward()` that eager refuses ran,
and a FIFO of such tensors traced on every call. Now the run records the tensor the place
held (`writeback_fed.recorded_sources`), guarded by its kind (shape, dtype, stop_gradient):
eager's gradients and errors, and a fixed number of programs after the warm-up."""
import types

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves, assert_same_model

INPUTS = [np.array(v, np.float32) for v in (
    [1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [-2.0, 1.0], [0.5, 0.5], [-0.5, -4.0], [3.0, 1.0],
    [-1.0, 0.0])]
K = 3


class StreamingRNN(rt.nn.Layer):
    """An RNN state carried across calls without detach (truncated BPTT done wrong)."""

    def __init__(self):
        super().__init__()
        self.inp = rt.nn.Linear(2, 2)
        self.rec = rt.nn.Linear(2, 2, bias_attr=False)
        self.h = rt.zeros([2])

    def forward(self, x):
        self.h = rt.tanh(self.inp(x) + self.rec(self.h))
        if self.h.sum() > 0:  # (both paths, one program)
            return (self.h * x).sum()
        return -self.h.sum()


class Shifted(rt.nn.Layer):
    """The previous output moved to another attribute, read by the next call's loss."""

    def __init__(self):
        super().__init__()
        self.lin = rt.nn.Linear(2, 2)
        self.cur = rt.zeros([2])
        self.prev = rt.zeros([2])

    def forward(self, x):
        h = self.lin(x)
        self.prev = self.cur
        self.cur = h
        if self.prev.sum() > 0:
            return (h * self.prev).sum()
        return (h - self.prev).sum()


class HiddenFifo(rt.nn.Layer):
    """The last K hidden states, popped past K (a streaming attention cache)."""

    def __init__(self):
        super().__init__()
        self.lin = rt.nn.Linear(2, 2)
        self.hist = []

    def forward(self, x):
        h = self.lin(x)
        self.hist.append(h)
        if len(self.hist) > K:
            self.hist.pop(0)
        s = rt.stack(self.hist).sum(0)
        if s.sum() > 0:
            return (s * x).sum()
        return s.sum()


class LossWindow(rt.nn.Layer):
    """A moving window of losses for plateau detection, sliced past K."""

    def __init__(self):
        super().__init__()
        self.lin = rt.nn.Linear(2, 1)
        self.losses = []

    def forward(self, x):
        loss = (self.lin(x) ** 2).mean()
        self.losses.append(loss)
        self.losses = self.losses[-K:]
        mean = rt.stack(self.losses).mean()
        if loss > mean:  # (not improving: a penalty on the window)
            return loss + 0.1 * mean
        return loss


MODELS = [StreamingRNN, Shifted, HiddenFifo, LossWindow]
# programs once warm: a state that needs a gradient after the first call (a zeros tensor
# before), and a FIFO's lengths while it fills
PROGRAMS = {"StreamingRNN": 2, "Shifted": 2, "HiddenFifo": K + 1, "LossWindow": K + 1}


def _state(m):
    return {k: list(v) if type(v) is list else v for k, v in vars(m).items()
            if k in ("h", "cur", "prev", "hist", "losses")}


def _run(model, backward, calls):
    """(per call: loss, the model's state) or the error a backward() raised, with the call."""
    seen = []
    for i, v in enumerate(INPUTS[:calls]):
        loss = model(rt.to_tensor(v))
        seen.append((loss, _state(model)))
        try:
            if backward == "retain":
                loss.backward(retain_graph=True)
            elif backward == "plain":
                loss.backward()
        except RuntimeError as e:
            return seen, (i, str(e))
    if backward == "end":  # (one backward() through every call's graph)
        sum(loss for loss, _ in seen).backward()
    return seen, None


def _pair(make):
    rt.seed(7)
    eager = make()
    static_layer = make()
    static_layer.set_state_dict(eager.state_dict())
    return eager, static_layer


@pytest.mark.parametrize("backward", ["retain", "end", "plain"])
@pytest.mark.parametrize("make", MODELS, ids=lambda c: c.__name__)
def test_state_with_gradient_history_matches_eager(make, backward):
    eager, static_layer = _pair(make)
    static = d2s.to_static(static_layer)
    want, want_err = _run(eager, backward, len(INPUTS))
    got, got_err = _run(static, backward, len(INPUTS))
    assert got_err == want_err  # (a plain backward(): eager's error at eager's call)
    assert len(got) == len(want)
    for i, ((g, gs), (w, ws)) in enumerate(zip(got, want, strict=True)):
        assert_same_leaves(g, w, f"call {i}")
        assert_same_leaves(gs, ws, f"state after call {i}")
    assert_same_model(static_layer, eager)  # (which .grad is None, and the gradients)
    if want_err is None:
        assert static.forward.get_traced_count() == PROGRAMS[make.__name__]


def test_the_rnn_matches_a_numpy_reference():
    eager, static_layer = _pair(StreamingRNN)
    static = d2s.to_static(static_layer)
    w_in, b_in = eager.inp.weight.numpy(), eager.inp.bias.numpy()
    w_rec = eager.rec.weight.numpy()
    h = np.zeros(2, np.float32)
    for v in INPUTS:
        h = np.tanh(v @ w_in + b_in + h @ w_rec)
        ref = (h * v).sum() if h.sum() > 0 else -h.sum()
        for layer in (eager, static):
            np.testing.assert_allclose(float(layer(rt.to_tensor(v))), ref, rtol=1e-5)
    np.testing.assert_allclose(static_layer.h.numpy(), h, rtol=1e-5)
    assert static_layer.h.stop_gradient is False  # (as eager's: it has a graph)


def step(x, w, st):
    """A state on an object passed in, moved, with a gradient path to `w`."""
    st.prev = st.cur
    st.cur = rt.tanh(x * w)
    if st.prev.sum() > 0:
        return (st.cur * st.prev).sum()
    return (st.cur + st.prev).sum()


def test_state_moved_on_an_argument_keeps_its_graph():
    static = d2s.to_static(step)
    w_got = rt.to_tensor(np.array([0.5, -1.5], np.float32), stop_gradient=False)
    w_want = rt.to_tensor(np.array([0.5, -1.5], np.float32), stop_gradient=False)
    got_st = types.SimpleNamespace(cur=rt.zeros([2]), prev=rt.zeros([2]))
    want_st = types.SimpleNamespace(cur=rt.zeros([2]), prev=rt.zeros([2]))
    for i, v in enumerate(INPUTS):
        want = step(rt.to_tensor(v), w_want, want_st)
        got = static(rt.to_tensor(v), w_got, got_st)
        assert_same_leaves(got, want, f"call {i}")
        assert_same_leaves(vars(got_st), vars(want_st), f"state after call {i}")
        want.backward(retain_graph=True)
        got.backward(retain_graph=True)
        np.testing.assert_allclose(w_got.grad.numpy(), w_want.grad.numpy(), rtol=1e-5)
    assert static.get_traced_count() == 2


def test_a_second_derivative_through_kept_graphs_is_a_clear_error():
    """`create_graph=True` through a call that reads an earlier call's graph: refused at the
    `rt.grad`, naming the place (the program's gradient cannot reach into that graph)."""
    layer = StreamingRNN()
    static = d2s.to_static(layer)
    loss = static(rt.to_tensor(INPUTS[0]))  # (the state is zeros: no earlier graph)
    (g,) = rt.grad(loss, [layer.inp.weight], create_graph=True)
    assert not g.stop_gradient
    for v in INPUTS[1:3]:
        loss = static(rt.to_tensor(v))
    with pytest.raises(d2s.SecondDerivativeError, match=r"kept across calls \(self\.h\) "
                       r"with their graphs from earlier calls\. Store them detached"):
        rt.grad(loss, [layer.inp.weight], create_graph=True)
