"""Shared checks for the model zoo: eager vs `d2s.to_static` from identical parameters.

- `check_eval`: equal outputs in eval mode (atol 1e-5);
- `check_training`: 5 Adam steps with only `forward` converted (the loop stays eager) give
  equal losses (atol 1e-4) to an eager copy and update the same parameters (values are not
  compared: Adam turns float noise in a zero gradient, e.g. of an attention key bias, into
  lr-sized steps);
- `check_buffers_after_training`: BatchNorm running statistics agree after that training;
- `check_dynamic_batch`: an InputSpec with a None batch dim serves two batch sizes with one
  program, each equal to eager.
"""
from __future__ import annotations

import copy

import numpy as np

import d2s
import runtime as rt

EVAL_ATOL = 1e-5
LOSS_ATOL = 1e-4

def leaves(x) -> list[np.ndarray]:
    if isinstance(x, (list, tuple)):
        return [a for t in x for a in leaves(t)]
    return [np.asarray(x.numpy())]


def assert_outputs_equal(got, want, atol: float, what: str) -> None:
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want), f"{what}: {len(got)} outputs vs {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, \
            f"{what} output {i}: {g.shape} {g.dtype} vs {w.shape} {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=0, atol=atol, err_msg=f"{what} output {i}")


def converted_copy(model, input_spec=None):
    """A deep copy of `model` (same parameter values) with its forward converted."""
    return d2s.to_static(copy.deepcopy(model), input_spec=input_spec)


def check_eval(model, *inputs_list) -> rt.nn.Layer:
    """Eager vs static in eval mode on each tuple of inputs; returns the converted copy."""
    model.eval()
    static = converted_copy(model)
    static.eval()
    for inputs in inputs_list:
        with rt.no_grad():
            want = model(*inputs)
            got = static(*inputs)
        assert_outputs_equal(got, want, EVAL_ATOL, "eval")
    # The outputs came from a traced program, not an eager fallback.
    assert len(static.forward.program_cache) >= 1
    assert static.forward.concrete_program.main_program.num_ops() > 0
    return static


def train_losses(model, batches, loss_of, lr: float) -> list[float]:
    model.train()
    opt = rt.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    losses = []
    for batch in batches:
        loss = loss_of(model, *batch)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def check_training(model, batches, loss_of, lr: float = 0.01) -> list[float]:
    """`loss_of(model, *batch)` for each batch (5 expected), training an eager copy and a copy
    whose forward is converted, from the same parameters."""
    eager = copy.deepcopy(model)
    static = converted_copy(model)
    want = train_losses(eager, batches, loss_of, lr)
    got = train_losses(static, batches, loss_of, lr)
    np.testing.assert_allclose(got, want, rtol=0, atol=LOSS_ATOL)
    def moved(trained):
        return [name for (name, p), q in zip(model.named_parameters(), trained.parameters(),
                                             strict=True)
                if not np.array_equal(p.numpy(), q.numpy())]
    assert moved(static) == moved(eager) and moved(static), \
        f"updated parameters differ: static {moved(static)}, eager {moved(eager)}"
    assert len(static.forward.program_cache) == 1
    return want


def check_buffers_after_training(model, batches, loss_of, lr: float = 0.01) -> None:
    """After the same training, buffers (BatchNorm running statistics) are equal, so eval
    outputs agree too."""
    eager = copy.deepcopy(model)
    static = converted_copy(model)
    train_losses(eager, batches, loss_of, lr)
    train_losses(static, batches, loss_of, lr)
    params = {name for name, _ in model.named_parameters()}
    want, got = eager.state_dict(), static.state_dict()
    buffers = [name for name in want if name not in params]
    assert buffers, "the model has no buffers"
    for name in buffers:
        np.testing.assert_allclose(got[name].numpy(), want[name].numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)


def check_dynamic_batch(model, specs, inputs_a, inputs_b) -> None:
    """One program (InputSpec with None batch) for two batch sizes, equal to eager."""
    model.eval()
    static = converted_copy(model, input_spec=specs)
    static.eval()
    for inputs in (inputs_a, inputs_b):
        with rt.no_grad():
            assert_outputs_equal(static(*inputs), model(*inputs), EVAL_ATOL, "dynamic batch")
    assert len(static.forward.program_cache) == 1
    spec_shape = static.forward.concrete_program.inputs[0].shape
    assert spec_shape[0] == -1, spec_shape
