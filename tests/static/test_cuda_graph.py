"""CUDA-graph capture of compiled programs (`runtime/program/cuda_graph.py`, on with
`D2S_CUDA_GRAPH=1`). Without a GPU, `fake_cupy` keeps CUDA's rules for a capture: a launch
replays the recorded device operations on the recorded arrays (no Python runs again), host
reads and uploads raise while capturing, and a random draw replays its first values. Each
test compares a captured program with eager mode and a NumPy reference over inputs that
change between calls; the `gpu` test does the same on a real device."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import cuda_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fake_cupy  # noqa: E402

F = rt.nn.functional


class MLP(rt.nn.Layer):
    def __init__(self, sizes=(8, 16, 4)):
        super().__init__()
        self.fc1 = rt.nn.Linear(sizes[0], sizes[1])
        self.fc2 = rt.nn.Linear(sizes[1], sizes[2])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def numpy_mlp(layer, x):
    w1, b1 = layer.fc1.weight.numpy(), layer.fc1.bias.numpy()
    w2, b2 = layer.fc2.weight.numpy(), layer.fc2.bias.numpy()
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def _inputs(n, shape, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype("float32") for _ in range(n)]


def _entry(sf):
    return (sf.forward if isinstance(sf, rt.nn.Layer) else sf).program_cache.last_entry


def _body(sf):
    return _entry(sf).compiled.body


def _twins(seed, make=MLP):
    """A Layer converted by `to_static` (in place) and an eager one with the same weights."""
    rt.seed(seed)
    eager = make()
    rt.seed(seed)
    return d2s.to_static(make()), eager


@pytest.fixture
def graphs(monkeypatch):
    monkeypatch.setenv("D2S_CUDA_GRAPH", "1")
    with fake_cupy.installed():
        yield


def test_a_layer_is_captured_once_and_replayed_with_each_calls_inputs(graphs):
    sf, eager = _twins(0)
    outs = []
    with rt.no_grad():
        for x in _inputs(5, [2, 8]):
            got = sf(rt.to_tensor(x)).numpy()
            np.testing.assert_allclose(got, eager(rt.to_tensor(x)).numpy(), rtol=1e-6)
            np.testing.assert_allclose(got, numpy_mlp(eager, x), rtol=1e-5, atol=1e-6)
            outs.append(got)
    body = _body(sf)
    assert isinstance(body, cuda_graph.GraphBody) and body.captured
    # one warm-up call as the program is, then the capture and four launches
    assert body.graph.graph.launches == 5 - cuda_graph.WARMUP_CALLS
    assert len({o.tobytes() for o in outs}) == 5


def test_results_are_the_callers_not_the_graphs_buffers(graphs):
    rt.seed(1)
    layer = MLP()
    sf = d2s.to_static(layer)
    x1, x2 = _inputs(2, [3, 8], seed=1)
    with rt.no_grad():
        sf(rt.to_tensor(x1))
        first = sf(rt.to_tensor(x1))  # replayed
        kept = first.numpy().copy()
        sf(rt.to_tensor(x2))  # the next launch must not write into `first`
    np.testing.assert_array_equal(first.numpy(), kept)
    np.testing.assert_allclose(kept, numpy_mlp(layer, x1), rtol=1e-5, atol=1e-6)


def test_a_parameter_given_a_new_array_is_captured_again(graphs):
    rt.seed(2)
    layer = MLP()
    sf = d2s.to_static(layer)
    (x,) = _inputs(1, [2, 8], seed=2)
    with rt.no_grad():
        for _ in range(3):
            sf(rt.to_tensor(x))
        body = _body(sf)
        old = body.graph
        # `set_value` gives the weight a new array: the captured one would be stale
        layer.fc1.weight.set_value(layer.fc1.weight.numpy() * -2.0)
        got = sf(rt.to_tensor(x)).numpy()
        np.testing.assert_allclose(got, numpy_mlp(layer, x), rtol=1e-5, atol=1e-6)
        assert body.captured and body.graph is not old
        # written in place: the graph reads the same array, so the new values
        layer.fc2.bias._data[...] = fake_cupy.asarray(np.full(4, 3.0, "float32"))
        got = sf(rt.to_tensor(x)).numpy()
        np.testing.assert_allclose(got, numpy_mlp(layer, x), rtol=1e-5, atol=1e-6)


def gate(x):
    if rt.mean(x) > 0:
        y = rt.tanh(x) * 2.0
    else:
        y = x - 1.0
    return y


def test_control_flow_is_not_captured_and_takes_both_branches(graphs):
    sf = d2s.to_static(gate)
    xs = [np.abs(a) for a in _inputs(3, [4], seed=3)] + [-np.abs(a) for a in _inputs(3, [4])]
    with rt.no_grad():
        for x in xs:
            want = np.tanh(x) * 2.0 if x.mean() > 0 else x - 1.0
            np.testing.assert_allclose(sf(rt.to_tensor(x)).numpy(), want, rtol=1e-6)
            np.testing.assert_allclose(gate(rt.to_tensor(x)).numpy(), want, rtol=1e-6)
    assert not isinstance(_body(sf), cuda_graph.GraphBody)
    assert "control flow" in cuda_graph.refusal(_entry(sf).concrete.main_program)


class Noisy(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(8, 8)
        self.drop = rt.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


def test_a_random_op_is_never_captured(graphs):
    rt.seed(3)
    layer = Noisy()
    layer.train()
    sf = d2s.to_static(layer)
    (x,) = _inputs(1, [4, 8], seed=4)
    with rt.no_grad():
        outs = [sf(rt.to_tensor(x)).numpy() for _ in range(4)]
    # each call draws its own mask, as eager mode does (a replayed draw would repeat)
    assert len({(o == 0).tobytes() for o in outs}) == 4
    assert not isinstance(_body(sf), cuda_graph.GraphBody)
    assert "random" in cuda_graph.refusal(_entry(sf).concrete.main_program)


def test_a_body_that_reads_or_uploads_on_the_host_runs_uncaptured(graphs):
    xp = fake_cupy.FAKE
    a = xp.asarray(np.arange(4.0))

    def reads(x):
        return (x * 2.0,) if bool(x.sum() > 0) else (x,)

    def uploads(x):
        return (x + xp.asarray(np.ones(4)),)

    def number(x):
        return (x + xp.asarray(1.5),)

    for plain, want in [(reads, np.arange(4.0) * 2), (uploads, np.arange(4.0) + 1),
                        (number, np.arange(4.0) + 1.5)]:
        body = cuda_graph.GraphBody(plain, [])
        for _ in range(3):
            (got,) = body(a)
            np.testing.assert_array_equal(got.get(), want)
        assert not body.captured and body.graph is cuda_graph._REFUSED
    # the guard is gone once the capture ends
    assert xp.asarray(np.ones(2)).shape == (2,)


def test_off_by_default_and_on_the_cpu(monkeypatch):
    monkeypatch.delenv("D2S_CUDA_GRAPH", raising=False)
    with fake_cupy.installed():
        sf = d2s.to_static(MLP())
        with rt.no_grad():
            sf(rt.to_tensor(_inputs(1, [2, 8])[0]))
        assert not isinstance(_body(sf), cuda_graph.GraphBody)
    monkeypatch.setenv("D2S_CUDA_GRAPH", "1")
    sf = d2s.to_static(MLP())  # NumPy has no streams
    with rt.no_grad():
        sf(rt.to_tensor(_inputs(1, [2, 8])[0]))
    assert not isinstance(_body(sf), cuda_graph.GraphBody)


def test_threads_share_one_graph_without_mixing_their_inputs(graphs):
    rt.seed(5)
    layer = MLP()
    sf = d2s.to_static(layer)
    xs = _inputs(8, [2, 8], seed=5)
    wants = [numpy_mlp(layer, x) for x in xs]
    with rt.no_grad():
        sf(rt.to_tensor(xs[0]))
    errors = []

    def work(k):
        try:
            with rt.no_grad():
                for _ in range(30):
                    got = sf(rt.to_tensor(xs[k])).numpy()
                    np.testing.assert_allclose(got, wants[k], rtol=1e-5, atol=1e-6)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: between a copy-in and its launch too
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    assert _body(sf).captured


def test_training_calls_give_eager_gradients(graphs):
    sf, eager = _twins(6)
    for x in _inputs(3, [2, 8], seed=6):
        for model in (eager, sf):
            model.clear_gradients()
            (model(rt.to_tensor(x)) ** 2).sum().backward()
        for g, w in zip(sf.parameters(), eager.parameters(), strict=True):
            np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-5, atol=1e-6)
    training = _entry(sf)._training
    # the forward (with the values it saves) is a graph; the backward reads those values,
    # new arrays each call, so it runs as it is
    assert training.forward.body.captured
    assert not isinstance(training.backward.backward.body, cuda_graph.GraphBody)


def test_a_loaded_model_with_a_static_input_spec_is_captured(graphs, tmp_path):
    rt.seed(7)
    layer = MLP()
    layer.eval()
    prefix = str(tmp_path / "mlp")
    d2s.save(layer, prefix, input_spec=[d2s.InputSpec([2, 8], "float32")])
    model = d2s.load(prefix)
    for x in _inputs(4, [2, 8], seed=7):
        np.testing.assert_allclose(model(rt.to_tensor(x)).numpy(), numpy_mlp(layer, x),
                                   rtol=1e-5, atol=1e-6)
    assert sum(isinstance(c.body, cuda_graph.GraphBody) and c.body.captured
               for c in model._program._compiled.values()) == 1


def test_a_batch_of_unknown_size_is_refused(graphs):
    prog = rt.static.Program()
    with rt.static.program_guard(prog):
        x = rt.static.data("x", [None, 3], "float32")
        y = x * 2.0
    assert "static shape" in cuda_graph.refusal(prog)
    out = rt.static.Executor().run(prog, feed={"x": np.ones([5, 3], "float32")},
                                   fetch_list=[y])[0]
    np.testing.assert_array_equal(out, np.full([5, 3], 2.0, "float32"))


@pytest.mark.gpu
def test_real_graphs_match_the_uncaptured_program(monkeypatch):
    pytest.importorskip("cupy")
    rt.seed(8)
    xs = _inputs(6, [1, 784], seed=8)
    results = {}
    for flag in ("0", "1"):
        monkeypatch.setenv("D2S_CUDA_GRAPH", flag)
        rt.set_device("gpu")
        try:
            rt.seed(8)
            layer = MLP((784, 256, 10))
            layer.eval()
            sf = d2s.to_static(layer)
            with rt.no_grad():
                results[flag] = [sf(rt.to_tensor(x)).numpy() for x in xs]
            assert isinstance(_body(sf), cuda_graph.GraphBody) == (flag == "1")
            if flag == "1":
                assert _body(sf).captured
                want = numpy_mlp(layer, xs[-1])
        finally:
            rt.set_device("cpu")
    for a, b in zip(results["0"], results["1"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(results["1"][-1], want, rtol=1e-4, atol=1e-5)


# ---- every op as a captured program -------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
import test_generated as tg  # noqa: E402


def _program_of(info, args, kwargs):
    """The first sample's call as a static program: (program, feed, fetch)."""
    main, feed = rt.static.Program(), {}
    with rt.static.program_guard(main):
        sym = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                feed[f"arg{i}"] = a
                sym.append(rt.static.data(f"arg{i}", list(a.shape), str(a.dtype)))
            else:
                sym.append(a)
        fetch = tg.as_list(info.fn(*sym, **kwargs))
    return main, feed, fetch


