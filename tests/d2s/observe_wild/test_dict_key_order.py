"""Keys a converted call adds to a dict the caller holds come in eager's order, whether the
program computes their values (`loss.item()`, a counter kept as program state) or Python
sets them (`m["first"] = True`): the Python ones were replayed after the computed ones, so
`list(metrics)`, `json.dumps(metrics)` and a printed log differed from eager's."""
import json

import numpy as np

import d2s
import runtime as rt


def step(x, metrics):
    metrics["first"] = True
    metrics["loss"] = x.sum().item()
    if x.mean() > 0:                      # a tensor if: both paths in one program
        y = x * 2.0
    else:
        y = x - 1.0
    metrics["tag"] = "train"
    metrics["peak"] = float(y.max())
    return y


class Tracker(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)
        self.stats = {"calls": 0}

    def forward(self, x):
        self.stats["calls"] += 1
        self.stats["mode"] = "eval"
        out = self.fc(x)
        self.stats["norm"] = float(out.abs().sum())
        return out


def test_keys_added_to_an_argument_dict_keep_eagers_order():
    static = d2s.to_static(step)
    for xv in ([1.0, 2.0], [-3.0, 1.0], [0.5, -2.0]):
        x = rt.to_tensor(np.array(xv, "float32"))
        eager_m, static_m = {"step": 7}, {"step": 7}
        np.testing.assert_allclose(static(x, static_m).numpy(), step(x, eager_m).numpy())
        assert list(static_m) == list(eager_m) == ["step", "first", "loss", "tag", "peak"]
        assert json.dumps(static_m) == json.dumps(eager_m)


def test_keys_added_to_a_layer_dict_keep_eagers_order():
    rt.seed(3)
    eager = Tracker()
    static = Tracker()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    for xv in ([[1.0, 2.0]], [[-3.0, 1.0]]):
        x = rt.to_tensor(np.array(xv, "float32"))
        np.testing.assert_allclose(static(x).numpy(), eager(x).numpy(), rtol=1e-6)
        assert list(static.stats) == list(eager.stats) == ["calls", "mode", "norm"]
        assert static.stats == eager.stats
