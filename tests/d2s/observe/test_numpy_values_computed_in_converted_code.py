"""What user code computes from `x.numpy()` inside a converted function is NumPy's, as
eagerly: dtypes by NumPy's rules (`labels.numpy() / 2` is float64, a mean of bools float64, a
sum of bools int64), NumPy's reductions (`std` with ddof=0), NumPy scalars from reductions and
indexes (`np.float64`, `np.int64`: `isinstance(acc, float)`, `json`-able after `float()`), and
arrays returned as `np.ndarray`. Before, these came back as float32/int64 Tensors (silently).
Eager vs converted vs a NumPy reference, over inputs that take both paths of one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def accuracy_metrics(logits, labels):
    """Metric code as training scripts write it: NumPy on `.numpy()` values."""
    pred = logits.argmax(axis=1).numpy()
    y = labels.numpy()
    acc = np.mean(pred == y)
    hits = (pred == y).sum()
    spread = logits.numpy().std()
    half = y / 2
    return acc, hits, spread, half, pred[0], y.max(axis=0), isinstance(acc, float)


def branch_on_numpy(x):
    """Paddle's idiom `if x.numpy()[0] > ...:` beside NumPy results chosen by a tensor `if`."""
    a = x.numpy()
    if a[0, 0] > 0.5:
        out = x * 2
    else:
        out = x - 1
    if x.mean() > 0.5:
        shifted = a * 2
    else:
        shifted = a - 1
    return out, shifted, (a > 0.5).mean(), a.var(axis=0), a.astype("float64").sum() * 0.5


def _reference_metrics(logits, labels):
    pred = logits.argmax(axis=1)
    return (np.mean(pred == labels), (pred == labels).sum(), logits.std(), labels / 2, pred[0],
            labels.max(axis=0), True)


