"""Attributes of user classes are state, as attributes of instances are.

Model code keeps counters and registries on the class (`Block.calls += 1`, a class-level
list every instance appends to, `type(self).seen`). The trace changes them once; each later
call must change them again, as eager code does, and nothing a class holds after a call may
be a static Variable.
"""
import numpy as np

import d2s
import runtime as rt
from runtime import nn

from .helpers import t, variables_reachable


class Counted(nn.Layer):
    calls = 0
    positive = 0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        Counted.calls += 1
        h = self.fc(x)
        if h.sum() > 0:  # a tensor condition: counted only on the inputs that take it
            Counted.positive += 1
        return h * Counted.calls


def test_class_counters_change_on_every_call_like_eager():
    model = Counted()
    static = d2s.to_static(model)
    inputs = [[[1.0, 2.0]], [[-3.0, -1.0]], [[2.0, 0.5]], [[-1.0, -4.0]]]
    Counted.calls = Counted.positive = 0
    eager = [model.forward(t(x)).numpy() for x in inputs]
    eager_counts = (Counted.calls, Counted.positive)
    Counted.calls = Counted.positive = 0
    for x, want in zip(inputs, eager, strict=True):
        np.testing.assert_allclose(static(t(x)).numpy(), want, rtol=1e-6)
    assert (Counted.calls, Counted.positive) == eager_counts
    assert type(Counted.calls) is int and type(Counted.positive) is int
    w, b = model.fc.weight.numpy(), model.fc.bias.numpy()
    assert eager_counts == (4, sum(float((np.array(x) @ w + b).sum()) > 0 for x in inputs))
    assert len(static.forward.program_cache) <= 2
    assert variables_reachable(Counted, model) == []


class Registry(nn.Layer):
    seen_shapes = []

    def forward(self, x):
        type(self).seen_shapes.append(tuple(x.shape))
        Registry.last = x * 2  # a tensor on the class: written back as a Tensor
        Registry.uses = getattr(Registry, "uses", 0) + 1  # a class attribute made by the call
        return x + len(Registry.seen_shapes)


def test_class_registries_new_attributes_and_tensors():
    if hasattr(Registry, "uses"):
        del Registry.uses
    Registry.seen_shapes.clear()
    static = d2s.to_static(Registry())
    outs = [float(static(t([1.0, 2.0])).numpy()[0]) for _ in range(3)]
    assert outs == [2.0, 3.0, 4.0]
    assert Registry.seen_shapes == [(2,)] * 3
    assert Registry.uses == 3
    assert isinstance(Registry.last, rt.Tensor)
    np.testing.assert_allclose(Registry.last.numpy(), [2.0, 4.0])
    assert variables_reachable(Registry) == []


def test_a_failed_trace_leaves_the_class_as_it_was():
    class Fragile(nn.Layer):
        count = 0

        def forward(self, x):
            Fragile.count += 1
            Fragile.tmp = x
            return rt.matmul(x, x)  # fails for a vector of the wrong shape

    static = d2s.to_static(Fragile())
    try:
        static(t([[1.0, 2.0, 3.0]]))
    except Exception:  # noqa: BLE001  (eager raises the same error)
        pass
    assert Fragile.count == 0 and not hasattr(Fragile, "tmp")


class Config:
    hidden = 4
    use_bias = True

    class Head:
        scale = 2.0


class SmallConfig(Config):
    pass


def test_class_configs_read_through_the_class_are_guarded():
    """`Config.use_bias` changed between calls takes the other path, as eager does; a
    subclass that later shadows an inherited value is seen too."""
    def forward(x):
        y = x * Config.Head.scale
        if Config.use_bias:
            y = y + 1.0
        return y * SmallConfig.hidden

    static = d2s.to_static(forward)
    saved = (Config.hidden, Config.use_bias, Config.Head.scale)
    try:
        for change in [None, ("use_bias", False), ("Head.scale", 3.0), ("hidden", 5),
                       ("Small.hidden", 7)]:
            if change is not None:
                name, value = change
                if name == "Head.scale":
                    Config.Head.scale = value
                elif name == "Small.hidden":
                    SmallConfig.hidden = value
                else:
                    setattr(Config, name, value)
            x = t([1.0, -2.0])
            want = (np.array([1.0, -2.0]) * Config.Head.scale + (1.0 if Config.use_bias
                                                                 else 0.0)) * SmallConfig.hidden
            np.testing.assert_allclose(static(x).numpy(), want, rtol=1e-6)
            np.testing.assert_allclose(forward(x).numpy(), want, rtol=1e-6)
    finally:
        Config.hidden, Config.use_bias, Config.Head.scale = saved
        if "hidden" in vars(SmallConfig):
            del SmallConfig.hidden
