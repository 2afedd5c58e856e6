"""`paddle.jit` ports as `d2s` (docs/paddle_compat.md: `paddle.jit` -> `d2s`): the names and
call forms that scripts use, in a script's own words with `jit` bound to `d2s`.

`runtime` never imports `d2s` (tests/test_layering.py), so there is no `rt.jit`: a script
changes `paddle.jit` to `d2s` as it changes `paddle` to `runtime`."""
from __future__ import annotations

import inspect
import types

import numpy as np
import pytest

import d2s as jit
import runtime as rt

PADDLE_JIT_NAMES = """to_static save load not_to_static ignore_module enable_to_static
    TranslatedLayer set_code_level set_verbosity InputSpec"""


def test_the_names_scripts_call_are_there():
    assert [n for n in PADDLE_JIT_NAMES.split() if not hasattr(jit, n)] == []
    assert "backend" in inspect.signature(jit.to_static).parameters
    assert not hasattr(rt, "jit")  # (no runtime -> d2s import)


class Scorer(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 2)

    @jit.not_to_static()  # Paddle's call form, with parentheses
    def describe(self, h):
        return f"{h.shape[-1]} features"

    def forward(self, x):
        h = self.fc(x)
        self.last = self.describe(h)
        if h.mean() > 0:
            h = h * 2.0
        return h


def test_a_scripts_jit_calls_convert_save_and_load(tmp_path):
    model = Scorer()
    x = rt.to_tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype("float32"))
    want = model(x).numpy()
    static = jit.to_static(model, input_spec=[jit.InputSpec([None, 4], "float32")],
                           full_graph=True, backend=None)
    np.testing.assert_allclose(static(x).numpy(), want, rtol=1e-6)
    assert model.last == "2 features"
    path = str(tmp_path / "scorer")
    model.eval()
    jit.save(model, path)
    loaded = jit.load(path)
    assert isinstance(loaded, jit.TranslatedLayer)
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)
    jit.enable_to_static(False)  # Paddle's switch: the eager forward runs
    try:
        np.testing.assert_allclose(static(x).numpy(), want, rtol=1e-6)
    finally:
        jit.enable_to_static(True)


def test_ignore_module_leaves_a_modules_functions_eager():
    helpers = types.ModuleType("score_helpers")
    exec("def clipped(t):\n    return t.clip(-1.0, 1.0)\n", helpers.__dict__)
    jit.ignore_module([helpers])

    @jit.to_static
    def f(x):
        return helpers.clipped(x) * 2.0

    out = f(rt.to_tensor([-3.0, 0.5, 4.0]))
    assert out.tolist() == [-2.0, 1.0, 2.0]


def test_another_backend_is_refused_clearly():
    with pytest.raises(NotImplementedError, match=r"d2s.to_static: backend='CINN' is not "
                                                  r"provided; programs run on d2s's own "
                                                  r"executor \(backend=None\)"):
        jit.to_static(lambda x: x, backend="CINN")
