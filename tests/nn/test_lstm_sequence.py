"""An LSTM layer direction as one op (`runtime/ops/nn_rnn.py`), its NumPy kernel (float64, or
`D2S_NATIVE=0`) and its C kernel (`runtime/program/lstm_native.py`, float32), against the
hand-written NumPy loop of test_rnn_attention.py: values eager and converted, gradients
against central differences (float64) and against the NumPy kernel's (float32 C), for
several sizes, batch 1, one step, bidirectional and stacked layers, given initial states."""
from __future__ import annotations

import numpy as np
import pytest
from layer_gradcheck import check_grads
from test_rnn_attention import np_lstm, np_net

import d2s
import runtime as rt
from runtime import nn
from runtime.ops import nn_rnn
from runtime.program import native_build

# (batch, steps, input, hidden, layers, direction)
CONFIGS = [(1, 1, 3, 4, 1, "forward"), (1, 7, 5, 8, 2, "forward"), (4, 6, 3, 5, 1, "bidirect"),
           (3, 5, 6, 16, 2, "bidirect"), (16, 20, 32, 32, 2, "forward")]


def _case(batch, steps, size, hidden, layers, direction, dtype, seed=0):
    rt.seed(seed)
    net = nn.LSTM(size, hidden, num_layers=layers, direction=direction).to(dtype=dtype)
    rng = np.random.default_rng(seed)
    n = layers * net.num_directions
    x = rng.standard_normal((batch, steps, size)).astype(dtype)
    h0, c0 = (rng.standard_normal((n, batch, hidden)).astype(dtype) for _ in range(2))
    return net, x, h0, c0


def _reference(net, x, h0, c0):
    lengths = np.full(x.shape[0], x.shape[1])
    with rt.no_grad():
        return np_net(np_lstm, net, x.astype(np.float64), list(zip(h0, c0)), lengths,
                      lstm=True)


def _outputs(fn, x, h0, c0):
    out, (h, c) = fn(rt.to_tensor(x), (rt.to_tensor(h0), rt.to_tensor(c0)))
    return out.numpy(), h.numpy(), c.numpy()


@pytest.mark.parametrize("native", ["sync", "0"])
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_values_eager_and_converted_equal_the_numpy_loop(monkeypatch, native, config):
    monkeypatch.setenv("D2S_NATIVE", native)
    net, x, h0, c0 = _case(*config, dtype="float32")
    want_out, (want_h, want_c) = _reference(net, x, h0, c0)
    eager = _outputs(net, x, h0, c0)
    static = _outputs(d2s.to_static(net), x, h0, c0)
    for got in (eager, static):
        for g, w in zip(got, (want_out, want_h, want_c), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=2e-6)
    for e, s in zip(eager, static, strict=True):  # one kernel in both modes: the same bits
        np.testing.assert_array_equal(e, s)


def test_a_known_length_layer_is_one_op_per_direction():
    net, x, h0, c0 = _case(2, 4, 3, 5, 2, "bidirect", "float32")
    sf = d2s.to_static(net)
    _outputs(sf, x, h0, c0)
    ops = [op.type for op in sf.forward.program_cache.last_entry.concrete.main_program.global_block().ops]
    assert ops.count("lstm_sequence") == 4 and "sigmoid" not in ops


@pytest.mark.parametrize("config", [(1, 3, 2, 3, 1, "forward"), (2, 3, 2, 2, 2, "bidirect")],
                         ids=str)
def test_float64_gradients_equal_central_differences(config):
    net, x, h0, c0 = _case(*config, dtype="float64")
    check_grads(lambda a, h, c: net(a, (h, c)), [x, h0, c0], net.parameters())


def _grads(net, x, h0, c0, convert: bool):
    tensors = [rt.to_tensor(a, stop_gradient=False) for a in (x, h0, c0)]
    fn = d2s.to_static(net) if convert else net
    out, (h, c) = fn(tensors[0], (tensors[1], tensors[2]))
    rng = np.random.default_rng(1)
    loss = sum((t * rt.to_tensor(rng.standard_normal(t.shape).astype(np.float32))).sum()
               for t in (out, h, c))
    loss.backward()
    grads = [t.grad.numpy() for t in tensors] + [p.grad.numpy() for p in net.parameters()]
    net.clear_gradients()
    return grads


@pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_float32_c_gradients_equal_the_numpy_kernels(monkeypatch, config):
    net, x, h0, c0 = _case(*config, dtype="float32")
    monkeypatch.setenv("D2S_NATIVE", "0")
    want = _grads(net, x, h0, c0, convert=False)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    ran = []  # the C kernels' results (None: they did not apply)
    for name, kernel in list(nn_rnn.NATIVE_KERNELS.items()):
        monkeypatch.setitem(nn_rnn.NATIVE_KERNELS, name,
                            lambda *a, kernel=kernel: ran.append(kernel(*a)) or ran[-1])
    for convert in (False, True):
        got = _grads(net, x, h0, c0, convert)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)
    layers = config[4] * (2 if config[5] == "bidirect" else 1)
    assert len(ran) == 2 * 2 * layers and all(r is not None for r in ran)
