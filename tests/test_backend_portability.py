"""Kernels stay on the device: every op, a training step and a static program run on
`fake_cupy` (a NumPy-backed stand-in as strict as CuPy about host arrays) and give the CPU's
numbers, with every kernel output a device array. This is the CPU-side check of the promise
that `rt.set_device('gpu')` runs the same kernels on CuPy. Each test also has a `gpu`
variant that runs the same checks on real CuPy (`pytest -m gpu`, benchmarks/gpu_check.sh).
"""
from __future__ import annotations

import contextlib
import pathlib
import sys

import numpy as np
import pytest

import runtime as rt
from runtime import backend, static
from runtime.ops import registry

HERE = pathlib.Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE / "ops")]

import fake_cupy
import test_generated as tg


@contextlib.contextmanager
def device_outputs_only(leaks: list):
    """Record every kernel output that is not a device array (a silent fall-back to NumPy)."""
    saved = {op: op.kernel for op in registry.OPS.values()}
    device_xp = backend.XP

    def spy(op, kernel):
        def run(xp, *arrays, **attrs):
            assert xp is device_xp, f"{op.name}: kernel got xp={xp!r}"
            out = kernel(xp, *arrays, **attrs)
            for k, o in enumerate(out if isinstance(out, tuple) else (out,)):
                if not isinstance(o, device_xp.ndarray):
                    leaks.append(f"{op.name} output {k} is {type(o).__module__}."
                                 f"{type(o).__name__}")
            return out
        return run

    for op, kernel in saved.items():
        op.kernel = spy(op, kernel)
    try:
        yield
    finally:
        for op, kernel in saved.items():
            op.kernel = kernel


@contextlib.contextmanager
def _real_gpu():
    rt.set_device("gpu")
    try:
        yield
    finally:
        rt.set_device("cpu")


DEVICES = ["fake", pytest.param("gpu", marks=pytest.mark.gpu)]


@contextlib.contextmanager
def on_device(device: str):
    """`fake_cupy` or the real GPU in force, every kernel output checked to be on it."""
    leaks: list = []
    with fake_cupy.installed() if device == "fake" else _real_gpu(), device_outputs_only(leaks):
        yield
    assert not leaks, "kernels returned host arrays:\n" + "\n".join(sorted(set(leaks)))


def test_fake_device_is_as_strict_as_cupy():
    """The stand-in refuses what CuPy refuses, so the tests below can fail."""
    cp = fake_cupy.FAKE
    a = cp.arange(4.0)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a)
    with pytest.raises(TypeError, match="host numpy array"):
        a + np.ones(4)
    with pytest.raises(TypeError, match="host numpy array"):
        cp.concatenate([a, np.ones(2)])
    with pytest.raises(TypeError, match="bfloat16"):
        cp.zeros(2, dtype=rt.bfloat16.np)
    assert isinstance(np.exp(a), cp.ndarray) and isinstance(a.sum(), cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(a[np.array([1, 3])]), [1.0, 3.0])
    with fake_cupy.installed():
        t = rt.to_tensor([1.0, 2.0])
        assert isinstance(t._data, cp.ndarray) and rt.get_device() == "gpu:0"
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert rt.get_device() == "cpu"


