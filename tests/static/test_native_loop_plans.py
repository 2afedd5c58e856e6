"""A tensor loop's C code in two steps, each tested alone: the plan (`native_loops.plan` ->
`WhilePlan`, `loop_plan.py`) of a converted function's `while`, checked as data, and the C
text (`native_loops_emit.c_source`) of a plan written by hand, compiled and run against
NumPy."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import native_build, native_loops
from runtime.program.loop_plan import (
    Buffer,
    Carried,
    Copy,
    LoopOutput,
    LoopStep,
    MatmulStep,
    Ref,
    WhilePlan,
)
from runtime.program.native_loops_emit import PAUSED, c_source


def _plans_of(fn, monkeypatch, *args) -> tuple:
    """(the plans `native_loops.plan` made while converting `fn`, its outputs as arrays)."""
    plans = []
    planner = native_loops.plan

    def recording(g, op, block):
        plans.append(planner(g, op, block))
        return plans[-1]

    monkeypatch.setattr(native_loops, "plan", recording)
    monkeypatch.setenv("D2S_NATIVE", "0")  # (the plan is made all the same; nothing compiles)
    out = d2s.to_static(fn)(*[rt.to_tensor(a) for a in args])
    out = out if isinstance(out, (tuple, list)) else (out,)
    return plans, [t.numpy() for t in out]


def damp(x, bias, n):
    """x <- x / 2 + bias, n times (a bias row broadcast over x's rows)."""
    i = rt.zeros([1], "int64")
    while i < n:
        x = x * 0.5 + bias
        i += 1
    return x


@pytest.mark.parametrize("n", [0, 3])
def test_plan_of_a_damped_loop(monkeypatch, n):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    bias = np.array([1.0, -2.0, 0.25], "float32")
    plans, (out,) = _plans_of(damp, monkeypatch, x, bias, np.array([n], "int64"))
    want = x.copy()
    for _ in range(n):
        want = want * np.float32(0.5) + bias
    np.testing.assert_array_equal(out, want)
    assert len(plans) == 1
    p = plans[0]
    assert [(c.dtype, c.shape, c.size, c.offset, c.init) for c in p.carried] == [
        ("int64", (1,), 1, 0, 0), ("float32", (2, 3), 6, 8, Ref("array", 0))]
    assert p.state_bytes == 32  # (each carried value 8-byte aligned)
    assert p.arrays == [("v_x", "float32", (2, 3)), ("v_n", "int64", (1,)),
                        ("v_bias", "float32", (3,))]
    assert p.ints == []
    assert p.buffers == [Buffer("bool", 1), Buffer("float32", 6), Buffer("float32", 6),
                         Buffer("int64", 1)]
    assert p.cond_steps == [LoopStep("less_than", "bool", 1, 0,
                                     [Ref("state", 0), Ref("array", 1)], [1, 1],
                                     ["int64", "int64"])]
    assert p.cond == Ref("buffer", 0)
    assert p.body_steps == [
        LoopStep("multiply", "float32", 6, 1, [Ref("state", 1), 0.5], [6, None],
                 ["float32", "float32"]),
        LoopStep("add", "float32", 6, 2, [Ref("buffer", 1), Ref("array", 2)], [6, 3],
                 ["float32", "float32"]),  # (the bias row: 3 elements, read modulo 3)
        LoopStep("add", "int64", 1, 3, [Ref("state", 0), 1], [1, None], ["int64", "int64"])]
    assert p.copies == [Copy(Ref("state", 0), Ref("buffer", 3), "int64", 1),
                        Copy(Ref("state", 1), Ref("buffer", 2), "float32", 6)]
    assert [(o.dtype, o.shape, o.state) for o in p.outputs] == [("float32", (2, 3), 1)]
    assert p.trips_per_call == native_loops.TRIPS_PER_CALL


def fibonacci(a, b, n):
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a, b


def test_plan_copies_a_carried_value_aside_before_it_is_overwritten(monkeypatch):
    plans, (a, b) = _plans_of(fibonacci, monkeypatch, np.array([0, 2], "int64"),
                              np.array([1, 3], "int64"), np.array([5], "int64"))
    np.testing.assert_array_equal(a, [5, 21])  # (0 1 1 2 3 5 8 and 2 3 5 8 13 21 34)
    np.testing.assert_array_equal(b, [8, 34])
    (p,) = plans
    assert p.carried[2] == Carried("int64", (), 1, 32, 0)  # (the Python int counter)
    aside = Ref("buffer", 3)
    assert p.buffers[3] == Buffer("int64", 2)
    assert p.copies == [Copy(aside, Ref("state", 1), "int64", 2),  # (old b, for the new a)
                        Copy(Ref("state", 0), aside, "int64", 2),
                        Copy(Ref("state", 1), Ref("buffer", 1), "int64", 2),
                        Copy(Ref("state", 2), Ref("buffer", 2), "int64", 1)]
    assert [o.state for o in p.outputs] == [0, 1]


def repeated_matmul(x, w, n):
    i = rt.zeros([1], "int64")
    while i < n:
        x = rt.matmul(x, w)
        i += 1
    return x


def test_no_plan_for_a_batched_matmul_and_one_step_for_a_2d_one(monkeypatch):
    w = np.array([[0.0, 1.0], [1.0, 0.0]], "float32")
    x = np.eye(2, dtype="float32") * 3
    plans, (out,) = _plans_of(repeated_matmul, monkeypatch, x[None], w[None],
                              np.array([3], "int64"))
    np.testing.assert_array_equal(out, 3 * w[None])
    assert plans == [None]
    plans, (out,) = _plans_of(repeated_matmul, monkeypatch, x, w, np.array([3], "int64"))
    np.testing.assert_array_equal(out, 3 * w)
    (p,) = plans
    steps = [s for s in p.body_steps if isinstance(s, MatmulStep)]
    assert steps == [MatmulStep("float32", 2, 2, 2, steps[0].result, Ref("state", 1),
                                Ref("array", 2), False, False)]


def _hand_made_plan(trips_per_call) -> WhilePlan:
    """while i < n: y = x; x = max(x * 0.5 + bias, 0.25); i += 1 — x [2, 3] float64 from
    array 0, bias [3] array 1, n an int argument; y [2, 3] starts at -1."""
    f8 = "float64"
    return WhilePlan(
        name="hand_made_loop", trips_per_call=trips_per_call,
        carried=[Carried("int64", (), 1, 0, 0), Carried(f8, (2, 3), 6, 8, Ref("array", 0)),
                 Carried(f8, (2, 3), 6, 56, -1.0)],
        arrays=[("x", f8, (2, 3)), ("bias", f8, (3,))], ints=["n"],
        buffers=[Buffer("bool", 1), Buffer(f8, 6), Buffer(f8, 6), Buffer(f8, 6),
                 Buffer("int64", 1), Buffer(f8, 6)],
        cond_steps=[LoopStep("less_than", "bool", 1, 0, [Ref("state", 0), Ref("int", 0)],
                             [1, 1], ["int64", "int64"])],
        cond=Ref("buffer", 0),
        body_steps=[
            LoopStep("multiply", f8, 6, 1, [Ref("state", 1), 0.5], [6, None], [f8, f8]),
            LoopStep("add", f8, 6, 2, [Ref("buffer", 1), Ref("array", 1)], [6, 3], [f8, f8]),
            LoopStep("maximum", f8, 6, 3, [Ref("buffer", 2), 0.25], [6, None], [f8, f8]),
            LoopStep("add", "int64", 1, 4, [Ref("state", 0), 1], [1, None],
                     ["int64", "int64"])],
        copies=[Copy(Ref("buffer", 5), Ref("state", 1), f8, 6),
                Copy(Ref("state", 0), Ref("buffer", 4), "int64", 1),
                Copy(Ref("state", 1), Ref("buffer", 3), f8, 6),
                Copy(Ref("state", 2), Ref("buffer", 5), f8, 6)],
        outputs=[LoopOutput("x_out", f8, (2, 3), 1), LoopOutput("y_out", f8, (2, 3), 2),
                 LoopOutput("i_out", "int64", (), 0)],
        state_bytes=104)


def test_c_text_from_a_hand_made_plan():
    src = c_source(_hand_made_plan(1 << 20))
    body = [ln.strip() for ln in src.splitlines()]
    for line in ("int hand_made_loop(char **p) {",
                 "const double *restrict a1 = (const double *)p[3];",
                 "int64_t *restrict o2 = (int64_t *)p[6];",
                 "const int64_t n0[1] = {ints[0]};",
                 "double *restrict s2 = (double *)(p[0] + 56);", "double b5[6];",
                 ("if (!resume) for (int64_t j = 0; j < 6; j++) "
                  "s2[j] = ((double)-0x1.0000000000000p+0);"),
                 "for (int64_t j = 0; j < 1; j++) b0[j] = (s0[0] < n0[0]);",
                 "for (int64_t j = 0; j < 6; j++) b2[j] = (b1[j] + a1[j % 3]);",
                 "memcpy(b5, s1, sizeof(double) * 6);",
                 "if (++trips == 1048576) return 16 | d2s_flags();",
                 "memcpy(o2, s0, 1 * sizeof(int64_t));"):
        assert line in body, line


def _numpy_hand_made(x, bias, n):
    y = np.full_like(x, -1.0)
    i = 0
    while i < n:
        y, x = x, np.maximum(x * 0.5 + bias, 0.25)
        i += 1
    return x, y, np.array(i, "int64")


def _compiled(tmp_path, plan):
    c_file, lib = tmp_path / f"{plan.name}.c", tmp_path / f"{plan.name}.so"
    c_file.write_text(c_source(plan))
    subprocess.run([native_build.compiler()[0], *native_build.PLAIN_FLAGS, str(c_file), "-o",
                    str(lib), "-lm"], check=True)
    fn = getattr(ctypes.CDLL(str(lib)), plan.name)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p]
    return fn


@pytest.mark.skipif(native_build.compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("n", [0, 1, 7])
def test_c_code_from_a_hand_made_plan_computes_what_it_says(tmp_path, n):
    plan = _hand_made_plan(trips_per_call=3)  # (7 trips: paused twice, then resumed)
    fn = _compiled(tmp_path, plan)
    x = np.array([[4.0, -3.0, 0.1], [1e3, 2.5, -0.5]])
    bias = np.array([0.5, -1.0, 0.125])
    state = np.zeros(plan.state_bytes, np.uint8)
    ints = np.array([n, 0], np.int64)  # (n, then the flag saying a call resumes)
    outs = [np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((), np.int64)]
    buffers = [state, ints, x, bias, *outs]
    pointers = (ctypes.c_void_p * len(buffers))(*[b.ctypes.data for b in buffers])
    calls, flags = 1, fn(pointers)
    while flags & PAUSED:
        ints[1] = 1
        calls, flags = calls + 1, fn(pointers)
    assert flags == 0 and calls == 1 + n // 3
    want = _numpy_hand_made(x, bias, n)
    assert len(outs) == len(want)
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)
