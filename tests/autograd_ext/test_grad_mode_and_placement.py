"""rt.set_grad_enabled, Tensor.to / Tensor.cpu, rt.DataParallel at Paddle's place, and
rt.device: eagerly and in converted code, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt

X0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def test_set_grad_enabled_as_context_call_and_decorator():
    x = rt.to_tensor(X0, stop_gradient=False)
    with rt.set_grad_enabled(False):
        assert (x * 2).stop_gradient and not rt.is_grad_enabled()
        with rt.set_grad_enabled(True):
            assert not (x * 2).stop_gradient
    assert rt.is_grad_enabled()
    rt.set_grad_enabled(False)  # a plain call switches at once
    try:
        assert (x * 2).stop_gradient
    finally:
        rt.set_grad_enabled(True)

    @rt.set_grad_enabled(False)
    def frozen(t):
        return t * 3

    assert rt.is_grad_enabled()
    assert frozen(x).stop_gradient and not (x * 3).stop_gradient


def _mixed(x, train_second):
    a = rt.tanh(x) * 2
    with rt.set_grad_enabled(train_second):
        b = (x * x).sum(axis=1, keepdim=True)
    return (a * b).sum()


@pytest.mark.parametrize("train_second", [True, False])
def test_set_grad_enabled_in_converted_code_matches_eager_and_numpy(train_second):
    def ref(a):
        b = (a * a).sum(axis=1, keepdims=True)
        return float((np.tanh(a) * 2 * b).sum()), b

    static = d2s.to_static(_mixed)
    grads = []
    for fn in (_mixed, static):
        x = rt.to_tensor(X0, stop_gradient=False)
        loss = fn(x, train_second)
        np.testing.assert_allclose(loss.numpy(), ref(X0)[0], rtol=1e-12)
        loss.backward()
        grads.append(x.grad.numpy())
    b0 = ref(X0)[1]
    expected = (numeric_grad(lambda a: ref(a)[0], X0) if train_second
                else numeric_grad(lambda a: float((np.tanh(a) * 2 * b0).sum()), X0))
    for g in grads:
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


def test_tensor_to_and_cpu_copy_cast_and_pass_gradients():
    x = rt.to_tensor(X0.astype("float32"), stop_gradient=False)
    y = x.to("float64")
    assert y.dtype == "float64" and y is not x
    np.testing.assert_array_equal(y.numpy(), X0.astype("float32").astype("float64"))
    assert x.to("cpu", "int64").tolist() == X0.astype("int64").tolist()
    assert x.to(dtype=rt.float16).dtype == "float16"
    assert x.to(rt.zeros([1], "float64")).dtype == "float64"
    c = x.cpu()
    assert c.place == "cpu" and c.dtype == "float32"
    ((y * y).sum() + c.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * X0 + 1, rtol=1e-6)
    with pytest.raises(TypeError, match=r"Tensor.to: cannot read 3 as a device or a dtype"):
        x.to(3)
    if not rt.is_compiled_with_cuda():
        with pytest.raises(RuntimeError, match=r"Tensor.to\('gpu'\): no usable CUDA device"):
            x.to("gpu")


@d2s.to_static
def _cast_through_to(x):
    return (x.to("float64") * 2).cpu().sum(axis=0)


def test_tensor_to_in_converted_code_matches_eager():
    x = rt.to_tensor(X0.astype("float32"))
    got = _cast_through_to(x)
    assert got.dtype == "float64"
    np.testing.assert_array_equal(got.numpy(), (X0.astype("float32").astype("float64") * 2)
                                  .sum(axis=0))


def test_data_parallel_is_at_the_top_level_and_wraps_a_layer():
    assert rt.DataParallel is rt.distributed.DataParallel
    rt.seed(1)
    fc = rt.nn.Linear(3, 2)
    model = rt.DataParallel(fc)
    x = rt.to_tensor(X0, "float32")
    np.testing.assert_allclose(model(x).numpy(), X0 @ fc.weight.numpy() + fc.bias.numpy(),
                               rtol=1e-6)


def test_device_namespace():
    assert rt.device.set_device("cpu") == "cpu"
    assert rt.device.get_device() == "cpu" == rt.get_device()
    assert rt.device.is_compiled_with_cuda() == rt.is_compiled_with_cuda()
    assert (rt.device.device_count() > 0) == rt.is_compiled_with_cuda()
    if not rt.is_compiled_with_cuda():
        for name in ("gpu", "gpu:0"):
            with pytest.raises(RuntimeError, match="no usable CUDA device"):
                rt.device.set_device(name)
        assert rt.device.get_device() == "cpu"
    with pytest.raises(ValueError, match=r"set_device: unknown device 'tpu'"):
        rt.device.set_device("tpu")


@pytest.mark.gpu
def test_gpu_device_and_cpu_copy():
    rt.device.set_device("gpu:0")
    assert rt.device.get_device() == "gpu:0"
    x = rt.to_tensor(X0)
    assert x.place == "gpu:0"
    c = x.cpu()
    assert c.place == "cpu"
    np.testing.assert_array_equal(c.numpy(), X0)
