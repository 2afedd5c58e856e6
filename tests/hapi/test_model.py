"""rt.Model: training steps equal a hand-written eager loop, converted (`inputs`) equals
eager on data taking both branches of the network's `if`, gradients against finite
differences of a NumPy reference, and predict / save / load / errors."""
import copy
import os

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn
from runtime.hapi import static_converter
from runtime.static import InputSpec
from tests.finite_differences import numeric_grad


class Branchy(nn.Layer):
    """A classifier whose hidden activation depends on the batch: relu when the batch's
    mean input is positive, tanh otherwise (one converted program holds both)."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        h = self.hidden(x)
        if x.mean() > 0:
            h = nn.functional.relu(h)
        else:
            h = rt.tanh(h)
        return self.out(h)


def dataset(n=48, seed=0):
    """Batches of 8 alternate between positive and negative inputs (both branches)."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n, 3)).astype("float32")
    sign = np.where(np.arange(n) // 8 % 2 == 0, 1.0, -1.0)[:, None]
    x = (np.abs(x) * sign + 0.1 * x).astype("float32")
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype("int64")[:, None]
    return rt.io.TensorDataset([rt.to_tensor(x), rt.to_tensor(y)]), x, y


def prepared(net, inputs=None, metrics=None):
    model = rt.Model(net, inputs=inputs)
    model.prepare(rt.optimizer.SGD(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss(), metrics)
    return model


def fresh_pair():
    rt.seed(7)
    net = Branchy()
    return net, copy.deepcopy(net)


def test_train_batch_is_the_eager_training_step():
    net, twin = fresh_pair()
    model = prepared(net)
    opt = rt.optimizer.SGD(0.1, parameters=twin.parameters())
    loss_fn = nn.CrossEntropyLoss()
    _, x, y = dataset()
    for i in range(0, 48, 8):
        xb, yb = rt.to_tensor(x[i:i + 8]), rt.to_tensor(y[i:i + 8])
        (got,) = model.train_batch([xb], [yb])
        loss = loss_fn(twin(xb), yb)
        loss.backward()
        opt.step()
        opt.clear_grad()
        assert got == pytest.approx(float(loss), rel=1e-6)
    for a, b in zip(net.parameters(), twin.parameters(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_converted_model_trains_like_the_eager_one():
    net, twin = fresh_pair()
    eager = prepared(net, metrics=rt.metric.Accuracy())
    static = prepared(twin, inputs=[InputSpec([None, 3], "float32", "x")],
                      metrics=rt.metric.Accuracy())
    assert static_converter.is_converted(static.network)
    data, _, _ = dataset()
    for model in (eager, static):
        model.fit(data, batch_size=8, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(static.parameters()[0].numpy(), eager.parameters()[0].numpy(),
                               rtol=1e-5, atol=1e-6)
    e, s = (m.evaluate(data, batch_size=8, verbose=0) for m in (eager, static))
    assert set(e) == set(s) == {"loss", "acc"}
    assert s["loss"][0] == pytest.approx(e["loss"][0], rel=1e-5)
    assert s["acc"] == e["acc"] > 0.8
    # both branches went through one training program (and one for evaluation)
    assert len(static.network.forward.program_cache) == 2


def numpy_loss(params: dict, x: np.ndarray, y: np.ndarray) -> float:
    h = x @ params["hidden.weight"] + params["hidden.bias"]
    h = np.maximum(h, 0) if x.mean() > 0 else np.tanh(h)
    z = h @ params["out.weight"] + params["out.bias"]
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return float(-logp[np.arange(len(y)), y[:, 0]].mean())


@pytest.mark.parametrize("converted", [False, True])
def test_gradients_match_finite_differences(converted):
    net, _ = fresh_pair()
    inputs = [InputSpec([None, 3], "float32")] if converted else None
    model = prepared(net, inputs=inputs)
    _, x, y = dataset()
    for xb, yb in ((x[:8], y[:8]), (x[8:16], y[8:16])):  # relu batch, then tanh batch
        (loss,) = model.train_batch([xb], [yb], update=False)
        params = {k: v.numpy().astype("float64") for k, v in net.state_dict().items()}
        assert float(loss) == pytest.approx(numpy_loss(params, xb.astype("float64"), yb),
                                            rel=1e-5)
        for name, p in net.named_parameters():
            def f(value, name=name, params=params, xb=xb, yb=yb):
                return numpy_loss(dict(params, **{name: value}), xb.astype("float64"), yb)
            np.testing.assert_allclose(p.grad.numpy(), numeric_grad(f, params[name]),
                                       rtol=1e-3, atol=1e-5)
        net.clear_gradients()


def test_predict_outputs_and_batches():
    net, _ = fresh_pair()
    model = prepared(net)
    data, x, _ = dataset(n=20)
    batches = model.predict(data, batch_size=8, verbose=0)
    assert len(batches) == 1 and [b.shape for b in batches[0]] == [(8, 2), (8, 2), (4, 2)]
    stacked = model.predict(data, batch_size=8, stack_outputs=True, verbose=0)[0]
    expected = np.concatenate([net(rt.to_tensor(x[i:i + 8])).numpy() for i in (0, 8, 16)])
    np.testing.assert_allclose(stacked, expected, rtol=1e-6)
    loader = rt.io.DataLoader(data, batch_size=10)
    assert model.predict(loader, verbose=0)[0][1].shape == (10, 2)


def test_save_and_load_round_trip(tmp_path):
    net, _ = fresh_pair()
    model = prepared(net)
    data, x, _ = dataset()
    model.fit(data, batch_size=8, epochs=1, verbose=0)
    path = str(tmp_path / "ckpt" / "m")
    model.save(path)
    assert os.path.exists(path + ".pdparams") and os.path.exists(path + ".pdopt")
    rt.seed(99)
    other = prepared(Branchy())
    other.load(path + ".pdparams")
    np.testing.assert_array_equal(other.predict_batch([x[:8]])[0], model.predict_batch([x[:8]])[0])


def test_load_refuses_a_mismatch_unless_told(tmp_path):
    model = prepared(Branchy())
    path = str(tmp_path / "m")
    model.save(path)
    wider = nn.Sequential()
    wider.hidden, wider.out = nn.Linear(3, 8), nn.Linear(8, 3)
    other = rt.Model(wider)
    with pytest.raises(ValueError, match=r"'out.weight' has shape \[8, 2\] in the file"):
        other.load(path)
    with pytest.warns(UserWarning, match="skipping 'out.weight'"), \
            pytest.warns(UserWarning, match="skipping 'out.bias'"):
        other.load(path, skip_mismatch=True)
    np.testing.assert_array_equal(wider.hidden.weight.numpy(), model.network.hidden.weight.numpy())


def test_save_for_inference_reloads_with_d2s(tmp_path):
    net, _ = fresh_pair()
    model = prepared(net, inputs=[InputSpec([None, 3], "float32", "x")])
    _, x, _ = dataset()
    path = str(tmp_path / "infer")
    model.save(path, training=False)
    loaded = d2s.load(path)
    for xb in (x[:8], x[8:13]):  # both branches, another batch size
        np.testing.assert_allclose(loaded(rt.to_tensor(xb)).numpy(),
                                   model.predict_batch([xb])[0], rtol=1e-5, atol=1e-6)


def test_inputs_without_d2s_registered_raise(monkeypatch):
    monkeypatch.setattr(static_converter, "_REGISTERED", {})
    with pytest.raises(static_converter.ConverterMissingError, match="import d2s"):
        rt.Model(Branchy(), inputs=[InputSpec([None, 3])])
    model = rt.Model(Branchy())  # no inputs: eager, no converter needed
    with pytest.raises(rt.hapi.ConverterMissingError, match=r"training=False"):
        model.save("unused", training=False)


def test_clear_errors():
    with pytest.raises(TypeError, match="InputSpecs"):
        rt.Model(Branchy(), inputs=[[None, 3]])
    model = rt.Model(Branchy())
    with pytest.raises(RuntimeError, match="prepare"):
        model.train_batch([np.zeros((2, 3), "float32")], [np.zeros((2, 1), "int64")])
    with pytest.raises(TypeError, match="Metric"):
        model.prepare(metrics=[lambda a, b: a])
    model.prepare(rt.optimizer.SGD(0.1, parameters=model.parameters()), nn.CrossEntropyLoss())
    with pytest.raises(TypeError, match="Dataset or rt.io.DataLoader"):
        model.fit([np.zeros((2, 3))], verbose=0)


def test_accumulated_gradients_update_every_k_steps():
    net, twin = fresh_pair()
    model = prepared(net)
    data, x, y = dataset(n=40)  # 5 batches of 8: updates after 2, 4 and 5 (the rest)
    model.fit(data, batch_size=8, epochs=1, shuffle=False, verbose=0, accumulate_grad_batches=2)
    opt = rt.optimizer.SGD(0.1, parameters=twin.parameters())
    loss_fn = nn.CrossEntropyLoss()
    for group in ((0, 8), (16, 24), (32,)):
        for i in group:
            loss_fn(twin(rt.to_tensor(x[i:i + 8])), rt.to_tensor(y[i:i + 8])).backward()
        opt.step()
        opt.clear_grad()
    for a, b in zip(net.parameters(), twin.parameters(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
        assert a.grad is None or not np.any(a.grad.numpy())


def test_num_iters_caps_the_training_steps():
    model = prepared(Branchy())
    steps = []
    model.train_batch = lambda *args, train=model.train_batch, **kw: (
        steps.append(1), train(*args, **kw))[1]
    data, _, _ = dataset(n=16)  # 2 steps per epoch
    model.fit(data, batch_size=8, epochs=1, verbose=0, num_iters=5)
    assert len(steps) == 5 and model.stop_training
    with pytest.raises(ValueError, match="must be >= 1"):
        model.fit(data, batch_size=8, verbose=0, accumulate_grad_batches=0)
