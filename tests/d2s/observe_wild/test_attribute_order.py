"""Attributes a converted call adds to an object the caller holds come in eager's order
(`vars(box)`, `box.__dict__`, a dataclass-like `repr` built from `vars`), whether the program
computes their values (`float(loss)`, a tensor set under a tensor `if`) or Python sets them
(`box.first = True`): the Python ones were replayed after the computed ones."""
import json

import numpy as np

import d2s
import runtime as rt


class Record:
    pass


def step(x, rec):
    rec.first = True
    if x.mean() > 0:                      # a tensor if: both paths in one program
        rec.loss = x.sum()
    else:
        rec.loss = -x.sum()
    rec.tag = "train"
    rec.mean = float(x.mean())
    return x * 2.0


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)

    def forward(self, x):
        self.mode = "eval"
        out = self.fc(x)
        self.last_norm = float(out.abs().sum())
        self.seen_batch = True
        return out


def _plain(rec):
    return {k: (v.numpy().tolist() if isinstance(v, rt.Tensor) else v)
            for k, v in vars(rec).items()}


def test_attributes_added_to_an_argument_keep_eagers_order():
    static = d2s.to_static(step)
    for xv in ([1.0, 2.0], [-3.0, 1.0], [0.5, -2.0]):
        x = rt.to_tensor(np.array(xv, "float32"))
        eager_r, static_r = Record(), Record()
        eager_r.step = static_r.step = 7
        np.testing.assert_allclose(static(x, static_r).numpy(), step(x, eager_r).numpy())
        assert list(vars(static_r)) == list(vars(eager_r)) == [
            "step", "first", "loss", "tag", "mean"]
        assert json.dumps(_plain(static_r)) == json.dumps(_plain(eager_r))
        assert type(static_r.mean) is float
        want = sum(xv) if np.mean(xv) > 0 else -sum(xv)
        np.testing.assert_allclose(static_r.loss.numpy(), want)


def test_attributes_added_to_a_layer_keep_eagers_order():
    rt.seed(3)
    eager = Head()
    static = Head()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    for xv in ([[1.0, 2.0]], [[-3.0, 1.0]]):
        x = rt.to_tensor(np.array(xv, "float32"))
        np.testing.assert_allclose(static(x).numpy(), eager(x).numpy(), rtol=1e-6)
        names = [k for k in vars(eager) if k in ("mode", "last_norm", "seen_batch")]
        assert [k for k in vars(static) if k in names] == names == [
            "mode", "last_norm", "seen_batch"]
        assert static.last_norm == eager.last_norm
