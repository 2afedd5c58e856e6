"""Train a converted two-head model in an eager loop (its head chosen by a tensor condition),
save it with `d2s.save`, load it with `d2s.load`, and compare what the user sees: the loaded
model's results (a dict of a tensor, Python int, float and bool) with eager eval-mode results,
its mode, the saved model's mode after saving, and `state_dict` names and dtypes."""
import copy
import os
import warnings

import numpy as np

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

from .helpers import assert_same_leaves, assert_same_model, assert_same_optimizer


class TwoHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1D(8)
        self.drop = nn.Dropout(0.5)
        self.cls_head = nn.Linear(8, 3)
        self.reg_head = nn.Linear(8, 3)

    def forward(self, x):
        h = self.drop(F.relu(self.bn(self.body(x))))
        if x.mean() > 0:
            out = self.cls_head(h)
        else:
            out = self.reg_head(h) * 0.5
        return {"logits": out, "top": int(out.argmax()), "score": out.mean().item(),
                "positive": bool(out.sum() > 0)}


def _inputs():
    rng = np.random.default_rng(0)
    return [rt.to_tensor((rng.standard_normal((5, 4)) * s + o).astype("float32"))
            for s, o in ((1, 1), (2, -1), (1, 2), (3, -3))]


def test_trained_then_saved_model_gives_eager_results(tmp_path):
    rt.seed(0)
    eager = TwoHead()
    static = d2s.to_static(copy.deepcopy(eager))
    runs = [(m, rt.optimizer.SGD(0.1, parameters=m.parameters(), weight_decay=0.01))
            for m in (eager, static)]
    for x in _inputs():
        outs = []
        for model, opt in runs:
            rt.seed(1)  # the same dropout masks
            out = model(x)
            (out["logits"] ** 2).mean().backward()
            opt.step()
            opt.clear_grad(set_to_zero=False)
            outs.append(out)
        assert_same_leaves(outs[1], outs[0])
        assert_same_model(static, eager)
        assert_same_optimizer(runs[1][1], runs[0][1])
    path = os.path.join(tmp_path, "two_head")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (saved in eval mode from training)
        d2s.save(static, path, input_spec=[d2s.InputSpec([None, 4], "float32")])
    assert static.training and static.drop.training  # put back in training mode
    loaded = d2s.load(path)
    assert loaded.training is False
    eager.eval()
    for x in _inputs():
        with rt.no_grad():
            want = eager(x)
        # (the saved program folds BatchNorm into the linear layer before it: a tolerance)
        assert_same_leaves(loaded(x), want, rtol=1e-4, atol=1e-5)
    assert [(k, v.dtype) for k, v in static.state_dict().items()] == [
        (k, v.dtype) for k, v in eager.state_dict().items()]
    assert "bn._mean" in static.state_dict()