def _same(eager, static, ref=None):
    assert type(eager) is type(static), (type(eager), type(static))
    if isinstance(eager, (tuple, list)):
        assert len(eager) == len(static)
        for k, (a, b) in enumerate(zip(eager, static, strict=True)):
            _same(a, b, None if ref is None else ref[k])
        return
    if isinstance(eager, rt.Tensor):
        assert eager.dtype == static.dtype and eager.stop_gradient == static.stop_gradient
        np.testing.assert_allclose(eager.numpy(), static.numpy(), rtol=1e-6)
        return
    if isinstance(eager, (np.ndarray, np.generic)):
        assert eager.dtype == static.dtype
    np.testing.assert_allclose(eager, static, rtol=1e-6)
    if ref is not None:
        assert np.asarray(ref).dtype == np.asarray(eager).dtype
        np.testing.assert_allclose(static, ref, rtol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_metrics_from_numpy_values(seed):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((6, 3)).astype("float32")
    labels = rng.integers(0, 3, 6)
    converted = d2s.to_static(accuracy_metrics)
    eager = accuracy_metrics(rt.to_tensor(logits), rt.to_tensor(labels))
    static = converted(rt.to_tensor(logits), rt.to_tensor(labels))
    _same(eager, static, _reference_metrics(logits, labels))
    assert type(static[0]) is np.float64 and type(static[1]) is np.int64
    assert type(static[3]) is np.ndarray and static[3].dtype == np.float64
    assert float(static[0]) == float(np.mean(logits.argmax(1) == labels))


def test_numpy_values_beside_tensor_ifs_one_program():
    converted = d2s.to_static(branch_on_numpy)
    for v in (0.9, 0.1):
        x = np.full((3, 4), v, "float32")
        x[1] += 0.05
        eager = branch_on_numpy(rt.to_tensor(x))
        static = converted(rt.to_tensor(x))
        ref = (None, x * 2 if x.mean() > 0.5 else x - 1, (x > 0.5).mean(), x.var(axis=0),
               x.astype("float64").sum() * 0.5)
        _same(eager, static, (None, *ref[1:]))
        assert type(static[1]) is np.ndarray and type(static[2]) is np.float64
    assert len(converted.program_cache) == 1


def test_numpy_operand_rules():
    """NumPy's promotion (weak Python numbers, int / int is float64), reflected operators,
    comparisons across int and float, and a tensor operand making the result a tensor."""
    def fn(x, y):
        a, b = x.numpy(), y.numpy()
        return (1 - b, 2 ** b, b // 2, b % 3, -b, abs(-b), b * 0.5, b == 1.5, a < 1,
                (b == 1) | (b == 2), a + x, x * b, a.sum() / 3, a.prod(), a.any(), a[0, 1] * 2)

    x = rt.to_tensor(np.linspace(0, 1, 6, dtype="float32").reshape(2, 3))
    y = rt.to_tensor(np.array([0, 1, 2]))
    eager, static = fn(x, y), d2s.to_static(fn)(x, y)
    _same(eager, static)
    assert isinstance(static[10], rt.Tensor) and isinstance(static[11], rt.Tensor)
    assert type(static[-1]) is np.float32


def test_numpy_on_a_tensor_still_refused_at_the_line():
    """`np.mean` of a tensor the program computes (not from `numpy()`) has no NumPy value
    to compute on: the error names the call and the user's line."""
    def fn(x):
        return np.mean(x * 2)

    with pytest.raises(TypeError, match=r"np\.mean\(\)") as info:
        d2s.to_static(fn)(rt.to_tensor(np.ones(3, "float32")))
    assert "return np.mean(x * 2)" in "\n".join(
        [str(info.value), *getattr(info.value, "__notes__", [])])


def test_numpy_values_carried_by_graph_loops():
    """A NumPy value a graph loop carries stays NumPy's inside and after the loop; a name
    that is one only before the loop (a tensor after a trip) is refused at the loop."""
    def running_sums(x, n):
        a = x.numpy()
        total = a[0] * 0
        for i in range(n):  # (n a tensor: a graph loop)
            total = total + a[i] / 2
        return total

    def becomes_a_tensor(x, n):
        a = x.numpy()
        total = a[0] * 0
        for i in range(n):
            total = total + x[i]  # (a tensor operand: eager's result is a Tensor)
        return total

    x = np.arange(12, dtype="float32").reshape(3, 4)
    converted = d2s.to_static(running_sums)
    for n in (0, 2, 3):
        args = (rt.to_tensor(x), rt.to_tensor(np.array(n)))
        eager, static = running_sums(*args), converted(*args)
        ref = sum((x[i] / 2 for i in range(n)), x[0] * 0)
        _same(eager, static, ref)
        assert type(static) is np.ndarray and static.dtype == np.float32
    assert len(converted.program_cache) == 1
    with pytest.raises(d2s.ConversionError, match="'total' is a NumPy array before a loop "
                       "whose condition is a tensor and not a NumPy value after a trip"):
        d2s.to_static(becomes_a_tensor)(rt.to_tensor(x), rt.to_tensor(np.array(2)))


def test_reshapes_and_copies_of_numpy_values():
    """`a.T`, `a.reshape(3, 2)` (NumPy's call form), `flatten`, `squeeze` and `a.copy()` of a
    value from `numpy()` stay NumPy arrays; `a.sort()` (in place, None in NumPy) and
    `a.nonzero()` (a tuple in NumPy) are refused at the line rather than give a tensor's."""
    def shapes(x):
        a = x.numpy()
        return a.T.shape, a.reshape(3, 2), a.flatten().sum(), a.copy(), a.squeeze().mean()

    def sorts(x):
        a = x.numpy()
        a.sort()
        return a

    x = rt.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    ref = (np.arange(6, dtype="float32").reshape(2, 3),)
    eager, static = shapes(x), d2s.to_static(shapes)(x)
    _same(eager, static, ((3, 2), ref[0].reshape(3, 2), ref[0].sum(), ref[0], ref[0].mean()))
    assert static[0] == (3, 2) and type(static[3]) is np.ndarray
    with pytest.raises(TypeError, match=r"sort\(\) of a NumPy array computed by the converted"):
        d2s.to_static(sorts)(x)
