"""A detection head's per-image results joined with `stack` / `concat`, each chosen by a
tensor `if` between a value with a gradient path (a prediction row) and one without
(`zeros` where no box passes the threshold). Eager code's joined result has
`stop_gradient=True` exactly on the inputs where no image kept a box; the converted call gave
False there (silent: a value computed from a run-flagged one kept its run's flag, but the
tensors of a list input, `stack(outs)`, `concat([y, y])`, were not looked at). Compared with
eager and NumPy: values, `stop_gradient`, and which parameter gradients exist after
`backward()` where the result has a gradient path."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn


class BestBoxHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.pred = nn.Linear(3, 5)

    def forward(self, feats, conf_thr):
        preds = self.pred(feats)
        obj = F.sigmoid(preds[..., 4])
        best = []
        for b in range(preds.shape[0]):
            if (obj[b] > conf_thr).any():
                best.append(preds[b, obj[b].argmax(), :4])
            else:
                best.append(rt.zeros([4]))
        stacked = rt.stack(best)
        return stacked, rt.concat([stacked, stacked * 2.0]), stacked.sum()


def _np_best(feats, w, bias, thr):
    preds = feats @ w + bias
    obj = 1 / (1 + np.exp(-preds[..., 4]))
    rows = [preds[b, obj[b].argmax(), :4] if (obj[b] > thr).any() else np.zeros(4, np.float32)
            for b in range(preds.shape[0])]
    return np.stack(rows)


FEATS = np.random.default_rng(0).uniform(-2, 2, (2, 3, 3)).astype(np.float32)


@pytest.mark.parametrize("thr", [0.0, 0.7, 1.0])  # every image, some images, none
def test_stop_gradient_of_stacked_branch_results_is_eagers(thr):
    rt.seed(0)
    eager = BestBoxHead()
    rt.seed(0)
    static_layer = BestBoxHead()
    static = d2s.to_static(static_layer)
    want = eager(rt.to_tensor(FEATS), thr)
    got = static(rt.to_tensor(FEATS), thr)
    ref = _np_best(FEATS, eager.pred.weight.numpy(), eager.pred.bias.numpy(), thr)
    np.testing.assert_allclose(want[0].numpy(), ref, rtol=1e-5, atol=1e-6)
    for w, g in zip(want, got, strict=True):
        assert g.stop_gradient == w.stop_gradient
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    assert want[0].stop_gradient == (thr == 1.0)
    if not want[2].stop_gradient:
        want[2].backward()
        got[2].backward()
        for pw, pg in zip(eager.parameters(), static_layer.parameters(), strict=True):
            assert (pg.grad is None) == (pw.grad is None)
            np.testing.assert_allclose(pg.grad.numpy(), pw.grad.numpy(), rtol=1e-5, atol=1e-6)