def _other(feed):
    """Feeds of the same shapes with other values: floats halved (signs, positivity and
    definiteness kept, so each op's domain is too), integers and booleans as they were."""
    return {k: (a * 0.5).astype(a.dtype) if a.dtype.kind in "fc" else a
            for k, a in feed.items()}


def test_every_op_captured_replays_eager_values_for_new_inputs(graphs):
    captured = set()
    for info in tg.OPINFOS:
        if not info.static:
            continue
        sample = info.samples(np.random.default_rng(0))[0]
        args = tg.cast_args(sample.args, "float64")
        if any(isinstance(a, list) for a in args):
            continue
        rt.seed(0)
        main, feed, fetch = _program_of(info, args, sample.kwargs)
        exe = rt.static.Executor()
        if "random" in (cuda_graph.refusal(main) or ""):
            for _ in range(3):
                exe.run(main, feed=feed, fetch_list=fetch)
            assert not isinstance(next(iter(main._compiled.values())).body,
                                  cuda_graph.GraphBody), info.name
            continue  # (its draws on the device are not the CPU generator's)
        for k, values in enumerate([feed, feed, _other(feed), feed]):
            rt.seed(0)  # (a random op draws as eager mode does after the same seed)
            got = exe.run(main, feed=values, fetch_list=fetch)
            rt.seed(0)
            with _cpu():
                want = tg.as_list(info.fn(*tg.to_tensors(
                    [values.get(f"arg{i}", a) for i, a in enumerate(args)]), **sample.kwargs))
            tg.check_close(info, "float64", got, [w.numpy() for w in want],
                           f"call {k + 1} of the captured program")
        body = next(iter(main._compiled.values())).body
        if isinstance(body, cuda_graph.GraphBody) and body.captured:
            captured.add(info.name)
    assert {"add", "matmul", "relu", "softmax", "exp", "mean"} <= captured, sorted(captured)


class _cpu:
    """Eager values on the CPU (the reference) while the fake device is selected."""

    def __enter__(self):
        from runtime import backend
        self.saved = (backend.XP, backend.DEVICE)
        rt.set_device("cpu")

    def __exit__(self, *exc):
        from runtime import backend
        backend.XP, backend.DEVICE = self.saved


def test_the_benchmark_runs_and_says_what_was_captured(capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import cuda_graph as bench
    with fake_cupy.installed():
        assert bench.main(["--repeat", "1", "--number", "2"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| ")]
    assert rows[0].startswith("| gpu:0, µs per call | plain CuPy")
    assert [r.split(" | ")[0] for r in rows[1:]] == ["| MLP 784-256-256-10, batch 1",
                                                    "| 24 elementwise ops on f32[64]"]
    for r in rows[1:]:
        cells = r.strip("| ").split(" | ")
        assert cells[5] == "yes" and float(cells[6]) == 0.0, r


def test_the_benchmark_without_a_gpu_says_so(capsys, monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import cuda_graph as bench
    monkeypatch.setattr(bench.rt, "is_compiled_with_cuda", lambda: False)
    assert bench.main([]) == 2
    assert "no usable CuPy + CUDA device" in capsys.readouterr().err
