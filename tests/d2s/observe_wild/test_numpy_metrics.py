"""A metric computed in NumPy inside the converted function (`np.mean(pred.numpy() ==
y.numpy())`): eager code computes it in NumPy; a program has no value to give NumPy, so the
call raises a TypeError naming the NumPy function and the user's line (NumPy's own call of
`v.mean(axis=None, dtype=None, out=None)` raised "unexpected keyword argument 'dtype'").
The tensor form of the same metric converts and gives eager's Python float."""
import traceback

import numpy as np
import pytest

import d2s
import runtime as rt


def accuracy_in_numpy(logits, y):
    pred = logits.argmax(-1)
    return float(np.mean(pred.numpy() == y.numpy()))


def total_in_numpy(logits, y):
    return float(np.sum(logits.numpy()))


def accuracy(logits, y):
    return float((logits.argmax(-1) == y).astype("float32").mean())


def _inputs():
    rng = np.random.default_rng(0)
    return rt.to_tensor(rng.standard_normal((6, 3)).astype("float32")), rt.to_tensor(
        rng.integers(0, 3, 6))


@pytest.mark.parametrize("fn,name", [(accuracy_in_numpy, "np.mean()"),
                                     (total_in_numpy, "np.sum()")])
def test_numpy_reduction_of_a_computed_tensor_raises_at_the_users_line(fn, name):
    logits, y = _inputs()
    assert type(fn(logits, y)) is float  # eager: NumPy computes it
    with pytest.raises(TypeError) as info:
        d2s.to_static(fn)(logits, y)
    text = "".join(traceback.format_exception_only(info.type, info.value))
    assert text.startswith(f"TypeError: {name} of a tensor computed by the converted code")
    assert "test_numpy_metrics.py" in text and "return float(np." in text


def test_the_tensor_form_gives_eagers_float():
    logits, y = _inputs()
    want = accuracy(logits, y)
    got = d2s.to_static(accuracy)(logits, y)
    assert type(got) is float and got == want
    assert got == pytest.approx(accuracy_in_numpy(logits, y), rel=1e-6)
