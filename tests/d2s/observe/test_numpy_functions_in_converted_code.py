"""NumPy's functions of values from `x.numpy()` in converted code (`np.exp(a)`, `np.maximum(a,
0)`, `np.where`, `np.clip`, `np.concatenate`, `np.round`, `np.isnan(a).any()`, `a.argsort()`)
compute what eager NumPy computes, with NumPy's dtypes (float64 stays float64, an int input of
`np.exp` gives float64, `np.argmax` int64) and NumPy's result types (ndarray, NumPy scalars).
Before, every one raised "Converting to a NumPy array" (`a.argsort()`: a Tensor). A function
the program does not compute (`np.polyfit`) raises a TypeError naming it at the user's line.
Eager vs converted vs a NumPy reference, over inputs that take both paths of one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def postprocess(logits, labels, boxes):
    """Post-processing as evaluation scripts write it: NumPy on `.numpy()` values, with a
    tensor `if` choosing which NumPy value is kept."""
    probs = np.exp(logits.numpy())
    probs = probs / np.sum(probs, axis=1, keepdims=True)
    y = labels.numpy()
    b = boxes.numpy()
    if logits.mean() > 0:
        score = np.maximum(probs, 0.25)
    else:
        score = np.where(probs > 0.3, probs, 0)
    clipped = np.clip(b, 0, 1)
    return (score, np.argmax(probs, axis=1), np.sum(np.argmax(probs, axis=1) == y),
            np.mean(score, axis=0), np.concatenate([b, clipped]), np.stack([b, b], axis=1),
            np.round(b * 4), np.isnan(np.log1p(b)).any(), np.sqrt(np.abs(b)), np.sort(y),
            y.argsort(), np.exp(y), np.maximum(y, 1), b.clip(0.2, 0.6), np.round(b, 1))


def _reference(logits, labels, boxes):
    probs = np.exp(logits)
    probs = probs / np.sum(probs, axis=1, keepdims=True)
    score = np.maximum(probs, 0.25) if logits.mean() > 0 else np.where(probs > 0.3, probs, 0)
    clipped = np.clip(boxes, 0, 1)
    return (score, np.argmax(probs, axis=1), np.sum(np.argmax(probs, axis=1) == labels),
            np.mean(score, axis=0), np.concatenate([boxes, clipped]),
            np.stack([boxes, boxes], axis=1), np.round(boxes * 4),
            np.isnan(np.log1p(boxes)).any(), np.sqrt(np.abs(boxes)), np.sort(labels),
            labels.argsort(), np.exp(labels), np.maximum(labels, 1),
            boxes.clip(0.2, 0.6), np.round(boxes, 1))


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_functions_both_paths_one_program(dtype):
    converted = d2s.to_static(postprocess)
    rng = np.random.default_rng(3)
    boxes = np.array([[-0.5, 0.125, 0.375, 1.5], [0.625, 0.875, -1.0, 0.3]], dtype)
    for shift in (2.0, -2.0):  # (the tensor `if` takes each branch)
        logits = (rng.standard_normal((5, 3)) + shift).astype(dtype)
        labels = rng.integers(0, 3, 5)
        args = [rt.to_tensor(v) for v in (logits, labels, boxes)]
        eager, static = postprocess(*args), converted(*args)
        _same(eager, _reference(logits, labels, boxes))
        _same(static, eager)
    assert len(converted.program_cache) == 1
    assert type(static[2]) is np.int64 and type(static[7]) is np.bool_


def test_numpy_functions_of_python_numbers_and_halves():
    """`np.exp(float(t))` is a NumPy scalar as eagerly; `np.round` rounds halves to even."""
    def fn(x):
        a = x.numpy()
        return (np.exp(float(x.sum())), np.round(a), np.round(-a), np.rint(a), a.round(),
                np.where(a > 1, 1, 0), np.ravel(a[None]), np.transpose(a[None]))

    x = rt.to_tensor(np.array([0.5, 1.5, 2.5, 3.5, -0.5, 8388609.0], "float32"))
    eager, static = fn(x), d2s.to_static(fn)(x)
    _same(static, eager)
    assert type(static[0]) is np.float64
    for got, want in zip(static[1:], eager[1:], strict=True):  # (exactly)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(static[1], [0, 2, 2, 4, -0, 8388609])


def test_numpy_function_the_program_lacks_named_at_the_line():
    def fn(x):
        a = x.numpy()
        return np.polyfit(a, a, 1)

    with pytest.raises(TypeError, match=r"np\.polyfit\(\) of a NumPy array computed by "
                       r"the converted code") as info:
        d2s.to_static(fn)(rt.to_tensor(np.ones(3, "float32")))
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "return np.polyfit(a, a, 1)" in text
    for internal in ("_retval", "Variable(%", "static Variable"):
        assert internal not in text


def describe(x):
    """Code that reads the dtype of NumPy values as NumPy code does."""
    a = x.numpy()
    b = a.astype("float64") if x.sum() > 0 else np.float64(2) * a  # (a tensor `if`)
    return (str(a.dtype), a.dtype == np.float32, a.dtype.name, b.dtype.name,
            a.sum().dtype.kind, (a > 0).dtype, str(x.dtype))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_dtype_of_numpy_values_is_numpy_s(sign):
    """Eager `a.dtype` of `x.numpy()` is NumPy's ('float32', `== np.float32`); converted code
    gave the runtime's ('rt.float32'). A tensor's dtype stays the tensor's."""
    x = rt.to_tensor(np.array([0.5, 1.5], "float32") * sign)
    eager, static = describe(x), d2s.to_static(describe)(x)
    assert static == eager
    assert static[:6] == ("float32", True, "float32", "float64",
                          "f", np.dtype(bool))


