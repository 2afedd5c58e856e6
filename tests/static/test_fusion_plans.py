"""A fused run's code in two steps, each tested alone: the plan (`native.plan_loops` ->
`LoopNest`, `fusion_chunks.plan` -> `ChunkPlan`) from a program built by hand, and the text
(`native_emit.c_source`, `fusion_emit.numpy_source`) from a plan written by hand, run against
NumPy."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

import runtime as rt
from runtime.program import fusion, fusion_chunks, native, native_build
from runtime.program.fused_function import compile_numpy
from runtime.program.fusion_chunks import ChunkCall, ChunkPlan
from runtime.program.loop_nest import Loop, LoopNest, Operand, Step
from runtime.program.native_emit import c_source


@pytest.fixture(autouse=True)
def _every_run_fused(monkeypatch):
    monkeypatch.setenv("D2S_FUSION", "test")  # (small runs are fused too)


def _layer_norm_run(dtype="float32"):
    """A LayerNorm over [8, 4] rows with a bias, as a program, and its one fused run."""
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [8, 4], dtype)
        b = rt.static.data("b", [4], dtype)
        h = x + b
        d = h - rt.mean(h, axis=-1, keepdim=True)
        y = d / rt.sqrt(rt.mean(d * d, axis=-1, keepdim=True) + 1e-5)
    block = main.global_block()
    groups = fusion.find_groups(block, lambda name, first, last: name == y.name)
    assert len(groups) == 1
    return groups[0], block


def _kinds(nest):
    return [("loop", [s.type for s in item.steps]) if isinstance(item, Loop) else item.type
            for item in nest.body]


def test_layer_norm_plans_three_loops_and_per_row_values_between_them():
    group, block = _layer_norm_run()
    nest = native.plan_loops(group, block)
    assert (nest.ctype, nest.inputs, nest.outputs, nest.rows, nest.width, nest.flat) == \
        ("float", 2, 1, 8, 4, False)
    # the mean needs its loop done before `h - mean` can start: a second loop; the
    # variance's `+ eps` and sqrt are one value per row, between the loops
    assert _kinds(nest) == [("loop", ["add", "mean"]),
                            ("loop", ["subtract", "multiply", "mean"]), "add", "sqrt",
                            ("loop", ["divide"])]
    add, mean = nest.body[0].steps
    assert add.operands == [Operand("input", 0, "wide"), Operand("input", 1, "bcast")]
    assert mean.operands == [Operand("local", 0)]
    # h and d are read by a later loop than the one that made them: row buffers
    assert nest.tmps == 2 and add.tmp == 0
    subtract = nest.body[1].steps[0]
    assert subtract.operands == [Operand("tmp", 0), Operand("local", 1)]
    assert subtract.tmp == 1
    eps = nest.body[2]
    assert eps.operands == [Operand("local", 4), Operand("const", 1e-5)] and eps.tmp is None
    divide, = nest.body[4].steps
    assert divide.operands == [Operand("tmp", 1), Operand("local", 6)] and divide.out == 0


def _elementwise_run(dtype):
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [6, 5], dtype)
        y = rt.exp(x * 2.0) - 1.0
    block = main.global_block()
    group, = fusion.find_groups(block, lambda name, first, last: name == y.name)
    return group, block


def test_an_elementwise_run_on_scalars_is_one_flat_loop_and_float16_has_no_plan():
    nest = native.plan_loops(*_elementwise_run("float64"))
    assert nest.flat and nest.ctype == "double" and nest.tmps == 0
    assert _kinds(nest) == [("loop", ["multiply", "exp", "subtract"])]
    assert nest.body[0].steps[-1].out == 0
    assert native.plan_loops(*_elementwise_run("float16")) is None  # (float32/float64 only)


def test_chunk_plan_reuses_the_buffer_of_a_value_that_dies():
    group, block = _layer_norm_run()
    plan = fusion_chunks.plan("ln", group, block, lambda name: f"v_{name}")
    assert [c.func for c in plan.calls] == ["add", "add", "subtract", "multiply", "add", "add",
                                            "sqrt", "divide"]
    assert [c.op for c in plan.calls] == group.ops
    assert plan.sliced == [("a0", "v_x")] and plan.params == ["v_x", "v_b"]
    # h (b0) dies at `h - mean`, which writes its result into the same buffer
    assert [c.dest for c in plan.calls] == ["b0", "b1", "b0", "b2", "b1", "b1", "b1", "o0c"]
    assert plan.buffers == [(4,), (1,), (4,)]
    mean = plan.calls[1]
    assert (mean.axes, mean.keepdims, plan.consts[mean.count]) == ((1,), True, 4)
    assert plan.calls[-1].output == "o0" and plan.outputs == [("o0", (8, 4), None)]


def _hand_made_chunk_plan():
    """`out = exp(x) * 2`, sums of rows of `exp(x)`; 7 rows of 3 in chunks of 2 rows."""
    return ChunkPlan(
        name="hand_made", params=["x"], outputs=[("o0", (7, 3), None), ("o1", (7,), None)],
        reshaped=[], buffers=[(3,)], sliced=[("a0", "x")],
        calls=[ChunkCall(10, "exp", ["a0"], "b0"),
               ChunkCall(11, "multiply", ["b0", "c0"], "o0c", "o0"),
               ChunkCall(12, "add", ["b0"], "o1c", "o1", axes=(1,))],
        step=2, rows=7, parallel_rows=8, dtype=np.dtype("float64"),
        consts={"c0": np.float64(2.0)})


def test_numpy_code_from_a_hand_made_chunk_plan():
    fn, filename, lines = compile_numpy(_hand_made_chunk_plan())
    x = np.random.default_rng(0).standard_normal((7, 3))
    out, sums = fn(x)
    np.testing.assert_array_equal(out, np.exp(x) * 2.0)
    np.testing.assert_allclose(sums, np.exp(x).sum(1), rtol=1e-15)
    text = __import__("linecache").getlines(filename)
    assert [text[n - 1].strip() for n in sorted(lines)] == [
        "_np.exp(a0, out=b0)", "_np.multiply(b0, c0, out=o0c)",
        "_np.add.reduce(b0, axis=(1,), keepdims=False, out=o1c)"]
    assert sorted(lines.values()) == [10, 11, 12]


def _hand_made_nest():
    """`o0 = i0 * i1[0]` (wide), `o1[r] = sum of the row of o0`: one loop over rows of 4."""
    return LoopNest("hand_made", "float", inputs=2, outputs=2, rows=3, width=4, flat=False,
                    tmps=0, body=[Loop([
                        Step("multiply", 0, [Operand("input", 0, "wide"),
                                             Operand("input", 1, "scalar")], out=0),
                        Step("sum", 1, [Operand("local", 0)], out=1)])])


def test_c_text_from_a_hand_made_loop_nest():
    src = c_source(_hand_made_nest(), vector_math=False)
    body = [ln.strip() for ln in src.splitlines()]
    for line in ("D2S_VECTOR_WIDTH int hand_made(char **p, int64_t lo, int64_t hi) {",
                 "const float *restrict i1 = (const float *)p[1];",
                 "float *restrict o1 = (float *)p[3];",
                 "for (int64_t r = lo; r < hi; r++) {", "double accv1 = 0.0;",
                 "#pragma omp simd reduction(+:accv1)",
                 "float v0 = (i0[base + j] * i1[0]);", "o0[base + j] = v0;",
                 "accv1 += (double)v0;", "float v1 = (float)accv1;", "o1[r] = v1;"):
        assert line in body, line
    assert "simd(\"notinbranch\")" not in src and "malloc" not in src  # (no row buffers)


@pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
def test_c_code_from_a_hand_made_loop_nest_computes_what_it_says(tmp_path):
    c_file, lib = tmp_path / "hand_made.c", tmp_path / "hand_made.so"
    c_file.write_text(c_source(_hand_made_nest(), vector_math=False))
    subprocess.run([native_build.compiler()[0], *native_build.PLAIN_FLAGS, str(c_file), "-o",
                    str(lib), "-lm"], check=True)
    fn = ctypes.CDLL(str(lib)).hand_made
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    s = np.array([0.5], np.float32)
    out, sums = np.zeros((3, 4), np.float32), np.zeros(3, np.float32)
    ptrs = (ctypes.c_void_p * 4)(*[a.ctypes.data for a in (x, s, out, sums)])
    assert fn(ptrs, 0, 3) == 0  # (no floating-point exception)
    np.testing.assert_array_equal(out, x * s[0])
    np.testing.assert_array_equal(sums, (x * s[0]).sum(1, dtype=np.float64).astype(np.float32))
