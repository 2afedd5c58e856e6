"""BatchNorm followed by ReLU as one op selected by programs (`passes/batch_norm_relu.py`), run
as generated C on the CPU (`batch_norm_native.py`) and as the CUDA kernels on the GPU
(`cuda_batch_norm.py`, here on the fake CuPy with the kernel text compiled as host C++):
which pairs are fused, the C kernels against the op's array code, converted zoo models fused
against unfused (`D2S_FUSION=0`: outputs, SGD training losses, gradients, running
statistics), and gradients against finite differences in training and eval mode."""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from examples.models import ResNet, SpeechClassifier
from runtime.ops import nn_norm
from runtime.ops.nn_batch_norm_relu import _grad_kernel, _kernel
from runtime.program import cuda_batch_norm, native_build
from tests.finite_differences import numeric_grad

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cuda_host
import fake_cupy

pytestmark = pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
nn = rt.nn


class ConvBnRelu(nn.Layer):
    def __init__(self, cin=3, cout=4, dtype="float32"):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 3, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.to(dtype=dtype)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class ReadTwice(ConvBnRelu):
    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.relu(y) + y * 0.5  # (the BatchNorm's output is read beside the relu)


def _spy(monkeypatch):
    """Counts of the native forward and backward kernels' calls."""
    calls = {"batch_norm_relu": 0, "batch_norm_relu_grad": 0}
    for name in calls:
        fn = nn_norm.NATIVE_KERNELS[name]

        def counted(*args, _fn=fn, _name=name):
            calls[_name] += 1
            return _fn(*args)
        monkeypatch.setitem(nn_norm.NATIVE_KERNELS, name, counted)
    return calls


