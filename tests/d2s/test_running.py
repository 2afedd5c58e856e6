"""d2s/running.py: running a traced program (`Entry`): inference on the compiled program, the
function's result structure rebuilt, and training: the forward part of the training program
recorded as one autograd node whose backward runs the backward part on the values that call
saved. Gradients are checked against eager autograd and finite differences."""
from __future__ import annotations

import sys
import threading

import numpy as np

import d2s
import runtime as rt
from d2s.running import Entry
from d2s.tracing import trace
from runtime import core

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/tests")
from finite_differences import numeric_grad  # noqa: E402


def _traced(sf, args, kwargs):
    return trace(sf.trace_target(), args, kwargs)


def _t(a, stop_gradient=True):
    t = rt.to_tensor(np.asarray(a, np.float32))
    t.stop_gradient = stop_gradient
    return t


def _gate(x, w):
    h = rt.matmul(x, w)
    if h.mean() > 0:
        y = rt.tanh(h) * 2.0
    else:
        y = h * h
    return y


def _gate_ref(x, w):
    h = x @ w
    return np.tanh(h) * 2.0 if h.mean() > 0 else h * h


W = np.array([[0.5, -0.2], [0.3, 0.8], [-0.1, 0.4]], np.float32)
POS = np.array([[1.0, 2.0, 0.5], [0.2, 1.0, 1.5]], np.float32)  # h.mean() > 0
NEG = -POS  # h.mean() < 0: the other branch of the same program


def test_an_entry_runs_one_compiled_program_for_both_branches():
    entry = Entry(_traced(d2s.to_static(_gate), (_t(POS), _t(W)), {}))
    assert [v.name for v in entry.concrete.inputs] == ["x", "w"]
    assert entry.single  # one tensor out: returned as it is
    with rt.no_grad():
        for a in (POS, NEG):
            out = entry.run([_t(a), _t(W)])
            np.testing.assert_allclose(out.numpy(), _gate_ref(a, W), rtol=1e-6)
            assert out.stop_gradient


def _parts(x, scale):
    total = (x * scale).sum()
    return {"total": total, "count": 2, "pieces": [x[0], x[1] + total]}


def test_the_result_structure_and_its_python_values_are_rebuilt():
    entry = Entry(_traced(d2s.to_static(_parts), (_t(POS), 3.0), {}))
    assert not entry.single
    for a in (POS, NEG):
        out = entry.run([_t(a)])  # (3.0 is part of the signature, not fed)
        assert set(out) == {"total", "count", "pieces"} and out["count"] == 2
        total = (a * 3.0).sum()
        np.testing.assert_allclose(out["total"].numpy(), total, rtol=1e-6)
        np.testing.assert_allclose(out["pieces"][0].numpy(), a[0])
        np.testing.assert_allclose(out["pieces"][1].numpy(), a[1] + total, rtol=1e-6)


class _Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            y = rt.tanh(h) * 2.0
        else:
            y = h * h
        return y


def test_training_calls_record_one_node_whose_backward_matches_eager_and_numeric():
    rt.seed(3)
    net = _Net()
    weight = net.fc.weight.numpy().astype(np.float64)
    bias = net.fc.bias.numpy().astype(np.float64)
    d2s.to_static(net)
    entry = Entry(_traced(net.forward, (_t(POS, stop_gradient=False),), {}))
    probe = np.array([[1.0, -2.0], [0.5, 3.0]])  # loss = sum(out * probe)
    assert ((POS @ weight + bias).mean() > 0) != ((NEG @ weight + bias).mean() > 0)
    for a in (POS, NEG):
        x = _t(a, stop_gradient=False)
        out = entry.run([x])
        assert not out.stop_gradient and not out.is_leaf  # the call is a node of the tape
        (out * _t(probe)).sum().backward()
        static_grads = x.grad.numpy(), net.fc.weight.grad.numpy(), net.fc.bias.grad.numpy()
        net.clear_gradients()
        xe = _t(a, stop_gradient=False)
        (type(net).forward(net, xe) * _t(probe)).sum().backward()  # eager
        eager_grads = xe.grad.numpy(), net.fc.weight.grad.numpy(), net.fc.bias.grad.numpy()
        net.clear_gradients()
        for s, e in zip(static_grads, eager_grads, strict=True):
            np.testing.assert_allclose(s, e, rtol=1e-5, atol=1e-6)

        def loss_of_x(v):
            h = v @ weight + bias
            y = np.tanh(h) * 2.0 if h.mean() > 0 else h * h
            return float((y * probe).sum())
        np.testing.assert_allclose(static_grads[0],
                                   numeric_grad(loss_of_x, a.astype(np.float64)),
                                   rtol=1e-4, atol=1e-4)


