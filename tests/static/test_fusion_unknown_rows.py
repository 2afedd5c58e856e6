"""Fused elementwise runs whose rows (the batch) are unknown when the program is built: a saved
and loaded model (`d2s.save` folds BatchNorm, leaving `conv2d -> add(bias) -> relu`) and a
function converted with `InputSpec([None, ...])`. One program serves every batch size; each
call takes the fused function where its row inputs agree on the row count and the run is big
enough, else the ops unfused (`fusion.run_time_guard`). Compared with `D2S_FUSION=0` (the
unfused reference, bit for bit on the NumPy code), a NumPy reference, and gradients with
finite differences."""
import os

import numpy as np
import pytest

import d2s
import runtime as rt
from examples.models import ResNet
from runtime import nn
from runtime.program import fusion, native_build
from runtime.program.fused_function import compile_numpy
from runtime.program.fusion_chunks import ChunkCall, ChunkPlan
from tests.finite_differences import numeric_grad

BATCHES = (1, 7, 32)


@pytest.fixture(autouse=True)
def _numpy_fused_code(monkeypatch):
    """The fused NumPy code is exact; the C code (a float tolerance) has its own tests."""
    monkeypatch.setenv("D2S_NATIVE", "0")


def _with_statistics(layer: nn.Layer, shape: list) -> nn.Layer:
    """`layer` after training-mode calls (running statistics away from 0 and 1), in eval."""
    rng = np.random.default_rng(1)
    with rt.no_grad():
        for _ in range(3):
            layer(rt.to_tensor(rng.standard_normal([8] + shape[1:]).astype(np.float32)))
    return layer.eval()


def _mlp() -> nn.Layer:
    return nn.Sequential(nn.Linear(64, 256), nn.BatchNorm1D(256), nn.ReLU(),
                         nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 10))


MODELS = [("resnet", lambda: ResNet(widths=(8, 16), blocks_per_stage=2), [None, 3, 32, 32]),
          ("mlp", _mlp, [None, 64])]


def _saved(make, shape: list, tmp_path, monkeypatch, flag: str):
    """The model saved (BatchNorm folded) and loaded with `D2S_FUSION=flag`."""
    rt.seed(0)
    layer = _with_statistics(make(), shape)
    prefix = os.path.join(tmp_path, f"model.{flag}")
    d2s.save(layer, prefix, input_spec=[d2s.InputSpec(shape, "float32")])
    monkeypatch.setenv("D2S_FUSION", flag)
    return layer, d2s.load(prefix)


@pytest.mark.slow
@pytest.mark.parametrize("name, make, shape", MODELS, ids=[m[0] for m in MODELS])
@pytest.mark.parametrize("flag", ["1", "test"])
def test_a_loaded_model_fuses_its_tails_for_every_batch(name, make, shape, flag, tmp_path,
                                                        monkeypatch):
    """"1": the real thresholds (batch 1 runs unfused, 32 fused); "test": every run fused, in
    chunks of a few elements, over the threads."""
    layer, unfused = _saved(make, shape, tmp_path, monkeypatch, "0")
    _, fused = _saved(make, shape, tmp_path, monkeypatch, flag)
    assert " = FU" not in unfused._compiled.source
    source = fused._compiled.source
    assert source.count(" = FU") >= 1 and "shape[0] * " in source, source
    for batch in BATCHES:
        x = np.random.default_rng(batch).standard_normal([batch] + shape[1:]).astype("float32")
        with rt.no_grad():
            want = unfused(rt.to_tensor(x)).numpy()
            got = fused(rt.to_tensor(x)).numpy()
            eager = layer(rt.to_tensor(x)).numpy()
        assert got.shape == (batch, 10)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, eager, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_the_resnet_plan_fuses_each_bias_and_relu(tmp_path, monkeypatch):
    """Every folded `conv2d -> add(bias) [-> add(shortcut)] -> relu` of the loaded ResNet is one
    fused run, one per convolution: the projection's convolution comes between the second
    stage's first `add(bias)` and the shortcut add, which leaves that bias a run of its own
    (fused from 64 rows, where one op is worth splitting over the threads)."""
    _, loaded = _saved(MODELS[0][1], MODELS[0][2], tmp_path, monkeypatch, "1")
    source = loaded._compiled.source
    assert source.count(" = FU") == 10, source
    assert source.count("shape[0] * 4096 >= 262144:") == 1
    assert source.count("v_t4.shape[0] == ") == 1  # the identity shortcut's row count


def two_rows(x, y):
    return rt.tanh(x * y + 0.5) * 2.0 - y


def _np_two_rows(x, y):
    return np.tanh(x * y + np.float32(0.5)) * np.float32(2) - y


@pytest.mark.parametrize("rows", [(5, 5), (1, 5), (5, 1)])
def test_row_inputs_that_broadcast_run_unfused(rows, monkeypatch):
    """Two inputs with unknown rows: where one has a single row it broadcasts (as eager
    does), so the fused function (which reads the rows of one) must not run."""
    monkeypatch.setenv("D2S_FUSION", "test")
    spec = [d2s.InputSpec([None, 8], "float32")] * 2
    sf = d2s.to_static(two_rows, input_spec=spec)
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal([n, 8]).astype("float32") for n in rows)
    with rt.no_grad():
        got = sf(rt.to_tensor(x), rt.to_tensor(y)).numpy()
    np.testing.assert_allclose(got, _np_two_rows(x, y), rtol=1e-6, atol=1e-6)
    assert got.shape == (max(rows), 8)
    source = sf.program_cache.last_entry.compiled.source
    assert " = FU" in source and "shape[0] == " in source, source


