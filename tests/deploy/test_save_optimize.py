"""`d2s.save(..., optimize=True)` (the default) folds BatchNorm into the convolution or linear
layer before it; `optimize=False` saves the program as traced. Every zoo model saved both
ways: the loaded models agree within float32 tolerance (and with the live Layer), and the
folded one has no `batch_norm` left where each follows a convolution."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

from .test_zoo_round_trip import CASES

# the zoo models whose BatchNorms all follow a convolution (the others have none)
WITH_BATCH_NORM = {"resnet", "mobilenet", "speech"}


def _leaves(out) -> list:
    if isinstance(out, (list, tuple)):
        return [a for t in out for a in _leaves(t)]
    return [out.numpy()]


def _batch_norms(loaded) -> int:
    return sum(op.type == "batch_norm" for op in loaded.program().ops())


def _trained_statistics(model, inputs) -> None:
    """A few training-mode calls, so the running statistics are not the initial 0 and 1."""
    with rt.no_grad():
        for k in range(3):
            model(*[rt.to_tensor(a * (1.0 + k) if a.dtype.kind == "f" else a) for a in inputs])


@pytest.mark.parametrize("name", list(CASES))
def test_zoo_model_saved_folded_and_as_traced_agree(name, tmp_path):
    make, method, specs, inputs = CASES[name]
    rt.seed(0)
    model = make()
    _trained_statistics(getattr(model, method), inputs)
    model.eval()
    fn = d2s.to_static(getattr(model, method))
    d2s.save(fn, str(tmp_path / "folded"), input_spec=specs)
    d2s.save(fn, str(tmp_path / "traced"), input_spec=specs, optimize=False)
    folded, traced = d2s.load(str(tmp_path / "folded")), d2s.load(str(tmp_path / "traced"))
    tensors = [rt.to_tensor(a) for a in inputs]
    with rt.no_grad():
        live = _leaves(getattr(model, method)(*tensors))
    got, want = _leaves(folded(*tensors)), _leaves(traced(*tensors))
    assert len(got) == len(want) == len(live)
    for g, w, e in zip(got, want, live):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(w, e, rtol=1e-5, atol=1e-5)
    assert _batch_norms(folded) == 0
    if name in WITH_BATCH_NORM:
        assert _batch_norms(traced) > 0
        assert "folded_" in folded.code and "folded_" not in traced.code
    else:
        assert folded.code == traced.code


class _NormFirst(nn.Layer):
    """BatchNorm on the input, then after a ReLU: nothing to fold into."""

    def __init__(self):
        super().__init__()
        self.bn0, self.fc, self.bn1 = nn.BatchNorm1D(4), nn.Linear(4, 3), nn.BatchNorm1D(3)

    def forward(self, x):
        return self.bn1(nn.functional.relu(self.fc(self.bn0(x))))


def test_batch_norm_after_something_else_is_saved_as_it_is(tmp_path):
    rt.seed(1)
    model = _NormFirst()
    x = np.random.RandomState(0).randn(5, 4).astype("float32")
    _trained_statistics(model, (x,))
    model.eval()
    spec = [d2s.InputSpec([None, 4])]
    d2s.save(model, str(tmp_path / "m"), input_spec=spec)
    loaded = d2s.load(str(tmp_path / "m"))
    assert _batch_norms(loaded) == 2
    np.testing.assert_allclose(loaded(rt.to_tensor(x)).numpy(), model(rt.to_tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_training_mode_save_does_not_fold(tmp_path):
    make, _, specs, inputs = CASES["resnet"]
    rt.seed(2)
    model = make()
    d2s.save(model, str(tmp_path / "m"), input_spec=specs, training=True)
    loaded = d2s.load(str(tmp_path / "m"))
    assert _batch_norms(loaded) == 6 and "folded_" not in loaded.code
    x = rt.to_tensor(inputs[0])
    with rt.no_grad():  # the batch's statistics, as the Layer in training mode uses
        want = model(x).numpy()
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_optimize_is_a_keyword(tmp_path):
    make, _, specs, _ = CASES["lenet"]
    with pytest.raises(TypeError):
        d2s.save(make().eval(), str(tmp_path / "m"), specs, False, False)
