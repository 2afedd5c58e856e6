"""The fast call path (`d2s/fast_call.py`): from the second call of a signature a converted
function checks its arguments against the program's signature directly instead of building
the cache key. Each test here drives calls through it and asserts values: the fast path gives
what the slow path and eager code give, and every change the key or a guard sees still sends
the call the slow way (a new trace, never a stale program)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from d2s.program_cache import ProgramCache
from tests.finite_differences import numeric_grad


def _t(a, stop_gradient=True):
    t = rt.to_tensor(np.asarray(a, "float32"))
    t.stop_gradient = stop_gradient
    return t


def _no_slow_path(monkeypatch):
    """Make the key-and-lookup path fail: a call that still works took the fast path."""
    def refuse(self, sf, args, kwargs):
        raise AssertionError("the slow path ran")
    monkeypatch.setattr(ProgramCache, "find", refuse)


def gate(x, scale):
    if rt.mean(x) > 0:
        y = x * scale
    else:
        y = -x
    i = rt.zeros([1], "int64")
    while i < 3:
        y = y + 1.0
        i += 1
    return y


def numpy_gate(x, scale):
    return (x * scale if x.mean() > 0 else -x) + 3.0


def test_fast_path_matches_slow_path_eager_and_numpy_on_both_branches(monkeypatch):
    f = d2s.to_static(gate)
    pos, neg = np.array([1.0, 2.0, 3.0], "float32"), np.array([-1.0, -2.0, 0.5], "float32")
    with rt.no_grad():
        slow = [f(_t(pos), 2.0).numpy() for _ in range(3)]  # traced, then slow calls
        entry = f.program_cache.last_entry
        assert entry.fast is not None
        _no_slow_path(monkeypatch)
        for a in (pos, neg, pos):
            got = f(_t(a), 2.0).numpy()
            np.testing.assert_array_equal(got, gate(_t(a), 2.0).numpy())
            np.testing.assert_allclose(got, numpy_gate(a, 2.0), rtol=1e-6)
            np.testing.assert_array_equal(got, entry.run([_t(a)]).numpy())  # the slow run
    np.testing.assert_array_equal(slow[0], slow[2])
    assert len(f.program_cache) == 1


@pytest.mark.filterwarnings("ignore:d2s. gate has been traced")
def test_a_changed_scalar_shape_dtype_or_stop_gradient_takes_the_slow_path():
    f = d2s.to_static(gate)
    x = np.array([1.0, 2.0, 3.0], "float32")
    with rt.no_grad():
        for _ in range(3):
            f(_t(x), 2.0)
        np.testing.assert_allclose(f(_t(x), 5.0).numpy(), x * 5 + 3)  # another value
        np.testing.assert_allclose(f(_t(x), 5).numpy(), x * 5 + 3)  # int, not float
        x4 = np.array([1.0, 2.0, 3.0, 4.0], "float32")
        np.testing.assert_allclose(f(_t(x4), 2.0).numpy(), x4 * 2 + 3)  # another shape
        x64 = rt.to_tensor(x.astype("float64"))
        out = f(x64, 2.0)
        assert out.dtype == rt.float64
        np.testing.assert_allclose(out.numpy(), x * 2 + 3)
    assert len(f.program_cache) == 5
    # the first signature again, now with a gradient wanted
    for _ in range(3):
        f(_t(x), 2.0)
    xg = _t(x, stop_gradient=False)
    out = f(xg, 2.0)
    assert not out.stop_gradient
    rt.sum(out * out).backward()
    np.testing.assert_allclose(xg.grad.numpy(), 2 * (x * 2 + 3) * 2, rtol=1e-6)


class Scaled(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)
        self.scale = 2.0  # read by the program: guarded

    def forward(self, x):
        h = F.relu(self.fc(x))
        if self.training:
            return h * self.scale
        return h


def _numpy_scaled(layer, x, training):
    h = np.maximum(x @ layer.fc.weight.numpy() + layer.fc.bias.numpy(), 0)
    return h * layer.scale if training else h


def test_guards_train_eval_and_parameter_updates_seen_on_the_fast_path():
    rt.seed(3)
    layer = d2s.to_static(Scaled())
    x = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    with rt.no_grad():
        for _ in range(3):
            np.testing.assert_allclose(layer(_t(x)).numpy(), _numpy_scaled(layer, x, True),
                                       rtol=1e-5, atol=1e-6)
        assert layer.forward.program_cache.last_entry.fast is not None
        layer.scale = 3.0  # a guarded attribute changed: a new trace
        np.testing.assert_allclose(layer(_t(x)).numpy(), _numpy_scaled(layer, x, True),
                                   rtol=1e-5, atol=1e-6)
        layer.eval()  # the training flag is part of the key
        np.testing.assert_allclose(layer(_t(x)).numpy(), _numpy_scaled(layer, x, False),
                                   rtol=1e-5, atol=1e-6)
        layer.train()
        layer.fc.weight.set_value(layer.fc.weight.numpy() * 0.5)  # updated in place
        for _ in range(4):  # (the last ones on the fast path)
            np.testing.assert_allclose(layer(_t(x)).numpy(), _numpy_scaled(layer, x, True),
                                       rtol=1e-5, atol=1e-6)


def test_gradients_through_the_fast_path_match_finite_differences():
    rt.seed(0)
    layer = d2s.to_static(Scaled())
    x = np.random.default_rng(1).standard_normal((2, 3))
    w = layer.fc.weight.numpy().astype("float64")
    b = layer.fc.bias.numpy().astype("float64")

    def loss_np(xv):
        return float(np.sum(np.maximum(xv @ w + b, 0) * 2.0) ** 2)

    for _ in range(4):  # the fourth call is a fast one, with gradients on
        xt = _t(x, stop_gradient=False)
        loss = rt.sum(layer(xt)) ** 2
        loss.backward()
    assert layer.forward.program_cache.last_entry.fast is not None
    np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(loss_np, x), rtol=1e-3,
                               atol=1e-3)
    with rt.no_grad():  # and without gradients: no autograd node
        out = layer(_t(x))
    assert out.stop_gradient


def test_several_outputs_and_written_back_state_on_the_fast_path(monkeypatch):
    class Counter(rt.nn.Layer):
        def __init__(self):
            super().__init__()
            self.calls = 0
            self.last_k = None

        def forward(self, x, k):
            self.calls += 1
            self.last_k = k
            return {"sum": rt.sum(x) * k, "pair": (x + 1.0, x * 2.0)}

    layer = d2s.to_static(Counter())
    x = np.array([1.0, 2.0], "float32")
    for i in range(6):
        if i == 4:  # traced twice (`last_k` changed), then two slow calls, then fast ones
            _no_slow_path(monkeypatch)
        out = layer(_t(x), 3)
        np.testing.assert_allclose(out["sum"].numpy(), 9.0)
        np.testing.assert_allclose(out["pair"][0].numpy(), x + 1)
        np.testing.assert_allclose(out["pair"][1].numpy(), x * 2)
    assert layer.calls == 6 and layer.last_k == 3  # the counter is fed and written back


def test_run_time_errors_on_the_fast_path_name_the_user_line():
    @d2s.to_static
    def checked(x):
        assert rt.mean(x) > 0, "mean must be positive"
        return x * 2.0

    for _ in range(3):
        checked(_t([1.0, 2.0]))
    assert checked.program_cache.last_entry.fast is not None
    with pytest.raises(AssertionError, match="mean must be positive") as info:
        checked(_t([-1.0, -2.0]))
    assert "assert rt.mean(x) > 0" in "\n".join(getattr(info.value, "__notes__", []))
    np.testing.assert_allclose(checked(_t([1.0, 2.0])).numpy(), [2.0, 4.0])


def test_switching_conversion_off_runs_eager_code_again():
    @d2s.to_static
    def f(x):
        if rt.in_dynamic_mode():  # (a Python bool: True only when run eagerly)
            return x + 1.0
        return x + 2.0

    for _ in range(3):
        np.testing.assert_allclose(f(_t([1.0])).numpy(), [3.0])
    assert f.program_cache.last_entry.fast is not None
    d2s.enable_to_static(False)
    try:
        np.testing.assert_allclose(f(_t([1.0])).numpy(), [2.0])
    finally:
        d2s.enable_to_static(True)
    np.testing.assert_allclose(f(_t([1.0])).numpy(), [3.0])


@pytest.mark.filterwarnings("ignore:auto_cast on the CPU")
def test_auto_cast_is_part_of_the_signature():
    @d2s.to_static
    def mm(x, w):
        return rt.matmul(x, w)

    x, w = _t(np.ones((2, 3))), _t(np.ones((3, 2)))
    for _ in range(3):
        assert mm(x, w).dtype == rt.float32
    with rt.amp.auto_cast(dtype="bfloat16"):
        low = mm(x, w)
    assert low.dtype == rt.bfloat16
    np.testing.assert_allclose(low.astype("float32").numpy(), np.full((2, 2), 3.0))
    assert mm(x, w).dtype == rt.float32


def test_threads_calling_two_signatures_each_get_their_own_program():
    f = d2s.to_static(gate)
    sizes = [2, 5]
    errors, barrier = [], threading.Barrier(len(sizes))

    def worker(n):
        x = np.arange(1, n + 1, dtype="float32")
        barrier.wait()
        try:
            with rt.no_grad():
                for _ in range(50):
                    np.testing.assert_allclose(f(_t(x), 2.0).numpy(), x * 2 + 3)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(f.program_cache) == 2


def test_an_input_spec_with_a_dynamic_batch_shares_one_program_on_the_fast_path(monkeypatch):
    spec = [rt.static.InputSpec([None, 3], "float32")]

    @d2s.to_static(input_spec=spec)
    def scale_rows(x):
        return x * rt.sum(x, axis=1, keepdim=True)

    rng = np.random.default_rng(2)
    for _ in range(3):
        scale_rows(_t(rng.standard_normal((2, 3))))
    assert scale_rows.program_cache.last_entry.fast is not None
    _no_slow_path(monkeypatch)
    for batch in (1, 4, 7):
        x = rng.standard_normal((batch, 3)).astype("float32")
        np.testing.assert_allclose(scale_rows(_t(x)).numpy(), x * x.sum(1, keepdims=True),
                                   rtol=1e-5)
    monkeypatch.undo()
    assert len(scale_rows.program_cache) == 1
    with pytest.raises(ValueError, match="does not match its InputSpec shape"):
        scale_rows(_t(np.ones((2, 4))))  # a static dim differs: the slow path says why
