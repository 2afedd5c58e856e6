"""Shared checks for layer tests: autograd vs central differences through a whole Layer.

The loss is a fixed random projection of every output, so each output element matters:
`backward` gets the projection weights as output gradients, and the numerical gradient
perturbs one input or parameter element at a time (in float64).
"""
from __future__ import annotations

import numpy as np

import runtime as rt
from runtime.autograd import backward


def _flat_outputs(out):
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat_outputs(o)]
    return [] if out is None else [out]


def check_grads(fn, inputs, params=(), eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """Compare autograd gradients of `fn(*inputs)` w.r.t. the float inputs and `params`
    (Parameters used inside `fn`) with central differences. Inputs are NumPy arrays."""
    rng = np.random.default_rng(seed)
    tensors = [rt.to_tensor(a, stop_gradient=not np.issubdtype(a.dtype, np.floating))
               if isinstance(a, np.ndarray) else a for a in inputs]
    outs = _flat_outputs(fn(*tensors))
    weights = [rng.standard_normal(o.shape) for o in outs]
    backward(outs, [rt.to_tensor(w, dtype=o.dtype) for o, w in zip(outs, weights)])

    def loss():
        with rt.no_grad():
            got = _flat_outputs(fn(*tensors))
        return sum(float((o.numpy() * w).sum()) for o, w in zip(got, weights))

    targets = [t for t in tensors if isinstance(t, rt.Tensor) and not t.stop_gradient]
    targets += list(params)
    for t in targets:
        data = t._data
        numeric = np.zeros(data.shape)
        for idx in np.ndindex(*data.shape):
            old = data[idx]
            data[idx] = old + eps
            up = loss()
            data[idx] = old - eps
            down = loss()
            data[idx] = old
            numeric[idx] = (up - down) / (2 * eps)
        assert t.grad is not None, f"no gradient reached {t.name or 'an input'}"
        np.testing.assert_allclose(t.grad.numpy(), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of {t.name or 'an input'}")
