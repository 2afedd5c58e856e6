"""`/`, `//`, `%` and `divmod` of Python numbers the program computes (`int(mask.sum())`,
`.item()`) by one that is zero raise eager's `ZeroDivisionError` (class and message) when the
program runs, at the user's line, and an `except ZeroDivisionError` around the division
catches it as eagerly. Before, the program divided its arrays: `inf`, `nan` or `0`, silently
(`correct / total` of an empty batch, `n % k` of a computed `k`)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import INTERNAL, shown


def precision(pred, label):
    """Precision of positive predictions: the `/` of two counts; an empty selection raises."""
    chosen = int((pred > 0.5).sum())
    hits = int(((pred > 0.5) & (label > 0.5)).sum())
    if pred.mean() > 0.25:
        return hits / chosen, chosen % 3
    return float(hits), chosen // 2


def safe_ratio(pred, label):
    """The same `/` guarded by a `try`: the fallback where nothing was selected."""
    chosen = int((pred > 0.5).sum())
    try:
        ratio = int((label > 0.5).sum()) / chosen
        empty = False
    except ZeroDivisionError:
        ratio = -1.0
        empty = True
    return pred * ratio, empty


def float_divmod(x):
    return divmod(float(x.sum()), float(x.min()))


def _ref_precision(pred, label):
    chosen = int((pred > 0.5).sum())
    hits = int(((pred > 0.5) & (label > 0.5)).sum())
    if pred.mean() > 0.25:
        return hits / chosen, chosen % 3
    return float(hits), chosen // 2


_LABEL = np.array([1.0, 0.0, 1.0, 1.0], np.float32)
_PREDS = {
    "some": np.array([0.9, 0.7, 0.2, 0.8], np.float32),  # the `/` branch, 3 chosen
    "low": np.array([0.1, 0.2, 0.3, 0.2], np.float32),  # the other branch, none chosen
    "none": np.array([0.3, 0.4, 0.45, 0.35], np.float32),  # the `/` branch by zero
}


def _run(fn, *args):
    try:
        return fn(*[rt.to_tensor(a) for a in args])
    except ZeroDivisionError as e:
        return e


def test_division_by_a_computed_zero_raises_as_eager():
    converted = d2s.to_static(precision)
    for name, pred in _PREDS.items():
        eager, static = _run(precision, pred, _LABEL), _run(converted, pred, _LABEL)
        if name == "none":
            with pytest.raises(ZeroDivisionError):
                _ref_precision(pred, _LABEL)
            assert isinstance(eager, ZeroDivisionError)
            assert type(static) is ZeroDivisionError, static
            assert str(static).splitlines()[0] == str(eager) == "division by zero"
            assert "return hits / chosen, chosen % 3" in shown(static)  # the user's line
            assert not INTERNAL.search(shown(static))
            continue
        ref = _ref_precision(pred, _LABEL)
        assert static == eager == ref and [type(v) for v in static] == [type(v) for v in ref]
    assert len(converted.program_cache) == 1


def test_except_zero_division_catches_it_when_the_program_runs():
    converted = d2s.to_static(safe_ratio)
    for name, pred in _PREDS.items():
        chosen = int((pred > 0.5).sum())
        ref_ratio = -1.0 if chosen == 0 else float((_LABEL > 0.5).sum()) / chosen
        (e_out, e_tag), (s_out, s_tag) = _run(safe_ratio, pred, _LABEL), _run(
            converted, pred, _LABEL)
        assert s_tag is e_tag is (chosen == 0)
        np.testing.assert_allclose(s_out.numpy(), pred * ref_ratio, rtol=1e-6)
        np.testing.assert_allclose(s_out.numpy(), e_out.numpy(), rtol=1e-6)
        assert s_out.dtype == e_out.dtype
    assert len(converted.program_cache) == 1


@pytest.mark.parametrize("op, message", [
    (lambda a, b: a // b, "integer division or modulo by zero"),
    (lambda a, b: a % b, "integer modulo by zero"),
    (lambda a, b: float(a) / b, "float division by zero"),
    (lambda a, b: float(a) // b, "float floor division by zero"),
    (lambda a, b: float(a) % b, "float modulo"),
])
def test_each_operator_has_pythons_message(op, message):
    def fn(x):
        return op(x.shape[0], int(x.sum()))

    converted = d2s.to_static(fn)
    for data in ([1, 1], [-1, 1]):
        eager, static = _run(fn, np.array(data, np.int64)), _run(converted, np.array(data, np.int64))
        if sum(data):
            assert static == eager and type(static) is type(eager)
        else:
            assert type(static) is type(eager) is ZeroDivisionError
            assert str(static).splitlines()[0] == str(eager) == message


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NumPy's, of the tensor division)
def test_divmod_of_floats_and_a_tensor_divided_by_zero():
    converted = d2s.to_static(float_divmod)
    for data, message in (([3.0, 2.0], None), ([1.0, 0.0], "float divmod()")):
        eager = _run(float_divmod, np.array(data, np.float32))
        static = _run(converted, np.array(data, np.float32))
        if message is None:
            assert static == eager == divmod(5.0, 2.0)
        else:
            assert str(static).splitlines()[0] == str(eager) == message

    # a tensor divided by a zero is array division eagerly: inf, no exception
    def tensor_ratio(x):
        return x / int(x.min())

    out = d2s.to_static(tensor_ratio)(rt.to_tensor(np.array([1.0, 0.0], np.float32)))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(out.numpy(), np.array([1.0, 0.0], np.float32) / 0)


def inverse_count(x):
    """`n ** -1` of a computed int: Python's float (an int array's power refused a negative
    exponent), and a zero count raises eager's ZeroDivisionError (was inf for floats)."""
    n = int((x > 0).sum())
    return n ** -1, float(x.max()) ** -2


@pytest.mark.parametrize("data", [[1.0, 2.0, -1.0], [3.0, 0.5, 2.0], [-1.0, -2.0, 0.0],
                                  [0.0, 0.0, 0.0]])
def test_negative_powers_of_computed_numbers(data):
    converted = d2s.to_static(inverse_count)
    x = np.array(data, np.float32)
    eager, static = _run(inverse_count, x), _run(converted, x)
    if (x > 0).sum() == 0:
        assert type(static) is type(eager) is ZeroDivisionError
        assert str(static).splitlines()[0] == str(eager) == (
            "0.0 cannot be raised to a negative power")
        return
    ref = (int((x > 0).sum()) ** -1, float(x.max()) ** -2)
    assert static == eager == ref and [type(v) for v in static] == [float, float]
