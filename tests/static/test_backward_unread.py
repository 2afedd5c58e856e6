"""`gradients` drops the backward ops nothing reads (runtime/program/backward.py
`drop_unread`): a gradient rule computes the gradients of all of an op's inputs, so the
input gradient of a layer whose input needs none (`g @ W.T`, as costly as the forward's
GEMM) was computed and thrown away. The gradients that are asked for keep their values
(finite differences), and ops with effects stay.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import numeric_grad

import d2s
import runtime as rt
from runtime import static


def _count(program, op_type: str) -> int:
    return sum(op.type == op_type for op in program.global_block().ops)


def _two_layers(w1, w2, x_needs_grad: bool):
    """relu(x @ w1) @ w2 summed, built in a fresh program; (program, loss, x)."""
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [5, 3], "float64")
        x.stop_gradient = not x_needs_grad
        loss = rt.sum(rt.matmul(rt.nn.functional.relu(rt.matmul(x, w1)), w2) ** 2)
    return main, loss, x


@pytest.mark.parametrize("x_needs_grad", [False, True])
def test_only_the_needed_gradients_are_computed(x_needs_grad):
    rng = np.random.default_rng(0)
    w1 = rt.Parameter(rng.standard_normal((3, 4)), name="w1_unread")
    w2 = rt.Parameter(rng.standard_normal((4, 2)), name="w2_unread")
    main, loss, x = _two_layers(w1, w2, x_needs_grad)
    wrt = [w1, w2] + ([x] if x_needs_grad else [])
    grads = static.gradients([loss], wrt)
    # forward 2 GEMMs; backward: both weight gradients, the hidden layer's input gradient,
    # and the input's only where it is asked for
    assert _count(main, "matmul") == 2 + 3 + x_needs_grad
    names = {g.name for g in grads}
    assert all(name in main.global_block().vars for name in names)

    xa = rng.standard_normal((5, 3))
    got = static.Executor().run(main, {"x": xa}, grads)
    a1, a2 = w1.numpy(), w2.numpy()

    def f(x_, w1_, w2_):
        return (np.maximum(x_ @ w1_, 0) @ w2_) ** 2

    expected = [numeric_grad(lambda a: f(xa, a, a2).sum(), a1),
                numeric_grad(lambda a: f(xa, a1, a).sum(), a2)]
    if x_needs_grad:
        expected.append(numeric_grad(lambda a: f(a, a1, a2).sum(), xa))
    assert len(got) == len(expected)
    for value, ref in zip(got, expected):
        np.testing.assert_allclose(value, ref, rtol=1e-6, atol=1e-8)


def test_ops_with_effects_stay():
    rng = np.random.default_rng(1)
    w = rt.Parameter(rng.standard_normal((3, 2)), name="w_unread_effects")
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [4, 3], "float64")
        h = rt.matmul(x, w)
        h.register_hook(lambda g: g * 2.0)
        loss = rt.sum(h * h)
    grad, = static.gradients([loss], [w])
    assert _count(main, "grad_hook") == 1
    xa = rng.standard_normal((4, 3))
    got, = static.Executor().run(main, {"x": xa}, [grad])
    np.testing.assert_allclose(got, 2 * xa.T @ (2 * xa @ w.numpy()), rtol=1e-12)


class Block(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = rt.nn.Linear(6, 8), rt.nn.Linear(8, 6)

    def forward(self, x):
        return x + self.fc2(rt.nn.functional.relu(self.fc1(x)))


def test_a_converted_training_step_skips_the_input_gradient():
    """The whole step converted: eager and converted give the same loss and parameters over
    steps whose inputs take different relu paths, and the program's backward has no GEMM
    for the input's gradient."""
    rt.seed(0)
    eager = Block()
    converted = Block()
    converted.set_state_dict(eager.state_dict())
    opts = [rt.optimizer.SGD(0.1, parameters=m.parameters()) for m in (eager, converted)]

    def step_of(model, opt):
        def step(x):
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            return loss
        return step

    eager_step = step_of(eager, opts[0])
    static_step = d2s.to_static(step_of(converted, opts[1]))
    for seed in range(3):
        x = rt.to_tensor(np.random.default_rng(seed).standard_normal((2, 5, 6)).astype(
            "float32"))
        np.testing.assert_allclose(static_step(x).numpy(), eager_step(x).numpy(),
                                   rtol=1e-5)
    for (name, p), q in zip(eager.named_parameters(), converted.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    program = static_step.program_cache.last_entry.concrete.main_program
    # fc2's weight and input gradients, fc1's weight gradient; not fc1's input gradient
    assert sum(op.type == "matmul" for op in program.ops()) == 3
