"""`rt.eye(2 * n)` where `n = z.shape[0]` is a batch size known only when the program runs
(SimCLR's NT-Xent self-mask under `InputSpec([None, d])`), issue 35: refused before with an
op message that printed an internal Variable ("eye: num_rows must be a non-negative int, got
Variable(%t11: i64[])"); `eye` now takes a one-element int tensor as a size. Eager vs static
vs NumPy for batch sizes 1, 2 and 5 from one program; a float tensor size is refused with a
message naming the argument."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.nn import functional as F


def nt_xent(z_i, z_j, temperature=0.5):
    n = z_i.shape[0]
    z = F.normalize(rt.concat([z_i, z_j], axis=0), axis=1)
    sim = rt.matmul(z, z.t()) / temperature
    self_mask = rt.eye(2 * n).astype("bool")
    sim = rt.where(self_mask, rt.full_like(sim, -1e9), sim)
    targets = rt.concat([rt.arange(n, 2 * n), rt.arange(0, n)])
    return F.cross_entropy(sim, targets), rt.eye(n, 3, dtype="int32")


def reference(z1, z2, t=0.5):
    z = np.concatenate([z1, z2])
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    n = z1.shape[0]
    sim = z @ z.T / t
    sim[np.eye(2 * n, dtype=bool)] = -1e9
    labels = np.concatenate([np.arange(n, 2 * n), np.arange(n)])
    m = sim.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(sim - m).sum(1))
    return (lse - sim[np.arange(2 * n), labels]).mean(), np.eye(n, 3, dtype="int32")


def test_eye_sized_by_an_unknown_batch():
    spec = [d2s.InputSpec([None, 4], "float32"), d2s.InputSpec([None, 4], "float32")]
    static = d2s.to_static(nt_xent, input_spec=spec)
    rng = np.random.default_rng(0)
    for b in (1, 2, 5):
        z1, z2 = (rng.standard_normal((b, 4)).astype("float32") for _ in range(2))
        want = nt_xent(rt.to_tensor(z1), rt.to_tensor(z2))
        got = static(rt.to_tensor(z1), rt.to_tensor(z2))
        ref_loss, ref_eye = reference(z1, z2)
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[0].numpy(), ref_loss, rtol=1e-4, atol=1e-5)
        assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape == [b, 3]
        np.testing.assert_array_equal(got[1].numpy(), ref_eye)
    assert len(static.program_cache) == 1


def test_a_float_size_is_refused_naming_the_argument():
    with pytest.raises(TypeError, match="num_rows must be an int or a one-element int"):
        rt.eye(rt.to_tensor(2.0))


class _Masked(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x) + rt.eye(x.shape[0], 3) + rt.eye(3)[0]


def test_a_saved_model_with_a_computed_size_loads_and_runs(tmp_path):
    rt.seed(0)
    layer = _Masked()
    layer.eval()
    d2s.save(layer, str(tmp_path / "m"), input_spec=[d2s.InputSpec([None, 3], "float32")])
    loaded = d2s.load(str(tmp_path / "m"))
    for b in (1, 4):
        x = rt.to_tensor(np.arange(3 * b, dtype="float32").reshape(b, 3))
        np.testing.assert_allclose(loaded(x).numpy(), layer(x).numpy(), rtol=1e-6)