def _images(n=2, c=3, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal((n, c, 6, 6)).astype(dtype)


def test_programs_select_the_fused_pair_forward_and_backward(monkeypatch):
    monkeypatch.setenv("D2S_NATIVE", "sync")
    calls = _spy(monkeypatch)
    rt.seed(0)
    layer = ConvBnRelu()
    static = d2s.to_static(layer)
    x = rt.to_tensor(_images(), stop_gradient=False)
    static(x).sum().backward()
    assert calls == {"batch_norm_relu": 1, "batch_norm_relu_grad": 1}
    training = static.forward.program_cache.last_entry._training
    backward = [o.type for o in training.split.backward.global_block().ops]
    assert backward[:1] == ["batch_norm_relu_grad"] and "batch_norm" not in backward
    layer.eval()
    with rt.no_grad():
        static(x)  # (eval: the running statistics, a program of its own)
    assert calls["batch_norm_relu"] == 2
    text = str(static.forward.concrete_program.main_program)
    assert "batch_norm(" in text and "relu(" in text  # (the traced program is as written)


def test_a_batch_norm_output_read_beside_the_relu_is_not_fused(monkeypatch):
    calls = _spy(monkeypatch)
    rt.seed(0)
    layer = ReadTwice()
    eager = copy.deepcopy(layer)
    static = d2s.to_static(layer)
    x = rt.to_tensor(_images(), stop_gradient=False)
    got = static(x)
    got.sum().backward()
    assert calls == {"batch_norm_relu": 0, "batch_norm_relu_grad": 0}
    np.testing.assert_allclose(got.numpy(), eager(x).numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype, tol", [("float32", 2e-5), ("float64", 1e-11)])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 4, 6, 6), (1, 2, 2, 3, 4)])
@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_c_kernels_equal_the_array_code(monkeypatch, dtype, tol, shape, training, affine):
    monkeypatch.setenv("D2S_NATIVE", "sync")
    rng = np.random.default_rng(1)
    c = shape[1]
    x = (rng.standard_normal(shape) * 2 + 0.3).astype(dtype)
    w, b = ((rng.uniform(0.5, 1.5, c) * rng.choice([-1, 1], c)).astype(dtype),
            rng.standard_normal(c).astype(dtype)) if affine else (None, None)
    rmean, rvar = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    calls = _spy(monkeypatch)
    got = _kernel(np, x, rmean, rvar, w, b, training, 1e-5)
    got_grad = _grad_kernel(np, dy, x, *got, w, b, training, 1e-5)
    assert calls == {"batch_norm_relu": 1, "batch_norm_relu_grad": 1}
    for name in calls:
        monkeypatch.delitem(nn_norm.NATIVE_KERNELS, name)
    want = _kernel(np, x, rmean, rvar, w, b, training, 1e-5)
    want_grad = _grad_kernel(np, dy, x, *want, w, b, training, 1e-5)
    assert len(got) == len(want) == 3 and len(got_grad) == len(want_grad) == 3
    for g, v in zip(got + got_grad, want + want_grad):
        assert g.dtype == v.dtype == np.dtype(dtype) and g.shape == v.shape
        np.testing.assert_allclose(g, v, rtol=tol, atol=tol)
    assert (got[0] >= 0).all()


# the zoo's conv models with BatchNorm -> ReLU (MobileNet's blocks end in relu6: not fused)
ZOO = {
    "resnet": (lambda: ResNet(widths=(8, 16), blocks_per_stage=2),
               lambda s: (rt.to_tensor(np.random.RandomState(s).randn(6, 3, 16, 16)
                                       .astype("float32")),), 10),
    "speech": (lambda: SpeechClassifier(8),
               lambda s: (rt.to_tensor(np.random.RandomState(s).randn(6, 20, 8)
                                       .astype("float32")),
                          rt.to_tensor(np.full(6, 20, "int64"))), 6),
}


def _trained(model, fusion, monkeypatch, make_inputs, classes):
    """A converted copy trained 3 SGD steps with fusion on ("1") or off ("0"): (losses, the
    last step's gradients, the state after, eval outputs after)."""
    monkeypatch.setenv("D2S_FUSION", fusion)
    model = copy.deepcopy(model)
    static = d2s.to_static(model)
    opt = rt.optimizer.SGD(learning_rate=0.05, parameters=model.parameters())
    labels = np.random.RandomState(7).randint(0, classes, 6).astype("int64")
    losses, grads = [], {}
    model.train()
    for step in range(3):
        loss = F.cross_entropy(static(*make_inputs(step)), rt.to_tensor(labels))
        loss.backward()
        grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()
                 if p.grad is not None}
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    model.eval()
    with rt.no_grad():
        out = static(*make_inputs(9)).numpy()
    return losses, grads, {k: v.numpy() for k, v in model.state_dict().items()}, out


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_conv_models_fused_equal_unfused(monkeypatch, name):
    make, make_inputs, classes = ZOO[name]
    rt.seed(4)
    model = make()
    calls = _spy(monkeypatch)
    fused = _trained(model, "1", monkeypatch, make_inputs, classes)
    assert calls["batch_norm_relu"] >= 4 and calls["batch_norm_relu_grad"] >= 3
    before = dict(calls)
    unfused = _trained(model, "0", monkeypatch, make_inputs, classes)
    assert calls == before  # (D2S_FUSION=0: nothing fused)
    (l1, g1, s1, o1), (l0, g0, s0, o0) = fused, unfused
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    assert sorted(g1) == sorted(g0) and sorted(s1) == sorted(s0)
    for k in g0:
        if "conv" in k and "bias" in k:  # (before BatchNorm: its true gradient is 0)
            continue
        np.testing.assert_allclose(g1[k], g0[k], rtol=1e-3, atol=1e-5, err_msg=k)
    for k in s0:
        np.testing.assert_allclose(s1[k], s0[k], rtol=1e-4, atol=1e-5, err_msg=k)
    np.testing.assert_allclose(o1, o0, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
def test_gradients_equal_finite_differences(monkeypatch, training):
    monkeypatch.setenv("D2S_NATIVE", "sync")
    calls = _spy(monkeypatch)
    rt.seed(2)
    layer = ConvBnRelu(2, 3, dtype="float64")
    with rt.no_grad():  # (running statistics away from 0 and 1)
        layer(rt.to_tensor(_images(4, 2, seed=5, dtype="float64")))
    if not training:
        layer.eval()
    static = d2s.to_static(layer)
    bn = layer.bn
    w_conv = layer.conv.weight.numpy()
    gamma, beta = bn.weight.numpy(), bn.bias.numpy()
    rmean, rvar = bn._mean.numpy().copy(), bn._variance.numpy().copy()
    xa = _images(3, 2, seed=6, dtype="float64")
    dy = np.random.default_rng(8).standard_normal((3, 3, 6, 6))
    x = rt.to_tensor(xa, stop_gradient=False)
    (static(x) * rt.to_tensor(dy)).sum().backward()
    assert calls["batch_norm_relu_grad"] == 1

    def reference(xv, wv, g, b):
        conv = np.zeros((xv.shape[0], wv.shape[0], 6, 6))
        padded = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
        for i in range(3):
            for j in range(3):
                window = padded[:, :, i:i + 6, j:j + 6]
                conv += np.einsum("ncij,oc->noij", window, wv[:, :, i, j])
        if training:
            mean, var = conv.mean(axis=(0, 2, 3)), conv.var(axis=(0, 2, 3))
        else:
            mean, var = rmean, rvar
        shape = (1, -1, 1, 1)
        y = (conv - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5)
        return float((np.maximum(y * g.reshape(shape) + b.reshape(shape), 0) * dy).sum())

    checks = [(x.grad, numeric_grad(lambda v: reference(v, w_conv, gamma, beta), xa)),
              (layer.conv.weight.grad, numeric_grad(lambda v: reference(xa, v, gamma, beta),
                                                    w_conv)),
              (bn.weight.grad, numeric_grad(lambda v: reference(xa, w_conv, v, beta), gamma)),
              (bn.bias.grad, numeric_grad(lambda v: reference(xa, w_conv, gamma, v), beta))]
    for got, want in checks:
        assert got is not None and tuple(got.shape) == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(cuda_host.COMPILER is None, reason="no C++ compiler")
@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
def test_gpu_programs_select_the_cuda_kernels(monkeypatch, training):
    """On the (fake) GPU a converted Conv -> BatchNorm -> ReLU runs the CUDA BatchNorm + ReLU
    kernels forward and backward, with the values of the unfused CPU program."""
    xa = _images(seed=1)
    dy = np.random.default_rng(2).standard_normal((2, 4, 6, 6)).astype("float32")

    def run():
        rt.seed(3)
        layer = ConvBnRelu()
        with rt.no_grad():
            layer(rt.to_tensor(_images(4, seed=5)))
        if not training:
            layer.eval()
        x = rt.to_tensor(xa, stop_gradient=False)
        out = d2s.to_static(layer)(x)
        (out * rt.to_tensor(dy)).sum().backward()
        return [t.numpy() for t in (out, x.grad, layer.conv.weight.grad, layer.bn.weight.grad,
                                    layer.bn.bias.grad)]

    monkeypatch.setenv("D2S_FUSION", "0")
    want = run()
    monkeypatch.setenv("D2S_FUSION", "1")
    seen = []
    for name in ("batch_norm_relu", "batch_norm_relu_grad"):
        fn = getattr(cuda_batch_norm, name)

        def spied(xp, *args, _fn=fn, _name=name, **kw):
            out = _fn(xp, *args, **kw)
            if kw.get("relu", True):  # (batch_norm alone runs the kernel without its relu)
                seen.append((_name, out is not None))
            return out
        monkeypatch.setattr(cuda_batch_norm, name, spied)
    with fake_cupy.installed(), cuda_host.installed():
        got = run()
    assert seen == [("batch_norm_relu", True), ("batch_norm_relu_grad", True)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)


@pytest.mark.gpu
def test_real_cuda_kernels_are_chosen_and_equal_the_cpu(monkeypatch):
    """On a GPU: the converted block's BatchNorm + ReLU runs the real CUDA kernels, with the
    values and gradients of the unfused CPU program."""
    pytest.importorskip("cupy")
    calls = []
    real = cuda_batch_norm.batch_norm_relu_grad

    def spied(*args, **kw):
        out = real(*args, **kw)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(cuda_batch_norm, "batch_norm_relu_grad", spied)
    xa = _images(4, seed=1)

    def run():
        rt.seed(3)
        layer = ConvBnRelu()
        x = rt.to_tensor(xa, stop_gradient=False)
        out = d2s.to_static(layer)(x)
        (out * out).sum().backward()
        return [out.numpy(), x.grad.numpy(), layer.bn.weight.grad.numpy()]

    monkeypatch.setenv("D2S_FUSION", "0")
    want = run()
    monkeypatch.setenv("D2S_FUSION", "1")
    rt.set_device("gpu")
    try:
        got = run()
    finally:
        rt.set_device("cpu")
    assert calls == [True]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)
