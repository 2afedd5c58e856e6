"""`print` in converted code prints what eager code prints, on every call and only on the
branch taken: Python-only prints too (they ran once, while tracing, and in both branches),
and f-strings holding tensors (they printed `Variable(%x ...)` once)."""
import numpy as np
import pytest

import d2s
import runtime as rt


def report(x, step):
    print(f"x is {x}, sum={x.sum()}")
    print("step %d" % step, x.shape, f"{3.14159:.2f}", sep=" | ", end=";\n")
    if x.sum() > 0:
        print("positive", f"[{x!r}]", sep="|")
    else:
        print("not positive")
    return x + 1


def test_prints_match_eager_on_every_call_and_branch(capsys):
    static = d2s.to_static(report)
    for xv in ([1.0, 2.0], [-3.0, -4.0], [0.5, 0.25]):
        report(rt.to_tensor(np.array(xv, "float32")), 7)
        want = capsys.readouterr().out
        static(rt.to_tensor(np.array(xv, "float32")), 7)
        assert capsys.readouterr().out == want
        assert ("not positive" in want) == (sum(xv) <= 0)
    assert len(static.program_cache) == 1


def test_a_format_spec_on_a_tensor_is_a_clear_error():
    def spec(x):
        print(f"{x.sum():.3f}")
        return x

    with pytest.raises(TypeError, match="format spec"):
        d2s.to_static(spec)(rt.to_tensor(np.ones(2, "float32")))


def log_to(stream):
    def step(x, tag):
        print("step", tag, file=stream)
        if x.mean() > 0:
            print("up", x.sum(), file=stream, sep=":")
        else:
            print(f"down {x}", file=stream)
        return x * 2
    return step


def test_print_to_a_file_object_prints_on_every_call_and_branch():
    import io
    eager_buf, static_buf = io.StringIO(), io.StringIO()
    eager, static = log_to(eager_buf), d2s.to_static(log_to(static_buf))
    for xv in ([1.0, 2.0], [-3.0, -4.0], [0.5, 0.25]):
        x = np.array(xv, "float32")
        np.testing.assert_allclose(static(rt.to_tensor(x), 1).numpy(), x * 2)
        eager(rt.to_tensor(x), 1)
    assert static_buf.getvalue() == eager_buf.getvalue()
    assert static_buf.getvalue().count("step 1") == 3
    assert static_buf.getvalue().count("down") == 1
    assert len(static.program_cache._entries if hasattr(static.program_cache, "_entries")
               else static.program_cache) == 1


def test_print_to_stderr_follows_redirection_when_the_program_runs(capsys):
    import contextlib
    import io
    import sys
    def warn(x, tag):
        print("step", tag, file=sys.stderr)
        if x.mean() > 0:
            print("up", x.sum(), file=sys.stderr, sep=":")
        else:
            print(f"down {x}", file=sys.stderr)
        return x * 2

    static = d2s.to_static(warn)
    static(rt.to_tensor(np.ones(2, "float32")), 0)   # traced while stderr is pytest's
    capsys.readouterr()
    caught = io.StringIO()
    with contextlib.redirect_stderr(caught):
        static(rt.to_tensor(-np.ones(2, "float32")), 5)
    assert caught.getvalue().startswith("step 5\ndown Tensor(")
    assert capsys.readouterr().err == ""


def describe(x, h):
    print("shape", x.shape, x.shape[0], len(x), tuple(x.shape[:1]))
    print(f"n={x.shape[0]} state={[h, 1]}")
    print({"h": h, "k": "v"}, (h,), [["a", x.shape]])
    return x + 1


@pytest.mark.parametrize("batch", [3, 5])
def test_containers_dims_and_lengths_print_as_eager_with_an_unknown_batch(capsys, batch):
    static = d2s.to_static(describe, input_spec=[d2s.InputSpec([None, 2], "float32"),
                                                 d2s.InputSpec([2], "float32")])
    x = np.arange(batch * 2, dtype="float32").reshape(batch, 2)
    h = np.array([1.5, -2.0], "float32")
    describe(rt.to_tensor(x), rt.to_tensor(h))
    want = capsys.readouterr().out
    out = static(rt.to_tensor(x), rt.to_tensor(h))
    np.testing.assert_allclose(out.numpy(), x + 1)
    assert capsys.readouterr().out == want
    assert f"shape [{batch}, 2] {batch} {batch} ({batch},)" in want
    assert "Variable" not in want
