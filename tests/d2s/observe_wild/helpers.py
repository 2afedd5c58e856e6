"""What a user observes after a call, compared eager vs converted: every returned leaf by its
Python type (a Tensor by dtype, shape, `stop_gradient` and values, a NumPy array by dtype and
values, a number by type and value), containers by type and length before their items; a
model's parameters, buffers and which `.grad` is None; an optimizer's state by its keys."""
from __future__ import annotations

import math

import numpy as np

import runtime as rt


def assert_same_leaves(got, want, path="result", rtol=1e-5, atol=1e-6):
    assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
    if isinstance(want, rt.Tensor):
        assert (got.dtype, got.shape, got.stop_gradient) == (
            want.dtype, want.shape, want.stop_gradient), path
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=atol,
                                   err_msg=path)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, path
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=path)
    elif isinstance(want, dict):
        assert list(got) == list(want), path
        for k in want:
            assert_same_leaves(got[k], want[k], f"{path}[{k!r}]", rtol, atol)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length {len(got)} vs {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same_leaves(g, w, f"{path}[{i}]", rtol, atol)
    elif isinstance(want, float):
        assert got == want or abs(got - want) <= atol + rtol * abs(want) or (
            math.isnan(got) and math.isnan(want)), (path, got, want)
    else:
        assert got == want, (path, got, want)


def same_with_reference(got, want, ref=None):
    """Equal structure; numbers of one Python type and value; tensors of one dtype, shape,
    stop_gradient and values (and, where given, the NumPy reference's values)."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), (got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            same_with_reference(g, w, None if ref is None else ref[i])
    elif isinstance(want, dict):
        assert list(got) == list(want), (got, want)
        for k in want:
            same_with_reference(got[k], want[k], None if ref is None else ref[k])
    elif isinstance(want, rt.Tensor):
        assert (got.dtype, got.shape, got.stop_gradient) == (
            want.dtype, want.shape, want.stop_gradient), (got, want)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if ref is not None:
            np.testing.assert_allclose(want.numpy(), ref, rtol=1e-6)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype, (got, want)
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want, (got, want)
        if ref is not None:
            assert type(ref) is type(want) and ref == want, (ref, want)


def user_state(obj) -> dict:
    """The attributes of a user object (a Meter, a Trainer) that hold Python values."""
    return {k: list(v) if type(v) is list else v for k, v in vars(obj).items()
            if not isinstance(v, (rt.nn.Layer, rt.optimizer.Optimizer)) and not callable(v)}


def grads_none(model) -> dict:
    return {name: p.grad is None for name, p in model.named_parameters()}


def assert_same_model(got, want, rtol=1e-5, atol=1e-6):
    """Parameters and buffers (names, dtypes, values), which `.grad` is None, the grads."""
    sg, sw = got.state_dict(), want.state_dict()
    assert list(sg) == list(sw)
    for k in sw:
        assert sg[k].dtype == sw[k].dtype, k
        np.testing.assert_allclose(sg[k].numpy(), sw[k].numpy(), rtol=rtol, atol=atol,
                                   err_msg=k)
    assert grads_none(got) == grads_none(want)
    for (name, p), q in zip(got.named_parameters(), want.parameters(), strict=True):
        if q.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=name)


def assert_same_optimizer(got, want, rtol=1e-5, atol=1e-6):
    """The optimizer's `state_dict()`: the same keys (a parameter no step reached has no
    state yet) and values."""
    sg, sw = got.state_dict(), want.state_dict()
    assert sorted(sg) == sorted(sw)
    for k in sw:
        if isinstance(sw[k], dict):
            assert sg[k] == sw[k], k
        else:
            np.testing.assert_allclose(sg[k].numpy(), sw[k].numpy(), rtol=rtol, atol=atol,
                                       err_msg=k)
