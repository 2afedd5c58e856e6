"""The generated code: direct array-module calls agree bit for bit with the registered kernels;
values are freed after their last use; one compilation per program version."""
import re

import numpy as np
import pytest

import runtime as rt
from runtime import static
from runtime.ops.registry import OPS
from runtime.program.codegen import DIRECT_CALLS


def _inputs(op, dtype):
    rng = np.random.RandomState(0)
    a = rng.randn(3, 4).astype(dtype)
    b = rng.randn(4, 4).astype(dtype) if op == "matmul" else rng.rand(3, 4).astype(dtype) + 0.5
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(DIRECT_CALLS))
def test_direct_calls_match_kernels(op, dtype):
    a, b = _inputs(op, dtype)
    unary = op in ("neg", "tanh", "exp", "relu")
    fn = getattr(rt, op, None) or getattr(rt.nn.functional, op)
    main = static.Program()
    with static.program_guard(main):
        xa = static.data("a", list(a.shape), dtype)
        xb = static.data("b", list(b.shape), dtype)
        outs = [fn(xa)] if unary else [fn(xa, xb), fn(xa, 2.0), fn(xa, 3)] \
            if op != "matmul" else [fn(xa, xb)]
    got = static.Executor().run(main, {"a": a, "b": b}, outs)
    src = static.Executor().compiled(main, tuple(o.name for o in outs)).source
    assert re.search(r"\bF\d+\(", src), f"{op} did not use a direct call:\n{src}"
    kernel = OPS[op].kernel
    want = [kernel(np, a)] if unary else [kernel(np, a, b), kernel(np, a, 2.0),
                                          kernel(np, a, 3)] if op != "matmul" else \
        [kernel(np, a, b)]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_mixed_dtypes_use_the_kernel():
    main = static.Program()
    with static.program_guard(main):
        a = static.data("a", [2], "float32")
        b = static.data("b", [2], "float64")
        c = a + b
    out, = static.Executor().run(main, {"a": np.ones(2, "float32"), "b": np.ones(2)}, [c])
    assert out.dtype == np.float64
    assert re.search(r"\bK\d+\(", static.Executor().compiled(main, (c.name,)).source)


def test_values_freed_after_last_use_and_compiled_once():
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        y = rt.tanh(x)
        z = y * 2.0
        w = z + y
    exe = static.Executor()
    exe.run(main, {"x": np.ones(2, "float32")}, [w])
    c = exe.compiled(main, (w.name,))
    lines = c.source.splitlines()
    dels = [ln.strip() for ln in lines if ln.strip().startswith("del ")]
    assert dels == [f"del {c.idents[y.name]}, {c.idents[z.name]}"]
    exe.run(main, {"x": np.ones(2, "float32")}, [w])
    assert exe.compiled(main, (w.name,)) is c
    with static.program_guard(main):
        w + 1.0
    assert exe.compiled(main, (w.name,)) is not c  # the program changed: recompiled


@pytest.mark.gpu
def test_same_program_on_gpu_matches_cpu():
    from .test_control_flow import _nested_cond_in_while
    feed = {"x": np.array([0.3, -0.2, 0.5]), "n": np.int64(3), "p": np.bool_(True)}
    main, _, fetch = _nested_cond_in_while()
    cpu = static.Executor().run(main, feed, list(fetch))
    rt.set_device("gpu")
    try:  # parameters are created on the device in force, so build the program there
        main, _, fetch = _nested_cond_in_while()
        gpu = static.Executor().run(main, feed, list(fetch))
    finally:
        rt.set_device("cpu")
    for a, b in zip(cpu, gpu, strict=True):
        assert isinstance(b, np.ndarray)
        np.testing.assert_allclose(a, b, rtol=1e-10)
