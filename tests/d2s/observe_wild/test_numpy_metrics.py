"""A metric computed in NumPy inside the converted function (`np.mean(pred.numpy() ==
y.numpy())`): eager code computes it in NumPy; the converted code computes it in the program
with NumPy's semantics (`runtime/program/numpy_values.py`), so the call gives eager's float
(it raised a TypeError naming the NumPy function before). NumPy on a tensor not taken out with
`.numpy()` still raises at the user's line. The tensor form gives eager's Python float too."""
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


@pytest.mark.parametrize("fn", [accuracy_in_numpy, total_in_numpy])
def test_numpy_reduction_of_numpy_values_gives_eagers_float(fn):
    logits, y = _inputs()
    want = fn(logits, y)
    got = d2s.to_static(fn)(logits, y)
    assert type(want) is float and type(got) is float
    assert got == pytest.approx(want, rel=1e-6)


def total_of_a_tensor_in_numpy(logits, y):
    return float(np.sum(logits * 2))


def test_numpy_reduction_of_a_computed_tensor_raises_at_the_users_line():
    logits, y = _inputs()
    with pytest.raises(TypeError) as info:
        d2s.to_static(total_of_a_tensor_in_numpy)(logits, y)
    text = "".join(traceback.format_exception_only(info.type, info.value))
    assert text.startswith("TypeError: np.sum() of a tensor computed by the converted code")
    assert "test_numpy_metrics.py" in text and "return float(np.sum(logits * 2))" in text


def test_the_tensor_form_gives_eagers_float():
    logits, y = _inputs()
    want = accuracy(logits, y)
    got = d2s.to_static(accuracy)(logits, y)
    assert type(got) is float and got == want
    assert got == pytest.approx(accuracy_in_numpy(logits, y), rel=1e-6)
