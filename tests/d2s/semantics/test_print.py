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
