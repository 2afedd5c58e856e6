"""Converted code and eager code in many threads at once: tracing, grad mode and auto_cast are
per thread, a first call converts and traces once while other threads wait, and backward runs
concurrently."""
from __future__ import annotations

import collections
import importlib.util
import threading
import time
import traceback

import numpy as np
import pytest

import d2s
import runtime as rt

THREADS = 16


def _run_threads(work, n=THREADS):
    errors = []
    barrier = threading.Barrier(n)

    def body(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001  (collected and asserted on)
            errors.append((i, repr(e), traceback.format_exc(limit=-6)))

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def _fresh_functions(count, folder):
    """`count` distinct user functions from a module file (each converts cold)."""
    lines = ["import runtime as rt", ""]
    for k in range(count):
        lines += [f"def f{k}(x):",
                  f"    if rt.mean(x) > {k % 3 - 1}:",
                  f"        y = x * {k + 2}",
                  "    else:",
                  f"        y = x - {k}",
                  "    i = rt.zeros([1], 'int64')",
                  "    while i < 3:",
                  "        y = y + 1",
                  "        i += 1",
                  "    return y", ""]
    path = folder / "fresh_threads_module.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("fresh_threads_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [getattr(module, f"f{k}") for k in range(count)]


def _reference(k, x):
    y = x * (k + 2) if x.mean() > k % 3 - 1 else x - k
    return y + 3


def test_cold_first_calls_in_16_threads_with_eager_code_alongside(tmp_path):
    fns = _fresh_functions(20, tmp_path)
    statics = [d2s.to_static(f) for f in fns]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((3, 4)).astype("float32") for _ in range(4)]

    def work(i):
        for rep in range(2):
            for k in range(len(statics)):
                if (i + k) % 4 == 0:  # eager work in the same threads, interleaved
                    out = rt.tanh(rt.to_tensor(inputs[k % 4])) * 2
                    assert type(out) is rt.Tensor
                    np.testing.assert_allclose(out.numpy(), np.tanh(inputs[k % 4]) * 2,
                                               rtol=1e-6)
                x = inputs[(i + k + rep) % 4]
                got = statics[k](rt.to_tensor(x))
                assert type(got) is rt.Tensor, type(got)
                np.testing.assert_allclose(got.numpy(), _reference(k, x), rtol=1e-5)

    errors = _run_threads(work)
    assert errors == []
    assert all(len(s.program_cache) == 1 for s in statics)  # one trace each, shared
    # and the process is still in eager mode afterwards
    assert rt.in_dynamic_mode()
    assert type(rt.ones([2]) + 1) is rt.Tensor


def test_eager_ops_of_other_threads_are_not_recorded_into_a_program_being_built():
    started, release = threading.Event(), threading.Event()
    seen = {}

    def slow_forward(x):
        started.set()
        release.wait(10)
        return x + 1

    sf = d2s.to_static(slow_forward)

    def tracer():
        seen["traced"] = sf(rt.ones([2]))

    th = threading.Thread(target=tracer)
    th.start()
    assert started.wait(10)
    try:
        eager = rt.ones([2]) * 3  # while the other thread is building its program
        seen["eager_type"] = type(eager)
        seen["eager"] = eager.numpy()
    finally:
        release.set()
        th.join()
    assert seen["eager_type"] is rt.Tensor
    np.testing.assert_array_equal(seen["eager"], [3, 3])
    np.testing.assert_array_equal(seen["traced"].numpy(), [2, 2])
    ops = [op.type for op in sf.concrete_program.main_program.global_block().ops]
    assert "scale" not in ops and ops.count("elementwise_mul") == 0, ops


def test_grad_mode_is_per_thread():
    inside = threading.Event()
    leave = threading.Event()
    seen = {}

    def frozen():
        with rt.no_grad():
            inside.set()
            leave.wait(10)

    th = threading.Thread(target=frozen)
    th.start()
    assert inside.wait(10)
    try:
        seen["enabled"] = rt.is_grad_enabled()
        w = rt.to_tensor([2.0], stop_gradient=False)
        (w * w).sum().backward()
        seen["grad"] = w.grad.numpy()
    finally:
        leave.set()
        th.join()
    assert seen["enabled"] is True
    np.testing.assert_allclose(seen["grad"], [4.0])


class _Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)

    @d2s.to_static
    def forward(self, x):
        h = self.fc(x)
        if rt.mean(h) > 0:
            h = rt.tanh(h)
        else:
            h = h * 0.5
        return h


def test_training_calls_with_backward_in_16_threads():
    rt.seed(0)
    static = _Net()
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((2, 4)).astype("float32") * s for s in (1, -1, 3, -3)]

    def grads(net, xb):
        net.clear_gradients()
        x = rt.to_tensor(xb, stop_gradient=False)
        (net(x) ** 2).sum().backward()
        return x.grad.numpy()

    with _eager_mode():  # the same Layer run as eager code is the reference
        expected = [grads(static, xb) for xb in batches]
    static(rt.to_tensor(batches[0], stop_gradient=False))  # traced before the threads start

    def work(i):
        for rep in range(20):
            k = (i + rep) % 4
            x = rt.to_tensor(batches[k], stop_gradient=False)
            y = static(x)
            (y ** 2).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), expected[k], rtol=1e-5, atol=1e-6)

    errors = _run_threads(work)
    assert errors == [], errors[:3]
    assert len(static.forward.program_cache) == 1


class _eager_mode:
    def __enter__(self):
        d2s.enable_to_static(False)

    def __exit__(self, *exc):
        d2s.enable_to_static(True)


def test_a_failed_first_call_leaves_no_state_behind():
    @d2s.to_static
    def broken(x):
        y = x + 1
        raise KeyError("boom")
        return y

    for _ in range(2):
        try:
            broken(rt.ones([2]))
        except KeyError:
            pass
        else:
            raise AssertionError("expected KeyError")
        assert rt.in_dynamic_mode()
        assert len(broken.program_cache) == 0
        assert type(rt.ones([1]) + 1) is rt.Tensor


class _YieldingDict(collections.OrderedDict):
    """The program cache's table, giving up the GIL after every change it makes: threads
    that read the table without the lock then see every intermediate state."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        time.sleep(0.001)

    def setdefault(self, key, default=None):
        got = super().setdefault(key, default)
        time.sleep(0.001)
        return got

    def __delitem__(self, key):
        super().__delitem__(key)
        time.sleep(0.001)

    def move_to_end(self, key, last=True):
        super().move_to_end(key, last)
        time.sleep(0.001)


@pytest.mark.filterwarnings("ignore:.*has been traced:UserWarning")
def test_lookups_without_the_lock_never_see_a_half_made_cache_entry():
    """A trace adds its entry (and evicts the oldest) while other threads look up programs
    without the lock: they must see the table before or after, never an empty entry list
    (the IndexError a cold first call in 16 threads hit under load)."""
    scale = d2s.to_static(_scaled)
    scale.program_cache._entries = _YieldingDict()
    scale.program_cache.max_size = 3  # evictions too
    x = np.arange(6, dtype="float32").reshape(2, 3)

    def work(i):
        for rep in range(8):
            n = (i + rep) % 5  # a Python int: one program per value
            got = scale(rt.to_tensor(x), n)
            np.testing.assert_array_equal(got.numpy(), x * n + 1)

    errors = _run_threads(work, 8)
    assert errors == [], errors[:2]
    assert len(scale.program_cache) <= 3


def _scaled(x, n):
    return x * n + 1
