"""Library Layers called from converted code (`BatchNorm1D`, `Dropout`) run their own forward
unconverted; their `training` flag and public settings are guarded, so `model.bn.eval()` on a
sub-layer alone, or `model.drop.p = 1.0`, between calls traces a new program (a stale
program kept using batch statistics, or the old dropout rate: a silent wrong result)."""
import numpy as np

import d2s
import runtime as rt


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.bn = rt.nn.BatchNorm1D(3)
        self.drop = rt.nn.Dropout(0.0)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x)))


def test_sub_layer_modes_and_settings_are_guarded():
    rt.seed(0)
    eager, static = Net(), Net()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    x = rt.to_tensor(np.random.RandomState(0).randn(4, 3).astype("float32"))
    w, b = eager.fc.weight.numpy(), eager.fc.bias.numpy()
    h = x.numpy() @ w + b
    batch = (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-5)
    steps = [  # (bn training, dropout p, what the output must be)
        (True, 0.0, batch),
        (False, 0.0, None),   # running statistics: compared with eager
        (False, 1.0, np.zeros_like(h)),  # p = 1 in training mode drops everything
        (True, 0.0, batch),
    ]
    for bn_training, p, want in steps:
        outs = []
        for m in (eager, static):
            m.train()
            if not bn_training:
                m.bn.eval()     # the sub-layer alone: the top layer stays in training mode
            m.drop.p = p
            outs.append(m(x).numpy())
        if want is not None:
            np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(static.bn._mean.numpy(), eager.bn._mean.numpy(), rtol=1e-5)
    assert len(static.forward.program_cache) == 3


class Wrapper(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


def test_hooks_registered_on_a_sub_layer_between_calls_are_run():
    rt.seed(0)
    static = d2s.to_static(Wrapper())
    x = rt.to_tensor(np.array([[1.0, 2.0]], "float32"))
    w, b = static.fc.weight.numpy(), static.fc.bias.numpy()
    base = x.numpy() @ w + b
    np.testing.assert_allclose(static(x).numpy(), base, rtol=1e-6)
    post = static.fc.register_forward_post_hook(lambda layer, inputs, out: out * 10.0)
    np.testing.assert_allclose(static(x).numpy(), base * 10.0, rtol=1e-6)
    pre = static.fc.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 0.0,))
    np.testing.assert_allclose(static(x).numpy(), np.broadcast_to(b * 10.0, base.shape),
                               rtol=1e-6)
    post.remove()
    pre.remove()
    np.testing.assert_allclose(static(x).numpy(), base, rtol=1e-6)
    assert len(static.forward.program_cache) == 3  # the last call reuses the first program


class Tied(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.enc = rt.nn.Linear(2, 2)
        self.dec = rt.nn.Linear(2, 2)

    def forward(self, x):
        return self.dec(self.enc(x))


def test_a_parameter_replaced_between_calls_is_read():
    rt.seed(0)
    static = d2s.to_static(Tied())
    x = np.array([[1.0, 2.0]], "float32")

    def ref():
        h = x @ static.enc.weight.numpy() + static.enc.bias.numpy()
        return h @ static.dec.weight.numpy() + static.dec.bias.numpy()

    np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), ref(), rtol=1e-6)
    static.dec.weight = static.enc.weight  # weight tying after the first call
    np.testing.assert_allclose(static(rt.to_tensor(x)).numpy(), ref(), rtol=1e-6)
