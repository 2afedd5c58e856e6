"""An input returned as it is (`return logits, loss`) beside a value that reads it only under a
tensor `if` is reached on every run: its gradient through the returned value is eager's, also
on the inputs that skip the branch (it was zero there: the reach flags saw only the read in
the branch; corpus case wild_stateful.step_to_dataclass)."""
import numpy as np

import d2s
import runtime as rt
import runtime.nn.functional as F


def step(logits, labels):
    if (labels >= 0).all():
        loss = F.cross_entropy(logits, labels)
    else:
        loss = rt.zeros([])
    return logits, loss


def test_a_returned_input_gets_its_gradient_on_every_path():
    static = d2s.to_static(step)
    rng = np.random.default_rng(3)
    for labels in ([0, 2], [-1, -1]):  # both paths through one program
        a = rng.uniform(-1, 1, (2, 3)).astype("float32")
        grads = []
        for fn in (step, static):
            x = rt.to_tensor(a, stop_gradient=False)
            out, loss = fn(x, rt.to_tensor(np.array(labels, "int64")))
            ((out * out).sum() + loss).backward()
            grads.append(x.grad.numpy())
        if labels[0] < 0:  # the loss does not read x: d/dx sum(x * x) = 2x
            np.testing.assert_allclose(grads[0], 2 * a, rtol=1e-6)
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1
