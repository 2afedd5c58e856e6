"""The guard that the Parameters frozen when a program was traced still are (a frozen
backbone) reads their flags again only when some Parameter's `stop_gradient` (or
`trainable`) was set since it last saw them frozen (`runtime.parameter.FLAGS_VERSION`): a
steady call of a Layer with 200 frozen Parameters read 200 flags per call before (about 15
µs of a 200 µs call). Unfreezing (or freezing) after many steady calls still gives eager's
gradients."""
import numpy as np

import d2s
import runtime as rt
from runtime.parameter import Parameter
from tests.d2s.observe_wild.helpers import assert_same_leaves, grads_none


class Net(rt.nn.Layer):
    def __init__(self, blocks=100):
        super().__init__()
        self.backbone = rt.nn.LayerList([rt.nn.Linear(3, 3) for _ in range(blocks)])
        self.head = rt.nn.Linear(3, 1)

    def forward(self, x):
        for layer in self.backbone:
            x = rt.tanh(layer(x))
        if x.mean() > 0:  # (a tensor `if`: the inputs take both paths of one program)
            x = x * 2.0
        return self.head(x).mean()


def _frozen(m, flag=True):
    for p in m.backbone.parameters():
        p.stop_gradient = flag


class _CountedReads:
    """Counts the reads of Parameters' `stop_gradient` while in use."""

    def __init__(self):
        self.reads = 0
        self.prop = Parameter.__dict__["stop_gradient"]

    def __enter__(self):
        prop = self.prop

        def get(p):
            self.reads += 1
            return prop.fget(p)
        Parameter.stop_gradient = property(get, prop.fset)
        return self

    def __exit__(self, *exc):
        Parameter.stop_gradient = self.prop


def test_steady_calls_read_no_flags_of_the_frozen_parameters():
    m = Net()
    _frozen(m)
    static = d2s.to_static(m)
    x = rt.to_tensor(np.full((2, 3), 0.5, "float32"))
    with rt.no_grad():
        want = [m(x) for _ in range(2)]
        static(x)
        static(x)
        with _CountedReads() as counted:
            got = [static(x) for _ in range(5)]
    assert counted.reads < 200, counted.reads  # (200 frozen Parameters, 5 calls)
    for g, w in zip(got, want * 3):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5)


def test_unfrozen_and_frozen_again_after_steady_calls_as_eager():
    eager, conv = Net(4), Net(4)
    conv.set_state_dict(eager.state_dict())
    static = d2s.to_static(conv)
    other = rt.nn.Linear(2, 2)  # (a Parameter of another Layer: its flag set meanwhile)
    opts = [rt.optimizer.Momentum(0.05, momentum=0.9, parameters=m.parameters(),
                                  weight_decay=0.01) for m in (eager, conv)]
    for m in (eager, conv):
        _frozen(m)
    rng = np.random.default_rng(7)
    # steps 0-3 frozen (steady), 4-5 unfrozen by `trainable`, 6-7 frozen again
    for step in range(8):
        if step == 2:
            other.weight.stop_gradient = True  # (no retrace: still all frozen)
        x = rng.normal(size=(2, 3)).astype("float32") * (1 if step % 2 else -1)
        got = []
        for m, fn, opt in ((eager, eager, opts[0]), (conv, static, opts[1])):
            if step == 4:
                for p in m.backbone.parameters():
                    p.trainable = True
            if step == 6:
                _frozen(m)
            loss = fn(rt.to_tensor(x))
            loss.backward()
            got.append((loss, grads_none(m)))
            opt.step()
            opt.clear_grad()
        assert_same_leaves(got[1], got[0])
        assert got[1][1] == got[0][1]
        assert got[1][1]["backbone.0.weight"] is (step < 4)
        for a, b in zip(eager.parameters(), conv.parameters(), strict=True):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