def mlp_tail(x, w, b):
    h = rt.matmul(x, w)
    return (rt.tanh(h + b) * h).sum()


@pytest.mark.parametrize("batch", [1, 4, 9])
def test_gradients_through_fused_runs_with_unknown_rows(batch, monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "test")
    rng = np.random.default_rng(batch)
    xa = rng.standard_normal([batch, 8])
    wa = rng.standard_normal([8, 6]) * 0.5
    ba = rng.standard_normal(6)
    sf = d2s.to_static(mlp_tail, input_spec=[d2s.InputSpec([None, 8], "float64"),
                                             d2s.InputSpec([8, 6], "float64"),
                                             d2s.InputSpec([6], "float64")])
    x = rt.to_tensor(xa, stop_gradient=False)
    w = rt.to_tensor(wa, stop_gradient=False)
    sf(x, w, rt.to_tensor(ba)).backward()
    assert " = FU" in sf.program_cache.last_entry.compiled.source

    def loss(xv, wv):
        h = xv @ wv
        return float((np.tanh(h + ba) * h).sum())

    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda v: loss(v, wa), xa),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(w.grad.numpy(), numeric_grad(lambda v: loss(xa, v), wa),
                               rtol=1e-6, atol=1e-7)


def test_only_the_rows_may_be_unknown():
    """The run-time guard names each row input; a run with known rows has none."""
    group = fusion.Group([0, 1], ["a", "b"], ["c"], -1, None, 16, 1024, ["a", "b"])
    assert fusion.run_time_guard(group, lambda n: "v_" + n) == \
        "v_a.shape[0] * 16 >= 1024 and v_b.shape[0] == v_a.shape[0]"
    group.rows = 64
    assert fusion.run_time_guard(group, str) is None


def test_numpy_code_of_a_plan_with_unknown_rows_takes_them_from_its_input():
    """`exp(x) * 2` and the row sums of `exp(x)`, rows of 3 in chunks of 2 rows, any row
    count: the outputs are allocated per call by the input's rows."""
    plan = ChunkPlan(
        name="any_rows", params=["x"], outputs=[("o0", (-1, 3), None), ("o1", (-1,), None)],
        reshaped=[], buffers=[(3,)], sliced=[("a0", "x")],
        calls=[ChunkCall(10, "exp", ["a0"], "b0"),
               ChunkCall(11, "multiply", ["b0", "c0"], "o0c", "o0"),
               ChunkCall(12, "add", ["b0"], "o1c", "o1", axes=(1,))],
        step=2, rows=-1, parallel_rows=4, dtype=np.dtype("float64"),
        consts={"c0": np.float64(2.0)})
    fn = compile_numpy(plan)[0]
    for rows in (0, 1, 5, 9):
        x = np.random.default_rng(rows).standard_normal((rows, 3))
        out, sums = fn(x)
        assert out.shape == (rows, 3) and sums.shape == (rows,)
        np.testing.assert_array_equal(out, np.exp(x) * 2.0)
        np.testing.assert_allclose(sums, np.exp(x).sum(1), rtol=1e-15)


def bias_tanh_gate(x, b):
    return rt.tanh(x + b) * x - 0.5


@pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
def test_the_c_function_of_a_run_takes_its_rows_at_run_time(monkeypatch):
    """One C function (compiled now: `sync`) for every batch: its outputs are allocated by
    the input's rows, its row loop bounded by them (float tolerance: C's tanh)."""
    monkeypatch.setenv("D2S_FUSION", "test")
    monkeypatch.setenv("D2S_NATIVE", "sync")
    sf = d2s.to_static(bias_tanh_gate, input_spec=[d2s.InputSpec([None, 256], "float32"),
                                                   d2s.InputSpec([256], "float32")])
    rng = np.random.default_rng(5)
    b = rng.standard_normal(256).astype("float32")
    for batch in BATCHES:
        x = rng.standard_normal([batch, 256]).astype("float32")
        before = native_build.stats()["native_calls"]
        with rt.no_grad():
            got = sf(rt.to_tensor(x), rt.to_tensor(b)).numpy()
        assert native_build.stats()["native_calls"] == before + 1
        assert got.shape == (batch, 256)
        np.testing.assert_allclose(got, np.tanh(x + b) * x - np.float32(0.5), rtol=1e-5,
                                   atol=1e-6)
    assert len(sf.program_cache) == 1


@pytest.mark.slow
@pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
def test_conv_bias_and_relu_run_as_c_with_the_bias_expanded_to_a_row(tmp_path, monkeypatch):
    """A folded conv's bias [1, C, 1, 1] is broadcast to one row [C, H, W] before the call,
    which the C code reads as a broadcast row (`LoopNest.expand`); add and max give NumPy's
    bits (the C convolution kernels, in both programs, do not: compared with native code on)."""
    monkeypatch.setenv("D2S_NATIVE", "sync")
    _, unfused = _saved(MODELS[0][1], MODELS[0][2], tmp_path, monkeypatch, "0")
    _, fused = _saved(MODELS[0][1], MODELS[0][2], tmp_path, monkeypatch, "1")
    for batch, runs in ((32, 9), (7, 0)):  # (below 65536 elements a run goes unfused)
        x = rt.to_tensor(np.random.default_rng(batch).standard_normal(
            [batch, 3, 32, 32]).astype("float32"))
        before = native_build.stats()["native_calls"]
        with rt.no_grad():
            got = fused(x).numpy()
        assert native_build.stats()["native_calls"] - before == runs
        np.testing.assert_array_equal(got, unfused(x).numpy())
