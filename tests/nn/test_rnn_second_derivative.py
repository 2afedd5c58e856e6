"""Second derivatives through the fused recurrent ops (`runtime/ops/nn_rnn.py`'s LSTM,
`nn_gru.py`'s GRU): a gradient penalty (`rt.grad(..., create_graph=True)` on the layer's
input, then `backward()` of the penalty) in eager and converted code, against central
differences of the penalty computed from first derivatives alone (the fused gradient ops,
float64); and the refusal where the first gradient was built without create_graph."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
from runtime import nn
from runtime.ops.registry import OpError

# (layer, batch, steps, input, hidden, layers, direction, sequence lengths or None)
CONFIGS = [("LSTM", 2, 3, 2, 3, 1, "bidirect", None), ("LSTM", 1, 4, 3, 2, 2, "forward", None),
           ("GRU", 2, 3, 2, 3, 1, "bidirect", None), ("GRU", 3, 4, 2, 2, 2, "forward", [4, 2, 0])]


def _case(layer, batch, steps, size, hidden, layers, direction, lengths):
    rt.seed(0)
    net = getattr(nn, layer)(size, hidden, num_layers=layers, direction=direction)
    net.to(dtype="float64")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, steps, size))
    proj = rt.to_tensor(rng.standard_normal((batch, steps, hidden * net.num_directions)))
    return net, x, proj, None if lengths is None else rt.to_tensor(lengths)


def _loss(net, proj, lengths, x):
    """A loss of every output and the final states."""
    if isinstance(net, nn.LSTM):
        out, (h, c) = net(x)
        return (out * proj).sum() + (c * h).sum()
    out, h = net(x, sequence_length=lengths)
    return (out * proj).sum() + (h * h).sum()


def _penalised(net, proj, lengths):
    def loss_with_penalty(x):  # a WGAN-GP style loss: the input gradient's squared norm
        loss = _loss(net, proj, lengths, x)
        (gx,) = rt.grad(loss, x, create_graph=True)
        return loss + (gx * gx).sum()

    return loss_with_penalty


def _penalty_from_first_derivatives(net, proj, lengths, x: np.ndarray) -> float:
    """The same loss, its input gradient taken without create_graph (the fused gradient op)."""
    xt = rt.to_tensor(x, stop_gradient=False)
    loss = _loss(net, proj, lengths, xt)
    (gx,) = rt.grad(loss, xt)
    return float(loss.numpy() + (gx.numpy() ** 2).sum())


@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("convert", [False, True], ids=["eager", "to_static"])
def test_gradient_penalty_gradients_equal_central_differences(config, convert):
    net, x0, proj, lengths = _case(*config)
    fn = _penalised(net, proj, lengths)
    fn = d2s.to_static(fn) if convert else fn
    x = rt.to_tensor(x0, stop_gradient=False)
    total = fn(x)
    total.backward()
    assert float(total.numpy()) == pytest.approx(
        _penalty_from_first_derivatives(net, proj, lengths, x0), rel=1e-12)
    want_x = numeric_grad(lambda a: _penalty_from_first_derivatives(net, proj, lengths, a), x0)
    np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-6, atol=1e-8)
    params = [net.weight_hh_l0, net.weight_ih_l0, net.bias_hh_l0]
    if config[5] > 1:
        params.append(net.weight_hh_l1)
    for p in params:
        start = p.numpy().copy()

        def at(values, p=p):
            p.set_value(values)
            return _penalty_from_first_derivatives(net, proj, lengths, x0)

        want = numeric_grad(at, start)
        p.set_value(start)
        np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-6, atol=1e-8, err_msg=p.name)


@pytest.mark.parametrize("layer", ["LSTM", "GRU"])
def test_eager_and_converted_penalties_agree_in_float32(layer):
    net, x0, proj, _ = _case(layer, 3, 5, 4, 8, 2, "bidirect", None)
    net.to(dtype="float32")
    proj = proj.astype("float32")
    fn = _penalised(net, proj, None)
    grads = []
    for run in (fn, d2s.to_static(fn)):
        x = rt.to_tensor(x0.astype("float32"), stop_gradient=False)
        run(x).backward()
        grads.append([x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()])
        net.clear_gradients()
    assert len(grads[0]) == len(grads[1])
    for e, s in zip(*grads, strict=True):
        np.testing.assert_allclose(s, e, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("layer", ["LSTM", "GRU"])
def test_a_gradient_built_without_create_graph_refuses_a_second_derivative(layer):
    net, _, _, _ = _case(layer, 2, 3, 2, 3, 1, "forward", None)
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [2, 3, 2], "float64")
        x.stop_gradient = False
        out, _ = net(x)
        (gx,) = rt.static.gradients([out], [x])
        with pytest.raises(OpError, match="create_graph=True"):
            rt.static.gradients([(gx * gx).sum()], [x])
