"""A GRU layer direction as one op (`runtime/ops/nn_gru.py`), its NumPy kernel (float64, or
`D2S_NATIVE=0`) and its C kernel (`runtime/program/gru_native.py`, float32), against the
hand-written NumPy loop of test_rnn_attention.py and against the loop of ops the layer ran
before (a cell subclass with its own `step`): values eager and converted, gradients against
central differences (float64), the loop of ops' and the NumPy kernel's (float32 C), for batch
1, one step, bidirectional and stacked layers, given initial states and sequence lengths
(rows that end early, a row of length 0, a length past the end)."""
from __future__ import annotations

import numpy as np
import pytest
from layer_gradcheck import check_grads
from test_rnn_attention import np_gru, np_net

import d2s
import runtime as rt
from runtime import nn
from runtime.ops import nn_rnn
from runtime.program import native_build

# (batch, steps, input, hidden, layers, direction, lengths or None)
CONFIGS = [(1, 1, 3, 4, 1, "forward", None), (1, 7, 5, 8, 2, "forward", None),
           (4, 6, 3, 5, 1, "bidirect", [6, 2, 0, 9]), (3, 5, 6, 16, 2, "bidirect", None),
           (3, 10, 16, 16, 1, "forward", [10, 7, 3]), (16, 20, 32, 32, 2, "bidirect", None)]


class LoopGRUCell(nn.GRUCell):
    """The same cell run as a loop of ops: a subclass with its own `step` is not fused."""

    def step(self, x, states):
        return super().step(x, states)


class LoopGRU(nn.GRU):
    _cell = LoopGRUCell


def _case(batch, steps, size, hidden, layers, direction, lengths, dtype, seed=0):
    rt.seed(seed)
    net = nn.GRU(size, hidden, num_layers=layers, direction=direction).to(dtype=dtype)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, steps, size)).astype(dtype)
    h0 = rng.standard_normal((layers * net.num_directions, batch, hidden)).astype(dtype)
    return net, x, h0, None if lengths is None else np.array(lengths, np.int64)


def _loop_twin(net):
    twin = LoopGRU(net.input_size, net.hidden_size, net.num_layers, net.direction)
    twin.to(dtype=net.weight_ih_l0.dtype)
    twin.set_state_dict(net.state_dict())
    return twin


def _call(fn, x, h0, lengths, grad=False):
    tensors = [rt.to_tensor(a, stop_gradient=not grad) for a in (x, h0)]
    seq = None if lengths is None else rt.to_tensor(lengths)
    return tensors, fn(tensors[0], tensors[1], sequence_length=seq)


@pytest.mark.parametrize("native", ["sync", "0"])
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_values_eager_and_converted_equal_the_numpy_loop(monkeypatch, native, config):
    monkeypatch.setenv("D2S_NATIVE", native)
    net, x, h0, lengths = _case(*config, dtype="float32")
    full = np.full(x.shape[0], x.shape[1]) if lengths is None else lengths
    with rt.no_grad():
        want = np_net(np_gru, net, x.astype(np.float64), list(h0), full, lstm=False)
    got = [[t.numpy() for t in _call(fn, x, h0, lengths)[1]]
           for fn in (net, d2s.to_static(net))]
    for outs in got:
        assert len(outs) == len(want)
        for g, w in zip(outs, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=2e-6)
    for e, s in zip(*got, strict=True):  # one kernel in both modes: the same bits
        np.testing.assert_array_equal(e, s)


def test_a_known_length_layer_is_one_op_per_direction_also_with_lengths():
    net, x, h0, lengths = _case(3, 4, 3, 5, 2, "bidirect", [4, 1, 3], "float32")
    sf = d2s.to_static(net)
    _call(sf, x, h0, lengths)
    program = sf.forward.program_cache.last_entry.concrete.main_program
    ops = [op.type for op in program.global_block().ops]
    assert ops.count("gru_sequence") == 4 and "sigmoid" not in ops


@pytest.mark.parametrize("config", [(1, 3, 2, 3, 1, "forward", None),
                                    (3, 4, 2, 2, 2, "bidirect", [4, 2, 0])], ids=str)
def test_float64_gradients_equal_central_differences(config):
    net, x, h0, lengths = _case(*config, dtype="float64")
    seq = None if lengths is None else rt.to_tensor(lengths)
    check_grads(lambda a, h: net(a, h, sequence_length=seq), [x, h0], net.parameters())


def _grads(fn, params, x, h0, lengths):
    tensors, (out, h) = _call(fn, x, h0, lengths, grad=True)
    rng = np.random.default_rng(1)
    loss = sum((t * rt.to_tensor(rng.standard_normal(t.shape).astype(t.dtype.name))).sum()
               for t in (out, h))
    loss.backward()
    grads = [t.grad.numpy() for t in tensors] + [p.grad.numpy() for p in params]
    for p in params:
        p.clear_gradient()
    return grads


@pytest.mark.parametrize("config", CONFIGS[1:5], ids=str)
def test_gradients_equal_the_loop_of_ops(config):
    net, x, h0, lengths = _case(*config, dtype="float64")
    twin = _loop_twin(net)
    want = _grads(twin, twin.parameters(), x, h0, lengths)
    for fn in (net, d2s.to_static(net)):
        got = _grads(fn, net.parameters(), x, h0, lengths)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_float32_c_gradients_equal_the_numpy_kernels(monkeypatch, config):
    net, x, h0, lengths = _case(*config, dtype="float32")
    monkeypatch.setenv("D2S_NATIVE", "0")
    want = _grads(net, net.parameters(), x, h0, lengths)
    monkeypatch.setenv("D2S_NATIVE", "sync")
    ran = []  # the C kernels' results (None: they did not apply)
    for name in ("gru_forward", "gru_backward"):
        kernel = nn_rnn.NATIVE_KERNELS[name]
        monkeypatch.setitem(nn_rnn.NATIVE_KERNELS, name,
                            lambda *a, kernel=kernel: ran.append(kernel(*a)) or ran[-1])
    for convert in (False, True):
        got = _grads(d2s.to_static(net) if convert else net, net.parameters(), x, h0, lengths)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)
    layers = config[4] * (2 if config[5] == "bidirect" else 1)
    assert len(ran) == 2 * 2 * layers and all(r is not None for r in ran)


def test_gradients_without_a_hidden_bias_equal_central_differences():
    rt.seed(0)
    net = nn.GRU(3, 4, bias_hh_attr=False).to(dtype="float64")
    assert net[0].cell.bias_hh is None
    x = np.random.default_rng(0).standard_normal((2, 5, 3))
    check_grads(lambda a: net(a), [x], net.parameters())