def _first_dtype_values(info):
    dtype = info.dtypes[0]
    out = []
    for sample in info.samples(np.random.default_rng(0)):
        args = tg.cast_args(sample.args, dtype)
        out.append([tg.to_numpy(o) for o in tg.as_list(info.fn(*tg.to_tensors(args),
                                                                **sample.kwargs))])
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info", tg.OPINFOS, ids=[i.name for i in tg.OPINFOS])
def test_op_runs_on_device(info, device):
    """Every sample of every op, eager, on the device: same values as the CPU, device outputs;
    the first differentiable sample's gradients too, eager and static; the first sample as a
    static program."""
    rt.seed(0)
    cpu = _first_dtype_values(info)
    samples = info.samples(np.random.default_rng(0))
    grad_sample = next((s for s in samples if s.grad and info.grad is not False
                        and tg.grad_positions(info, tg.cast_args(s.args, "float64"))), None)
    ws, cpu_grads = _grads(info, grad_sample) if grad_sample else (None, None)
    static_grads = static_out = None
    with on_device(device):
        rt.seed(0)
        dev = _first_dtype_values(info)
        _, dev_grads = _grads(info, grad_sample) if grad_sample else (None, None)
        if info.static:
            args = tg.cast_args(samples[0].args, "float64")
            static_out, _ = tg.run_static(info, args, samples[0].kwargs)
            if grad_sample is not None and any(w is not None for w in ws):
                args = tg.cast_args(grad_sample.args, "float64")
                _, static_grads = tg.run_static(info, args, grad_sample.kwargs,
                                                tg.grad_positions(info, args), ws)
    for c, d in zip(cpu, dev, strict=True):
        tg.check_close(info, info.dtypes[0], d, c, "device vs cpu")
    if cpu_grads is not None:  # float64: CuPy's kernels may round differently from NumPy's
        tol = 1e-9 if device == "fake" else 1e-7
        for c, d in zip(cpu_grads, dev_grads, strict=True):
            np.testing.assert_allclose(d, c, rtol=tol, atol=tol * 1e-3, err_msg=info.name)
        for c, d in zip(cpu_grads, static_grads, strict=True) if static_grads else ():
            np.testing.assert_allclose(_host(d), c, rtol=tol, atol=tol * 1e-3,
                                       err_msg=f"{info.name} static gradient on the device")
    if static_out is not None:
        rt.seed(0)
        want = tg.as_list(info.fn(*tg.to_tensors(tg.cast_args(samples[0].args, "float64")),
                                  **samples[0].kwargs))
        tg.check_close(info, "float64", [_host(s) for s in static_out],
                       [w.numpy() for w in want], "static on device vs eager cpu")


def _host(a):
    assert not isinstance(a, fake_cupy.ndarray), "Executor.run must return host arrays"
    return np.asarray(a)


def _grads(info, sample):
    args = tg.cast_args(sample.args, "float64")
    positions = tg.grad_positions(info, args)
    outs = tg.as_list(info.fn(*tg.to_tensors(args), **sample.kwargs))
    rng = np.random.default_rng(1)
    ws = [w if o.dtype.is_floating else None for w, o in zip(tg.cotangents(rng, outs), outs)]
    return ws, tg.eager_grads(info, args, sample.kwargs, positions, ws)


