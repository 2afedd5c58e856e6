"""Python ints a converted call computes (`int(t)`, a counter on `self` the call advances),
divided with `/`: eager code gets a Python float at double precision (`1 / 3` is
0.3333333333333333); the program divided int64 values into float32 and returned
0.3333333432674408 (a Python float, so only the digits differed: a `json.dumps` of a logged
accuracy or a warmup factor showed other text). Eager vs static vs Python, one program for
inputs that take both paths of a tensor `if`."""
import math

import numpy as np

import d2s
import runtime as rt
from runtime import nn

from .helpers import assert_same_leaves


def accuracy_report(logits, labels):
    pred = logits.argmax(-1)
    correct = int((pred == labels).sum())
    total = int(labels.shape[0])
    if correct > 1:                                        # a tensor if
        ratio = correct / total
    else:
        ratio = (correct + 1) / (total + 2)              # Laplace smoothing
    return {"acc": ratio, "err": 1 - correct / total, "per_class": correct / 3,
            "half": -correct / 7, "mixed": math.pi * correct / 3}


def _reference(lv, yv):
    correct = int((np.asarray(lv).argmax(-1) == np.asarray(yv)).sum())
    total = len(yv)
    ratio = correct / total if correct > 1 else (correct + 1) / (total + 2)
    return {"acc": ratio, "err": 1 - correct / total, "per_class": correct / 3,
            "half": -correct / 7, "mixed": math.pi * correct / 3}


def test_int_divisions_are_python_floats_at_double_precision():
    static = d2s.to_static(accuracy_report)
    labels = [0, 1, 2]
    for lv in ([[2, 0, 0], [0, 2, 0], [0, 0, 2]], [[0, 2, 0], [2, 0, 0], [0, 0, 2]],
               [[0, 2, 0], [2, 0, 0], [2, 0, 0]]):
        args = rt.to_tensor(np.float32(lv)), rt.to_tensor(np.int64(labels))
        want = accuracy_report(*args)
        assert_same_leaves(want, _reference(lv, labels), rtol=0, atol=0)
        assert_same_leaves(static(*args), want, rtol=0, atol=0)
    assert len(static.program_cache) == 1


class WarmupScaled(nn.Layer):
    def __init__(self, warmup=3):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.step_n, self.warmup = 0, warmup

    def forward(self, x):
        scale = min(1.0, (self.step_n + 1) / self.warmup)
        self.step_n += 1
        return self.fc(x) * scale, scale


def test_a_warmup_factor_from_a_counter_on_self():
    rt.seed(0)
    eager = WarmupScaled()
    static = WarmupScaled()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    x = rt.to_tensor(np.ones((1, 2), "float32"))
    for step in range(5):
        (ye, se), (ys, ss) = eager(x), static(x)
        assert_same_leaves(ss, min(1.0, (step + 1) / 3), rtol=0, atol=0)
        assert_same_leaves(ss, se, rtol=0, atol=0)
        assert_same_leaves(ys, ye)
    assert static.step_n == eager.step_n == 5
