"""What every model-family test checks (issue 22, "Must show"): from identical parameters, a
few optimizer steps eagerly and with `forward` converted give equal losses and parameters;
the converted model saved without an input_spec reloads and, fed a batch of another size,
predicts what the eager model predicts.

A family module gives `make_model()`, `batch(rng, n)` (a tuple of input arrays followed by
the target arrays), `loss_of(model, *batch)` and `predict_inputs(batch)` (the inputs the
saved inference model takes).
"""
from __future__ import annotations

import copy

import numpy as np

import d2s
import runtime as rt

LOSS_RTOL = 1e-4


def _tensors(arrays):
    return [rt.to_tensor(a) for a in arrays]


def train(model, batches, loss_of, opt_cls, lr, seed=0):
    rt.seed(seed)  # dropout draws the same stream eagerly and converted
    model.train()
    opt = opt_cls(learning_rate=lr, parameters=model.parameters())
    losses = []
    for b in batches:
        loss = loss_of(model, *_tensors(b))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def leaves(x):
    if isinstance(x, (list, tuple)):
        return [a for t in x for a in leaves(t)]
    return [x.numpy()]


def check_family(tmp_path, make_model, batch, loss_of, n_inputs, *, steps=3, train_batch=4,
                 infer_batch=3, opt_cls=rt.optimizer.Adam, lr=0.01, rtol=LOSS_RTOL,
                 atol=1e-5, seed=0, forward=None, skip_params=()):
    """Train eagerly and converted, compare; save the converted model without input_spec,
    reload, and compare its predictions on `infer_batch` samples with the eager model's.
    `forward(model, *inputs)` is what the saved model computes (default: `model(*inputs)`).
    `skip_params`: name suffixes of parameters whose gradient is zero in exact arithmetic
    (attention key biases): Adam turns float noise there into lr-sized steps."""
    rt.seed(seed)
    model = make_model()
    eager, static = copy.deepcopy(model), d2s.to_static(copy.deepcopy(model))
    rng = np.random.default_rng(seed)
    batches = [batch(rng, train_batch) for _ in range(steps)]
    want = train(eager, batches, loss_of, opt_cls, lr, seed)
    got = train(static, batches, loss_of, opt_cls, lr, seed)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg="losses")
    assert all(np.isfinite(want)), want
    for (name, p), q in zip(eager.named_parameters(), static.parameters()):
        if name.endswith(skip_params):
            continue
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-3, atol=1e-4, err_msg=name)
    # save without input_spec after a call with the training batch size, reload, predict
    eager.eval()
    static.eval()
    call = forward or (lambda m, *xs: m(*xs))
    with rt.no_grad():
        call(static, *_tensors(batches[0][:n_inputs]))
        path = str(tmp_path / "model")
        d2s.save(static, path)
        loaded = d2s.load(path)
        inputs = batch(np.random.default_rng(seed + 1), infer_batch)[:n_inputs]
        want_out = leaves(call(eager, *_tensors(inputs)))
        got_out = leaves(loaded(*_tensors(inputs)))
    assert len(got_out) == len(want_out)
    for g, w in zip(got_out, want_out, strict=True):
        assert g.shape[0] == infer_batch or g.ndim == 0 or w.shape == g.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg="reloaded prediction")
    return want