def scale_by_mean(x):
    """A Python float from a tensor, then a tensor method on it: eager's AttributeError."""
    m = float(x.mean())
    if x.sum() > 0:
        y = x * m
    else:
        y = x - m
    return y, m.sum()


def guarded(x):
    m, n = x.mean().item(), int(x.argmax())
    try:
        shape = m.shape
    except AttributeError as e:
        shape = str(e)
    return m * 2, shape, hasattr(m, "numpy"), hasattr(n, "astype"), m.is_integer()


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tensor_attributes_of_python_numbers_raise_eagers_error(sign):
    """`float(t)`, `t.item()`, `int(t)` are Python numbers: `.sum()`, `.numpy()`, `.shape`,
    `.astype` raise AttributeError eagerly; converted code computed them (`float(x.sum())
    .sum()` gave a float). Now the same error at the user's line, caught by `except
    AttributeError` and answered by `hasattr` as eagerly."""
    x = rt.to_tensor(np.array([0.5, 2.0], "float32") * sign)
    with pytest.raises(AttributeError, match="'float' object has no attribute 'sum'"):
        scale_by_mean(x)
    with pytest.raises(AttributeError, match="'float' object has no attribute 'sum'") as info:
        d2s.to_static(scale_by_mean)(x)
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "return y, m.sum()" in text or info.traceback[-1].statement.lines
    eager, static = guarded(x), d2s.to_static(guarded)(x)
    assert eager == static
    assert static[1:] == ("'float' object has no attribute 'shape'", False, False, False)
    for fn in ("numpy", "astype", "item", "shape", "dtype", "stop_gradient"):
        def reads(x, fn=fn):
            return getattr(x.sum().item(), fn) if fn != "dtype" else x.sum().item().dtype

        with pytest.raises(AttributeError, match=f"'float' object has no attribute '{fn}'"):
            d2s.to_static(reads)(x)


def running_metrics(logits, labels, n):
    """Per-batch metrics summed into Python numbers over a loop whose trip count is a
    tensor (`range(n)`, and a `while`): NumPy scalars after a trip, the Python number the
    sum started from after none."""
    a, y = logits.numpy(), labels.numpy()
    total, hits, wide = 0.0, 0, 0.0
    for i in range(n):
        total += a[i].sum()
        hits += (a[i].argmax() == y[i]).sum()
        wide = wide + a[i].astype("float64").max()
    j, seen = 0, 0
    while j < n:
        seen = seen + (a[j] > 0).sum()
        j += 1
    return total, hits, wide, seen


def _reference_running(a, y, n):
    total, hits, wide, seen = 0.0, 0, 0.0, 0
    for i in range(n):
        total += a[i].sum()
        hits += (a[i].argmax() == y[i]).sum()
        wide = wide + a[i].astype("float64").max()
        seen = seen + (a[i] > 0).sum()
    return total, hits, wide, seen


def test_python_numbers_summed_with_numpy_scalars_in_graph_loops():
    """Eager gives np.float32 / np.int64 / np.float64 after one trip or more and the float
    0.0 / int 0 after none; converted code gave 0-d Tensors after a trip."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 3)).astype("float32")
    y = rng.integers(0, 3, 4)
    converted = d2s.to_static(running_metrics)
    for n in (0, 1, 3):
        args = (rt.to_tensor(a), rt.to_tensor(y), rt.to_tensor(np.array(n)))
        eager, static = running_metrics(*args), converted(*args)
        want = _reference_running(a, y, n)
        assert [type(v) for v in static] == [type(v) for v in eager] == [
            type(v) for v in want], (n, static, eager)
        np.testing.assert_allclose(static, want, rtol=1e-6)
        np.testing.assert_allclose(eager, want, rtol=1e-6)
    assert len(converted.program_cache) == 1
    assert [type(v) for v in static] == [np.float32, np.int64, np.float64, np.int64]


def gated_sum(x, n):
    """NumPy scalars added under a tensor `if`, inside a graph loop and outside one."""
    a = x.numpy()
    total = 0.0
    for i in range(n):
        if x[i].sum() > 0:
            total += a[i].sum()
    positives = 0
    if x.sum() > 0:
        positives = positives + (a > 0).sum()
    return total, positives * 2, [total]


def test_numpy_scalars_added_under_tensor_ifs():
    """The type is the run's: the Python number where no taken branch (no trip) added a
    NumPy scalar, NumPy's scalar where one did; before, a Tensor (or the NumPy scalar where
    the trips ran but the branch was never taken)."""
    converted = d2s.to_static(gated_sum)
    base = np.arange(6, dtype="float32").reshape(3, 2) - 2  # (row sums -3, 1, 5)
    for sign, n in ((1, 0), (1, 1), (1, 2), (1, 3), (-1, 3)):
        x = base * sign
        args = (rt.to_tensor(x), rt.to_tensor(np.array(n)))
        eager, static = gated_sum(*args), converted(*args)
        rows = [x[i].sum() for i in range(n) if x[i].sum() > 0]
        total = sum(rows[1:], 0.0 + rows[0]) if rows else 0.0
        positives = (x > 0).sum() if x.sum() > 0 else 0
        want = (total, positives * 2, [total])
        for got, ref in ((static, want), (eager, want)):
            assert [type(v) for v in got[:2]] == [type(v) for v in ref[:2]], (sign, n, got)
            assert type(got[2][0]) is type(ref[2][0]) and got[2] == ref[2]
            np.testing.assert_allclose(got[:2], ref[:2], rtol=1e-6)
    assert len(converted.program_cache) == 1
