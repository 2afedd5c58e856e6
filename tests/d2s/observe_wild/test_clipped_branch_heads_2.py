"""`clip_grad_norm_` in a converted training step on a model with a frozen encoder
(`stop_gradient=True` parameters) and two heads a tensor condition picks: the head this batch
did not take keeps `.grad` None through the clipping (eager skips it, so Momentum's weight
decay does not move it), the frozen encoder gets no gradient, and the returned norm is a
Python float. Eager vs converted over batches taking both heads through one program, and a
reference: the clipped gradients' norm is min(norm, max_norm)."""
import copy

import numpy as np

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, assert_same_optimizer, grads_none


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.encoder.weight.stop_gradient = True
        self.encoder.bias.stop_gradient = True
        self.head_pos = nn.Linear(4, 2)
        self.head_neg = nn.Linear(4, 2)

    def forward(self, x):
        h = F.relu(self.encoder(x))
        if x.mean() > 0:
            return self.head_pos(h)
        return self.head_neg(h)


MAX_NORM = 0.5


def step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    opt.step()
    return {"loss": loss.item(), "norm": norm.item()}


def test_clipped_step_leaves_the_untaken_head_and_the_frozen_encoder_as_eager():
    rt.seed(0)
    base = Net()
    runs = []
    for fn in (step, d2s.to_static(step)):
        model = copy.deepcopy(base)
        runs.append((fn, model, rt.optimizer.Momentum(0.1, 0.9, parameters=model.parameters(),
                                                      weight_decay=0.1)))
    rng = np.random.default_rng(0)
    for sign in (1.0, -1.0, -1.0, 1.0, -1.0):
        x = rt.to_tensor((rng.random((4, 3)) * sign).astype("float32"))
        y = rt.to_tensor(rng.integers(0, 2, 4))
        outs = [fn(m, o, x, y) for fn, m, o in runs]
        assert_same_leaves(outs[1], outs[0])
        (_, m1, o1), (_, m2, o2) = runs
        assert_same_model(m2, m1)
        assert_same_optimizer(o2, o1)
        none = grads_none(m2)
        assert none["encoder.weight"] and none["head_neg.weight"] is (sign > 0)
        clipped = np.sqrt(sum(float((p.grad.numpy().astype("float64") ** 2).sum())
                              for p in m2.parameters() if p.grad is not None))
        np.testing.assert_allclose(clipped, min(outs[1]["norm"], MAX_NORM), rtol=1e-4)
        for _, _, opt in runs:
            opt.clear_grad(set_to_zero=False)
    np.testing.assert_array_equal(runs[1][1].encoder.weight.numpy(),
                                  base.encoder.weight.numpy())
    assert runs[1][0].get_traced_count() == 1