def _train_cnn(steps=2):
    """A conv + batch norm + pool + linear + dropout classifier, Adam, a few steps. (The
    convolution has no bias, as before a BatchNorm in model code: BatchNorm cancels it, so
    its gradient is rounding noise that Adam scales to full steps, and the host's C kernel and
    the device's GEMM round differently.)"""
    rt.seed(0)
    model = rt.nn.Sequential(
        rt.nn.Conv2D(2, 4, 3, padding=1, bias_attr=False), rt.nn.BatchNorm2D(4), rt.nn.ReLU(),
        rt.nn.MaxPool2D(2), rt.nn.Flatten(), rt.nn.Dropout(0.0), rt.nn.Linear(4 * 3 * 3, 3))
    opt = rt.optimizer.Adam(0.01, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = rt.to_tensor(rng.standard_normal((5, 2, 6, 6)).astype(np.float32))
    y = rt.to_tensor(rng.integers(0, 3, (5,)))
    losses = []
    for _ in range(steps):
        loss = rt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    if backend.XP is not np:  # initializers fill on the host; parameters must end up here
        assert all(isinstance(p._data, backend.XP.ndarray) for p in model.parameters())
    return losses, [p.numpy() for p in model.parameters()]


@pytest.mark.parametrize("device", DEVICES)
def test_cnn_training_step_on_device(device):
    cpu_losses, cpu_params = _train_cnn()
    with on_device(device):
        dev_losses, dev_params = _train_cnn()
    np.testing.assert_allclose(dev_losses, cpu_losses, rtol=1e-5)
    assert len(dev_params) == len(cpu_params) == 5
    for c, d in zip(cpu_params, dev_params, strict=True):
        np.testing.assert_allclose(d, c, rtol=1e-5, atol=1e-6)


def _training_stack(tmp_path):
    """Each optimizer's update, a scaled AMP step, fake quantization and a save/load trip."""
    from runtime import quantization as Q

    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    grads = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(2)]
    out = {}
    for cls in ["SGD", "Momentum", "Adam", "AdamW", "RMSProp"]:
        w = rt.Parameter(w0.copy())
        opt = getattr(rt.optimizer, cls)(0.05, parameters=[w])
        for g in grads:
            w.grad = rt.to_tensor(g)
            opt.step()
        out[cls] = w.numpy()
    w = rt.Parameter(w0.copy())
    opt = rt.optimizer.SGD(0.1, parameters=[w])
    scaler = rt.amp.GradScaler(init_loss_scaling=256.0)
    with rt.amp.auto_cast():
        loss = rt.exp(rt.matmul(rt.ones([2, 5]), w)).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    out["amp"] = w.numpy()
    q = Q.fake_channel_wise_quant_dequant_abs_max(rt.to_tensor(w0), quant_axis=1)[0]
    out["quant"] = q.numpy()
    rt.save({"q": q}, tmp_path / "q.pdparams")
    back = rt.load(tmp_path / "q.pdparams")["q"]
    assert isinstance(back._data, backend.XP.ndarray), "loaded tensors live on the device"
    out["load"] = back.numpy()
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_training_stack_on_device(tmp_path, device):
    cpu = _training_stack(tmp_path)
    with on_device(device):
        dev = _training_stack(tmp_path)
    assert dev.keys() == cpu.keys() and len(cpu) == 8
    for k in cpu:
        np.testing.assert_allclose(dev[k], cpu[k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("device", DEVICES)
def test_control_flow_program_on_device(device):
    """cond inside while, compiled for the device; Executor.run hands back host arrays."""
    from static.test_control_flow import _nested_cond_in_while

    feed = {"x": np.array([0.3, -0.2, 0.5]), "n": np.int64(3), "p": np.bool_(True)}
    main, _, fetch = _nested_cond_in_while()
    cpu = static.Executor().run(main, feed, list(fetch))
    with on_device(device):
        main, _, fetch = _nested_cond_in_while()
        dev = static.Executor().run(main, feed, list(fetch))
    for a, b in zip(cpu, dev, strict=True):
        np.testing.assert_allclose(_host(b), a, rtol=1e-12)


def test_bfloat16_on_device_is_a_clear_error():
    """CuPy before 14 has no bfloat16: asking for it on the device says so, naming the dtype."""
    with on_device("fake"), pytest.raises(TypeError, match="bfloat16"):
        rt.to_tensor([1.0, 2.0], dtype="bfloat16")


@pytest.mark.gpu
def test_bfloat16_on_gpu_works_or_names_the_dtype():
    """CuPy 14 with ml_dtypes computes in bfloat16; older CuPy must refuse it by name."""
    want = (rt.to_tensor([1.5, -2.0], dtype="bfloat16") * 2.0).numpy()
    with on_device("gpu"):
        try:
            got = (rt.to_tensor([1.5, -2.0], dtype="bfloat16") * 2.0).numpy()
        except Exception as e:  # noqa: BLE001 - which exception CuPy raises is not promised
            assert "bfloat16" in str(e), f"unclear bfloat16 error on the GPU: {e!r}"
            return
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_fake_device_leaves_cpu_untouched():
    assert backend.XP is np and rt.get_device() == "cpu"
