"""Direct calls the compiled program makes instead of a kernel (`codegen.direct_call`):
comparisons and `linear` give exactly what their kernels give."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import runtime as rt
from runtime import static
from runtime.ops.registry import OPS

CMP = {"equal": operator.eq, "not_equal": operator.ne, "less_than": operator.lt,
       "less_equal": operator.le, "greater_than": operator.gt, "greater_equal": operator.ge}


def _run(build, feeds):
    main = static.Program()
    with static.program_guard(main):
        xs = [static.data(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(feeds)]
        out = build(*xs)
    exe = static.Executor()
    got = exe.run(main, {f"x{i}": a for i, a in enumerate(feeds)}, [out])[0]
    return got, exe.compiled(main, (out.name,)).source


@pytest.mark.parametrize("op", sorted(CMP))
@pytest.mark.parametrize("case", ["f32", "i64", "i32-int", "f64-float", "i64-float", "mixed"])
def test_comparisons_equal_their_kernels(op, case):
    rng = np.random.default_rng(0)
    a = np.array([1.0, np.nan, -2.0, 3.0, 3.0, -0.0], "float32")
    if case == "f32":
        feeds, other, direct = [a, np.array([1.0, np.nan, 2.0, 1.0, 3.0, 0.0], "float32")], \
            None, True
    elif case == "i64":
        feeds, other, direct = [rng.integers(-3, 3, 8), rng.integers(-3, 3, 8)], None, True
    elif case == "i32-int":
        feeds, other, direct = [rng.integers(-3, 3, 8).astype("int32")], 1, True
    elif case == "f64-float":
        feeds, other, direct = [a.astype("float64")], 1.5, True
    elif case == "i64-float":  # the kernel promotes the tensor to float32 first
        feeds, other, direct = [rng.integers(-3, 3, 8)], 0.5, False
    else:
        feeds, other, direct = [a, a.astype("float64")], None, False
    fn = CMP[op]

    def build(*xs):
        return fn(xs[0], xs[1] if other is None else other)

    got, src = _run(build, feeds)
    kernel_args = feeds if other is None else [feeds[0], other]
    want = OPS[op].kernel(np, *kernel_args)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)
    assert (" = K" not in src) == direct, src


def test_linear_direct_call_equals_its_kernel():
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((3, 5), (5, 4), (4,)))
    got, src = _run(lambda x, w, b: rt.nn.functional.linear(x, w, b), [x, w, b])
    assert " = K" not in src and "out=" in src
    np.testing.assert_array_equal(got, OPS["linear"].kernel(np, x, w, b))
    got, src = _run(lambda x, w: rt.nn.functional.linear(x, w), [x, w])
    np.testing.assert_array_equal(got, OPS["linear"].kernel(np, x, w))
    # mixed dtypes: the kernel's own error, not a silent promotion
    with pytest.raises(Exception, match="dtype"):
        _run(lambda x, w: rt.nn.functional.linear(x, w), [x, w.astype("float64")])