def test_an_input_fed_without_gradient_gets_no_backward_ops():
    # a converted model trained with its input data (stop_gradient=True): the backward part
    # computes the weights' gradients only, not the input's (a matmul fewer per Linear)
    rt.seed(3)
    net = _Net()
    weight = net.fc.weight.numpy().astype(np.float64)
    d2s.to_static(net)
    bias = net.fc.bias.numpy().astype(np.float64)
    entry = Entry(_traced(net.forward, (_t(POS),), {}))
    probe = np.array([[1.0, -2.0], [0.5, 3.0]])
    for a in (POS, NEG):  # both branches of the one program
        x = _t(a)
        (entry.run([x]) * _t(probe)).sum().backward()
        backward_ops = [op.type for op in entry._training.split.backward.global_block().ops]
        assert backward_ops.count("matmul") == 1 and x.grad is None
        xs = a.astype(np.float64)
        h = xs @ weight + bias
        dh = (2.0 * (1.0 - np.tanh(h) ** 2) if h.mean() > 0 else 2.0 * h) * probe
        np.testing.assert_allclose(net.fc.weight.grad.numpy(), xs.T @ dh, rtol=1e-5, atol=1e-6)
        net.clear_gradients()


def test_each_call_keeps_the_values_its_own_backward_needs():
    x1, x2 = _t(POS, stop_gradient=False), _t(NEG * 0.5, stop_gradient=False)
    w = _t(W, stop_gradient=False)
    entry = Entry(_traced(d2s.to_static(_gate), (x1, w), {}))
    loss = entry.run([x1, w]).sum() + (entry.run([x2, w]) * 3.0).sum()  # two calls, then
    loss.backward()  # one backward through both nodes

    def summed(scale):
        return lambda v: scale * float(_gate_ref(v, W.astype(np.float64)).sum())
    for x, a, scale in ((x1, POS, 1.0), (x2, NEG * 0.5, 3.0)):  # the two branches
        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(summed(scale), a.astype(
            np.float64)), rtol=1e-4, atol=1e-4)

    def w_loss(wv):
        return float(_gate_ref(POS.astype(np.float64), wv).sum()
                     + 3.0 * _gate_ref((NEG * 0.5).astype(np.float64), wv).sum())
    np.testing.assert_allclose(w.grad.numpy(), numeric_grad(w_loss, W.astype(np.float64)),
                               rtol=1e-4, atol=1e-4)


def test_grad_mode_is_read_per_thread_when_a_program_runs():
    # (traced for an x that needs a gradient: `stop_gradient` is part of the signature)
    entry = Entry(_traced(d2s.to_static(_gate), (_t(POS, stop_gradient=False), _t(W)), {}))
    seen = {}

    def other_thread():  # gradients on here, whatever the main thread does
        x = _t(POS, stop_gradient=False)
        out = entry.run([x, _t(W)])
        out.sum().backward()
        seen["grad"] = x.grad.numpy()
        seen["builder"] = core.active_builder()

    with rt.no_grad():
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
        out = entry.run([_t(POS, stop_gradient=False), _t(W)])
    assert out.stop_gradient and out.is_leaf  # no node recorded under no_grad
    h = POS.astype(np.float64) @ W
    expected = ((1 - np.tanh(h) ** 2) * 2.0) @ W.T.astype(np.float64)
    np.testing.assert_allclose(seen["grad"], expected, rtol=1e-5, atol=1e-6)

    # the mode switches are the calling thread's: building here is eager there
    program = rt.static.Program()
    with rt.static.program_guard(program):
        assert core.active_builder() is not None
        assert core.mode_state().builder is core.active_builder()
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
    assert seen["builder"] is None and core.active_builder() is None
    np.testing.assert_allclose(seen["grad"], expected, rtol=1e-5, atol=1e-6)
    assert program.num_ops() == 0  # the other thread's eager ops were not recorded here
