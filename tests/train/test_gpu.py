"""The training stack on CuPy: optimizer updates, loss scaling, fake quantization and
save/load give the CPU's numbers (run with `-m gpu`; skipped without a CUDA device)."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt
from runtime import quantization as Q

pytestmark = pytest.mark.gpu

RNG = np.random.default_rng(0)
W0 = RNG.standard_normal((5, 3)).astype(np.float32)
GRADS = [RNG.standard_normal((5, 3)).astype(np.float32) for _ in range(3)]


def _train(device, cls):
    rt.set_device(device)
    w = rt.Parameter(W0.copy())
    opt = getattr(rt.optimizer, cls)(0.05, parameters=[w])
    for g in GRADS:
        w.grad = rt.to_tensor(g)
        opt.step()
    return w.numpy(), w._data.__class__.__module__


@pytest.mark.parametrize("cls", ["SGD", "Momentum", "Adam", "AdamW", "RMSProp"])
def test_optimizers_match_cpu(cls):
    cpu, _ = _train("cpu", cls)
    gpu, module = _train("gpu", cls)
    assert module.startswith("cupy")
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5, atol=1e-6)


def test_grad_scaler_and_amp_on_gpu():
    rt.set_device("gpu")
    w = rt.Parameter(W0.copy())
    opt = rt.optimizer.SGD(0.1, parameters=[w])
    scaler = rt.amp.GradScaler(init_loss_scaling=256.0, decr_every_n_nan_or_inf=1)
    with rt.amp.auto_cast():
        y = rt.matmul(rt.ones([2, 5]), w)
        loss = rt.exp(y).mean()
    assert y.dtype == "float16" and loss.dtype == "float32"
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert not np.allclose(w.numpy(), W0)
    w.grad = rt.to_tensor(np.full((5, 3), np.inf, np.float32))
    before = w.numpy()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.numpy(), before)
    assert float(scaler.get_loss_scaling()) == 128.0


def test_fake_quant_and_save_load_on_gpu(tmp_path):
    rt.set_device("cpu")
    want = Q.fake_channel_wise_quant_dequant_abs_max(rt.to_tensor(W0), quant_axis=1)[0].numpy()
    rt.set_device("gpu")
    got = Q.fake_channel_wise_quant_dequant_abs_max(rt.to_tensor(W0), quant_axis=1)[0]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    rt.save({"q": got}, tmp_path / "q.pdparams")
    back = rt.load(tmp_path / "q.pdparams")["q"]
    assert back._data.__class__.__module__.startswith("cupy")
    np.testing.assert_array_equal(back.numpy(), got.numpy())
