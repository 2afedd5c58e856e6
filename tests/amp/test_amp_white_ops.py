"""Every op the AMP lists run in low precision, generated from the registry: it runs on
float16 and bfloat16 inputs (eager, and in a static program) and returns that dtype, with
values close to float32's; under auto_cast, float32 inputs come out in the low dtype."""
from __future__ import annotations

import numpy as np
import pytest
from amp_cases import CALLS, maker

import runtime as rt
from runtime import static
from runtime.amp import lists
from runtime.ops.registry import OPS

WHITE = sorted(n for n, op in OPS.items() if lists.category(n, op.amp, "O1") == "white")
LOW = ["float16", "bfloat16"]
TOL = {"float16": 2e-2, "bfloat16": 6e-2}


def test_white_list_is_paddles_and_every_white_op_has_a_case():
    assert {"matmul", "linear", "conv2d", "einsum"} <= set(WHITE)
    missing = sorted(set(WHITE) - set(CALLS))
    assert not missing, f"white-listed ops without a case in tests/amp/amp_cases.py: {missing}"


def _static(call, dtype):
    main = static.Program()
    with static.program_guard(main):
        out = call(maker(dtype))
    (got,) = static.Executor().run(main, feed={}, fetch_list=[out])
    return out, got, str(main)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", WHITE)
def test_white_op_runs_in_low_precision(name, dtype):
    call = CALLS[name]
    want = call(maker("float32")).numpy()
    out = call(maker(dtype))  # eager, no auto_cast: low-precision inputs
    assert out.dtype == dtype, f"{name}: eager {dtype} inputs gave {out.dtype.name}"
    np.testing.assert_allclose(out.numpy().astype(np.float32), want, rtol=TOL[dtype],
                               atol=TOL[dtype] * np.abs(want).max())
    meta, got, text = _static(call, dtype)
    assert meta.dtype == dtype and got.dtype == out.numpy().dtype
    assert f"{name}(" in text
    np.testing.assert_array_equal(got.astype(np.float32), out.numpy().astype(np.float32))
    with rt.amp.auto_cast(dtype=dtype):  # float32 inputs cast down by the white list
        cast = call(maker("float32"))
    assert cast.dtype == dtype
    np.testing.assert_array_equal(cast.numpy().astype(np.float32),
                                  out.numpy().astype(np.float32))


@pytest.mark.parametrize("dtype", LOW)
def test_white_op_gradients_in_low_precision(dtype):
    """matmul / linear / conv2d backward on low-precision leaves: gradients of that dtype
    matching float32's."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in ([2, 4], [4, 3], [1, 2, 5, 5], [3, 2, 3, 3])]

    def run(dt):
        x, w, img, k = [rt.to_tensor(a).astype(dt) for a in arrays]
        for t in (x, w, img, k):
            t.stop_gradient = False
        loss = (rt.matmul(x, w).sum() + rt.nn.functional.linear(x, w).sum()
                + rt.nn.functional.conv2d(img, k).sum())
        loss.backward()
        return [t.grad for t in (x, w, img, k)]

    want = [g.numpy() for g in run("float32")]
    for g, ref in zip(run(dtype), want, strict=True):
        assert g.dtype == dtype
        np.testing.assert_allclose(g.numpy().astype(np.float32), ref, rtol=TOL[dtype],
                                   atol=TOL[dtype] * np.abs(ref).max())


def test_two_linears_under_bf16_auto_cast_eager_and_converted():
    import d2s

    class Net(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = rt.nn.Linear(4, 8), rt.nn.Linear(8, 3)

        def forward(self, x):
            h = self.fc1(x)
            return self.fc2(rt.nn.functional.relu(h)), h

    net = Net()
    x = rt.to_tensor(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))
    with rt.amp.auto_cast(dtype="bfloat16"):
        want, wh = net(x)
        got, gh = d2s.to_static(net)(x)
    assert want.dtype == got.dtype == wh.dtype == gh.dtype == "bfloat16"
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    ref = rt.nn.functional.relu(x @ net.fc1.weight + net.fc1.bias) @ net.fc2.weight + net.fc2.bias
    np.testing.assert_allclose(got.numpy().astype(np.float32), ref.numpy(), rtol=5e-2, atol=5e-2)
