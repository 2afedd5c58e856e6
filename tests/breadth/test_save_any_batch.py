"""A model saved without input_spec loads for any batch size (issue 22 item 5); an InputSpec
fixes the shape; code that needs the batch size saves the traced one with a warning."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime.static import InputSpec


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return F.softmax(h * 2.0 if rt.mean(h) > 0 else h, axis=-1)


def _x(n, seed=0):
    return rt.to_tensor(np.random.default_rng(seed).standard_normal((n, 4)).astype("float32"))


def test_saved_without_input_spec_loads_for_any_batch(tmp_path):
    rt.seed(0)
    net = Net()
    net.eval()
    static_net = d2s.to_static(net)
    static_net(_x(8))
    d2s.save(static_net, str(tmp_path / "m"))
    loaded = d2s.load(str(tmp_path / "m"))
    for n in (1, 3, 8):
        np.testing.assert_allclose(loaded(_x(n, n)).numpy(), net(_x(n, n)).numpy(),
                                   rtol=1e-6, atol=1e-7)


def test_input_spec_fixes_the_batch(tmp_path):
    rt.seed(0)
    net = Net()
    net.eval()
    d2s.save(d2s.to_static(net), str(tmp_path / "m"), input_spec=[InputSpec([8, 4])])
    loaded = d2s.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded(_x(8)).numpy(), net(_x(8)).numpy(), rtol=1e-6)
    with pytest.raises(Exception, match=r"8"):
        loaded(_x(1))


def test_a_numpy_range_of_the_batch_size_follows_the_batch(tmp_path):
    """`np.arange(x.shape[0])` is a NumPy array the program makes for each batch size."""
    @d2s.to_static
    def f(x):
        return x * rt.to_tensor(np.arange(x.shape[0], dtype="float32")).unsqueeze(1)

    f(_x(4))
    d2s.save(f, str(tmp_path / "f"))
    loaded = d2s.load(str(tmp_path / "f"))
    for n in (4, 6):
        np.testing.assert_allclose(loaded(_x(n)).numpy(), _x(n).numpy() * np.arange(n)[:, None])


def test_shape_reads_in_saved_code_follow_the_batch(tmp_path):
    @d2s.to_static
    def f(x):
        return rt.reshape(x, [x.shape[0] // 2, -1]) if x.shape[0] % 2 == 0 else x * 1.0

    f(_x(4))
    d2s.save(f, str(tmp_path / "f"))
    loaded = d2s.load(str(tmp_path / "f"))
    np.testing.assert_allclose(loaded(_x(6)).numpy(), _x(6).numpy().reshape(3, -1))
    np.testing.assert_allclose(loaded(_x(3)).numpy(), _x(3).numpy())


def test_code_that_needs_the_batch_size_keeps_it_with_a_warning(tmp_path):
    @d2s.to_static
    def f(x):
        ramp = np.linspace(0, x.shape[0] - 1, x.shape[0], dtype="float32")  # (NumPy's own)
        return x * rt.to_tensor(ramp).unsqueeze(1)

    f(_x(4))
    with pytest.warns(UserWarning, match=r"saved for batch size 4 only"):
        d2s.save(f, str(tmp_path / "f"))
    loaded = d2s.load(str(tmp_path / "f"))
    np.testing.assert_allclose(loaded(_x(4)).numpy(), _x(4).numpy() * np.arange(4)[:, None])
