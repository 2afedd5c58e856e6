"""A converted model follows the auto_cast state of each call: the AMP level, dtype, custom
lists and use_promote are part of its program key. And an O2-decorated model runs outside
auto_cast, eager and converted."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F


class Block(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = rt.nn.Linear(6, 8)
        self.head = rt.nn.Linear(8, 3)
        self.norm = rt.nn.LayerNorm(8)

    def forward(self, x):
        h = self.proj(x)                        # white
        z = F.gelu(self.norm(h)) * 0.5 + h      # black norm, promote gelu/mul/add
        c = rt.cumsum(z, axis=-1)               # black under O1 (Paddle's list)
        return self.head(z), h, c


STATES = [
    ("fp32", None, "float32"),
    ("O1 fp16", dict(level="O1"), "float16"),
    ("O1 bf16", dict(level="O1", dtype="bfloat16"), "bfloat16"),
    ("O2 fp16", dict(level="O2"), "float16"),
    ("O1 fp16, linear black", dict(level="O1", custom_black_list=["linear"]), "float32"),
    ("fp32 again", None, "float32"),
]


def _call(fn, x, state):
    if state is None:
        return fn(x)
    with rt.amp.auto_cast(**state):
        return fn(x)


@pytest.mark.filterwarnings("ignore:d2s. Block.forward has been traced")
def test_one_converted_model_follows_each_calls_amp_state():
    rt.seed(0)
    eager = Block()
    static = d2s.to_static(Block())
    static.set_state_dict(eager.state_dict())
    x = rt.to_tensor(np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32))
    for label, state, h_dtype in STATES:
        want = _call(eager, x, state)
        got = _call(static, x, state)
        assert got[1].dtype == h_dtype, f"{label}: linear gave {got[1].dtype.name}"
        for w, g in zip(want, got, strict=True):
            assert g.dtype == w.dtype, label
            np.testing.assert_allclose(g.numpy().astype(np.float32),
                                       w.numpy().astype(np.float32), rtol=1e-3, atol=1e-3,
                                       err_msg=label)
        # cumsum stays float32 under O1/O2 (Paddle's black list), whatever the dtype
        assert got[2].dtype == "float32"
        if state is not None and h_dtype != "float32":  # and it really ran in low precision
            assert not np.array_equal(got[0].numpy().astype(np.float32),
                                      eager(x)[0].numpy())
    # five distinct states, five programs; the last fp32 call reused the first
    assert len(static.forward.program_cache) == 5


def test_program_key_follows_use_promote_and_custom_lists():
    x = rt.to_tensor(np.ones((2, 3), np.float32))

    @d2s.to_static
    def f(t):
        return t * 2.0 + 1.0

    with rt.amp.auto_cast(level="O2"):
        a = f(x)
    with rt.amp.auto_cast(level="O2", use_promote=False):
        b = f(x)
    with rt.amp.auto_cast(level="O2", custom_black_list=["multiply"], use_promote=False):
        c = f(x)
    assert (a.dtype.name, b.dtype.name, c.dtype.name) == ("float32", "float16", "float16")
    assert "cast(" not in str(f.get_concrete_program(x).main_program)
    assert rt.amp.state_key() is None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_o2_decorated_model_runs_outside_auto_cast(dtype):
    rt.seed(1)
    model = rt.nn.Sequential(rt.nn.Linear(6, 8), rt.nn.ReLU(), rt.nn.LayerNorm(8),
                             rt.nn.Linear(8, 2))
    x = rt.to_tensor(np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32))
    want32 = model(x).numpy()
    opt = rt.optimizer.Adam(1e-3, parameters=model.parameters())
    model, opt = rt.amp.decorate(model, opt, level="O2", dtype=dtype)
    assert model[0].weight.dtype == dtype and model[2].weight.dtype == "float32"
    eager = model(x)  # no auto_cast: each layer casts its inputs to its parameters' dtype
    assert eager.dtype == dtype
    np.testing.assert_allclose(eager.numpy().astype(np.float32), want32, rtol=0.1, atol=0.1)
    static = d2s.to_static(model)(x)
    assert static.dtype == dtype
    np.testing.assert_allclose(static.numpy().astype(np.float32),
                               eager.numpy().astype(np.float32), rtol=1e-2, atol=1e-2)
    with rt.amp.auto_cast(level="O2", dtype=dtype):  # and inside auto_cast, as before
        inside = model(x)
    assert inside.dtype == dtype
    # training step outside auto_cast: float32 master weights move
    loss = model(x).astype("float32").mean()
    loss.backward()
    opt.step()
    assert model[0].weight.dtype == dtype
