"""Tensors kept in a dict on `self` that each call sets again (`self.constants["bias"] =
rt.full(...)`, then read; `self.stats["ema"] = self.stats["ema"] * 0.9 + ...`): eager code
rebinds the item to a new Tensor each call, and so does the converted call. The item's guard
is then its tensor's shape and dtype, not its identity: one program serves every call (the
guard on a dict item did not match its place, so every call traced a new program)."""
import numpy as np

import d2s
import runtime as rt
from runtime import nn


class Smoother(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.constants = {}
        self.stats = {"ema": rt.zeros([3])}

    def forward(self, x):
        self.constants["shift"] = rt.full([3], 0.5)
        h = self.fc(x).mean(axis=0) + self.constants["shift"]
        if h.sum() > 0:
            h = h * 2.0
        self.stats["ema"] = self.stats["ema"] * 0.9 + h * 0.1
        return self.stats["ema"]


def _reference(w, b, xs):
    ema, outs, paths = np.zeros(3), [], []
    for x in xs:
        h = (x @ w + b).mean(axis=0) + 0.5
        paths.append(bool(h.sum() > 0))
        if paths[-1]:
            h = h * 2.0
        ema = ema * 0.9 + h * 0.1
        outs.append(ema)
    return outs, paths


def test_items_set_each_call_are_new_tensors_with_one_program():
    rt.seed(0)
    eager = Smoother()
    static = Smoother()
    static.set_state_dict(eager.state_dict())
    converted = d2s.to_static(static)
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(2, 3)).astype("float32") * 4.0 for _ in range(8)]
    want, paths = _reference(eager.fc.weight.numpy(), eager.fc.bias.numpy(), xs)
    kept = {}
    for net, call in ((eager, eager), (static, converted)):
        history, shifts = [], []
        for x in xs:
            history.append(call(rt.to_tensor(x)))
            shifts.append(net.constants["shift"])
        assert len({id(t) for t in shifts}) == len(xs), "a new Tensor each call, as eager"
        kept[net] = [h.numpy() for h in history]
        assert all(type(t) is rt.Tensor for t in (*shifts, net.stats["ema"]))
    assert len(kept[static]) == len(want) == len(kept[eager])
    for got, e, ref in zip(kept[static], kept[eager], want, strict=True):
        np.testing.assert_allclose(e, ref, rtol=1e-5)
        np.testing.assert_allclose(got, ref, rtol=1e-5)
    assert len(set(paths)) == 2, "the inputs take both paths of the tensor if"
    assert static.stats["ema"].stop_gradient == eager.stats["ema"].stop_gradient
    # (the first call finds zeros without a gradient path; from the second on the ema carries
    # the graph of the calls before, as eager's does: one program from then on)
    assert len(converted.forward.program_cache) == 2
    assert converted.forward.program_cache.traces == 2
