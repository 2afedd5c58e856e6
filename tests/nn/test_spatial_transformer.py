"""A spatial transformer (Jaderberg et al.) as Paddle model code writes it: a localisation
layer predicts theta, `F.affine_grid` + `F.grid_sample` warp the image. Eager vs
`d2s.to_static` vs NumPy on inputs that take both branches of a converted `if`, and gradients
of the whole model vs central differences. Per-function cases are OpInfos in
tests/ops/opinfo_nn_sampling.py."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
from layer_gradcheck import check_grads

import d2s
import runtime as rt
import runtime.nn.functional as F
from runtime import nn

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "ops"))
from opinfo_nn_sampling import _affine_grid_ref, _grid_sample_ref


class SpatialTransformer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.loc = nn.Linear(2 * 4 * 5, 6)

    def forward(self, x):
        theta = self.loc(x.flatten(1)).reshape([-1, 2, 3])
        grid = F.affine_grid(theta, [x.shape[0], 2, 3, 4], align_corners=False)
        if x.mean() > 0:
            return F.grid_sample(x, grid, align_corners=False)
        return F.grid_sample(x, grid, mode="nearest", padding_mode="border",
                             align_corners=False)


def _reference(model, x):
    w, b = model.loc.weight.numpy(), model.loc.bias.numpy()
    theta = (x.reshape(len(x), -1) @ w + b).reshape(-1, 2, 3)
    grid = _affine_grid_ref(theta, [len(x), 2, 3, 4], align_corners=False)
    if x.mean() > 0:
        return _grid_sample_ref(x, grid, align_corners=False)
    return _grid_sample_ref(x, grid, mode="nearest", padding_mode="border",
                            align_corners=False)


def test_spatial_transformer_eager_static_numpy_on_both_branches():
    rt.seed(0)
    model = SpatialTransformer()
    model.to(dtype="float64")
    static = d2s.to_static(model)
    rng = np.random.default_rng(0)
    for shift in (1.0, -1.0):
        x = rng.standard_normal((2, 2, 4, 5)) + shift
        want = _reference(model, x)
        eager = model(rt.to_tensor(x)).numpy()
        converted = static(rt.to_tensor(x)).numpy()
        np.testing.assert_allclose(eager, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(converted, eager, rtol=1e-12, atol=1e-12)


def test_spatial_transformer_gradients_match_finite_differences():
    rt.seed(1)
    model = SpatialTransformer()
    model.to(dtype="float64")
    x = np.random.default_rng(1).standard_normal((2, 2, 4, 5)) + 1.0  # the bilinear branch
    check_grads(model, [x], params=list(model.parameters()), rtol=1e-5, atol=1e-6)
