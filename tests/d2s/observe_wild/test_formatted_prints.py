"""Training-loop prints that format numbers the step computes: `f"{loss.item():.4f}"`,
`"%.2f" % float(...)`, `"{:.1f}".format(...)`, `%d` of a float, `%(name)s`, `{k:>3d}`,
`{t!r:>9}`, also inside a graph loop. Eager code prints the formatted text; the converted call
refused (`an f-string formats a tensor with :.4f`, `% formatting of a tensor`) or failed
inside (`unsupported format string passed to Variable.__format__`). The text is formatted when
the program runs, as eager code formats it. Eager vs static printed output over inputs that
take both paths of a tensor `if` and different trip counts; a spec on a tensor that is not a
number is eager's TypeError."""
# ruff: noqa: UP031, UP032  (the %-formatting and str.format of user code are what is tested)
import contextlib
import io

import numpy as np
import pytest

import d2s
import runtime as rt


def train(x, n, tag="run"):
    loss = (x * x).mean()
    k = int(x.argmax())
    print(f"[{tag}] loss={loss.item():.4f} k={k:>3d} {k!r} sum={float(x.sum()):+.2e}")
    print("%5.2f|%-4d|%04d|%s|%r|%%|%x" % (loss.item(), k, k, loss, k, k + 10))
    print("%(a).3f and %(b)s" % {"a": float(x.max()), "b": k}, "%d" % float(x.sum()))
    print("{} {:.1f} {name} {name!r:>9}".format(k, float(x.min()), name=n))
    if loss > 5:                                   # a tensor if
        print("large: %.1f" % loss.item())
    i = 0
    while i < n:                                   # a graph loop
        print(f"trip {i}: {loss.item():.3f}")
        loss = loss / 2
        i += 1
    return loss


def _printed(fn, v, n):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(rt.to_tensor(np.float32(v)), rt.to_tensor(n))
    return buf.getvalue()


def test_formatted_prints_show_what_eager_prints():
    static = d2s.to_static(train)
    for v, n in (([1.0, 3.0], 2), ([5.0, 0.5], 0), ([0.1, -0.2], 3)):
        want = _printed(train, v, n)
        assert _printed(static, v, n) == want
        assert f"loss={np.mean(np.float32(v) ** 2):.4f}" in want
    assert len(static.program_cache) == 1


def test_a_spec_on_a_tensor_is_eagers_type_error():
    def show(x):
        print(f"{x.sum():.2f}")

    for fn in (show, d2s.to_static(show)):
        with pytest.raises(TypeError, match="unsupported format string|formats a tensor"):
            fn(rt.to_tensor([1.0, 2.0]))
