"""NumPy applied to tensors in converted code, not to `.numpy()` values: `np.exp(t)`,
`np.maximum(t, 0)`, `np.sqrt(t.sum())`, `np.asarray(t)`, `np.array([a.max(), 1.5])`,
`np.float32(loss)`, `np.argmax(t, axis=1)`, `np.concatenate([a, b])`, `np.bincount(t)`.

Eagerly NumPy converts the Tensor with `__array__`, so each gives what NumPy gives for
`t.numpy()`: an ndarray or a NumPy scalar of NumPy's dtype (`np.exp` of int64 is float64, a
list of a float32 0-d tensor and a Python float float64). Converted code raised "np.exp() of
static Variable 't' ... not taken out with `.numpy()`" or "Converting to a NumPy array";
now it computes the same in the program. A function NumPy does not leave to the array's
method (`np.polyfit`) still raises at the user's line.
Eager vs converted vs a NumPy reference, over inputs that take both paths of one program."""
from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt


def postprocess(logits, labels, boxes, k):
    """Evaluation code that calls NumPy on the model's tensors directly."""
    probs = np.exp(logits)  # (an ndarray: `__array__`)
    probs = probs / probs.sum(axis=1, keepdims=True)
    if logits.mean() > 0:
        score = np.maximum(probs, 0.25)
    else:
        score = np.where(probs > 0.3, probs, 0)
    keep = np.clip(boxes, 0, 1)
    return (score, np.argmax(logits, axis=1), np.argmax(logits), np.sqrt(logits.abs().sum()),
            np.asarray(boxes), np.array(boxes, dtype="float64"), np.float32(logits.sum()),
            np.float64(boxes), np.int64(labels[0]), np.concatenate([boxes, keep]),
            np.stack([boxes, boxes], axis=1), np.exp(labels), np.add(boxes, 1),
            np.array([logits.max(), logits.min()]), np.array([logits.max(), 1.5]),
            np.round(boxes * 4), np.sort(labels), np.reshape(boxes, [-1]),
            np.bincount(labels, minlength=k), np.isnan(np.log1p(boxes)).any(),
            np.float32(float(logits.sum())))


def _reference(logits, labels, boxes, k):
    probs = np.exp(logits)
    probs = probs / probs.sum(axis=1, keepdims=True)
    score = np.maximum(probs, 0.25) if logits.mean() > 0 else np.where(probs > 0.3, probs, 0)
    keep = np.clip(boxes, 0, 1)
    return (score, np.argmax(logits, axis=1), np.argmax(logits), np.sqrt(np.abs(logits).sum()),
            boxes.copy(), boxes.astype("float64"), np.float32(logits.sum()),
            boxes.astype("float64"), np.int64(labels[0]), np.concatenate([boxes, keep]),
            np.stack([boxes, boxes], axis=1), np.exp(labels), boxes + 1,
            np.array([logits.max(), logits.min()]), np.array([logits.max(), 1.5]),
            np.round(boxes * 4), np.sort(labels), boxes.reshape(-1),
            np.bincount(labels, minlength=k), np.isnan(np.log1p(boxes)).any(),
            np.float32(float(logits.sum())))


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_functions_of_tensors_both_paths_one_program(dtype):
    converted = d2s.to_static(postprocess)
    rng = np.random.default_rng(5)
    boxes = np.array([[-0.5, 0.125, 0.375, 1.5], [0.625, 0.875, -1.0, 0.3]], dtype)
    for shift, labels in ((2.0, [2, 0, 1, 2, 2]), (-2.0, [0, 0, 1, 0, 4])):
        logits = (rng.standard_normal((5, 3)) + shift).astype(dtype)
        labels = np.array(labels)  # (max(labels) + 1 is 3 and 5: counts of each length)
        args = [rt.to_tensor(v) for v in (logits, labels, boxes)]
        eager, static = postprocess(*args, 4), converted(*args, 4)
        _same(eager, _reference(logits, labels, boxes, 4))
        _same(static, eager)
    assert len(converted.program_cache) == 1


class Calibrated(rt.nn.Layer):
    """A Layer whose forward reports NumPy statistics of its own activations (`self.`
    state, an alias of np, a helper)."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)
        self.floor = 0.1

    def forward(self, x):
        h = self.fc(x)
        stats = _summary(h, self.floor)
        if h.sum() > 0:
            stats["peak"] = npy.float32(h.max())
        else:
            stats["peak"] = npy.float32(h.min())
        return h, stats


npy = np


def _summary(h, floor):
    return {"act": npy.maximum(h, floor), "frac": npy.mean(npy.asarray(h) > floor),
            "rows": npy.array([h[0].sum(), h[1].sum()])}


def test_a_layer_reporting_numpy_statistics_of_its_activations():
    rt.seed(0)
    model = Calibrated()
    static = d2s.to_static(model)
    for sign in (1.0, -1.0):
        x = rt.to_tensor(np.array([[1.0, 2.0, 0.5], [0.25, -1.0, 3.0]], "float32") * sign)
        (h_e, eager), (h_s, got) = model(x), static(x)
        h = h_e.numpy()
        want = {"act": np.maximum(h, 0.1), "frac": np.mean(h > 0.1),
                "rows": np.array([h[0].sum(), h[1].sum()]),
                "peak": np.float32(h.max() if h.sum() > 0 else h.min())}
        assert type(h_s) is type(h_e) and h_s.stop_gradient is h_e.stop_gradient
        assert list(got) == list(eager) == list(want)
        for key, value in want.items():
            assert type(got[key]) is type(eager[key]) is type(value), key
            assert got[key].dtype == eager[key].dtype == value.dtype, key
            np.testing.assert_allclose(got[key], value, rtol=1e-6)


def degrees(dst, n):
    """PyG-style node degrees of a computed edge row: NumPy's bincount, whose length the
    largest node id decides when it exceeds `n` (eager's)."""
    deg = np.bincount(dst * 1, minlength=n).astype("float32") + 1.0
    weighted = np.bincount(dst, weights=np.ones(dst.shape[0]), minlength=n)
    return 1.0 / np.sqrt(deg), weighted, len(deg)


@pytest.mark.parametrize("dst", [[0, 1, 1, 2], [3, 0, 6, 6], [], [2]])
def test_bincount_length_decided_by_the_run(dst):
    converted = d2s.to_static(degrees)
    dst = np.array(dst, "int64")
    t = rt.to_tensor(dst)
    eager, static = degrees(t, 4), converted(t, 4)
    deg = np.bincount(dst, minlength=4).astype("float32") + 1.0
    want = (1.0 / np.sqrt(deg), np.bincount(dst, np.ones(len(dst)), 4), len(deg))
    for got in (eager, static):
        assert [type(v) for v in got] == [np.ndarray, np.ndarray, int]
        assert got[0].dtype == np.float32 and got[1].dtype == want[1].dtype  # (int64 of
        # no values: NumPy ignores empty weights)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2] == want[2]


def test_bincount_of_a_negative_value_raises_when_the_program_runs():
    converted = d2s.to_static(degrees)
    converted(rt.to_tensor(np.array([1, 2])), 4)
    with pytest.raises(ValueError):
        degrees(rt.to_tensor(np.array([1, -2])), 4)
    with pytest.raises(ValueError, match="negative"):
        converted(rt.to_tensor(np.array([1, -2])), 4)


def test_a_numpy_function_the_program_does_not_compute_is_named_at_the_line():
    def fn(x):
        h = x * 2
        return np.polyfit(h, h, 1)

    with pytest.raises(TypeError, match=r"np\.polyfit\(\) of a NumPy array computed by "
                       r"the converted code") as info:
        d2s.to_static(fn)(rt.to_tensor(np.ones(3, "float32")))
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "return np.polyfit(h, h, 1)" in text
    for internal in ("_retval", "Variable(%", "static Variable", "<undefined"):
        assert internal not in text


def logged_statistics(ratio, steps, clip):
    """CleanRL-style logging: Python floats from `.item()` in a list, reduced with NumPy; a
    list of them grown by a loop the run sizes (`range(int(steps))`)."""
    clipfracs = [((ratio - 1.0).abs() > c).astype("float32").mean().item() for c in clip]
    kls, hits = [], []
    for i in range(int(steps)):
        kls.append(float(ratio[i] - 1.0))
        hits.append(int(ratio[i] > 1.0))
    return (float(np.mean(clipfracs)), np.max(clipfracs), np.std(kls), np.mean(hits),
            np.max(kls) if kls else None, np.mean([ratio.max(), 2.0]))


@pytest.mark.parametrize("steps", [3, 1, 0])
def test_numpy_reductions_of_lists_of_computed_numbers(steps):
    ratio = np.array([1.25, 0.5, 1.0, 2.0], "float32")
    converted = d2s.to_static(logged_statistics)
    args = (rt.to_tensor(ratio), rt.to_tensor(np.array(steps)), (0.1, 0.3))
    with np.errstate(all="ignore"):
        kls = [float(r - 1.0) for r in ratio[:steps]]
        hits = [int(r > 1.0) for r in ratio[:steps]]
        fracs = [float(np.mean(np.abs(ratio - 1.0) > c)) for c in (0.1, 0.3)]
        want = (float(np.mean(fracs)), np.max(fracs), np.std(kls), np.mean(hits),
                np.max(kls) if kls else None, np.mean([ratio.max(), 2.0]))
    with pytest.warns(RuntimeWarning) if not steps else _no_warning():
        eager = logged_statistics(*args)
    with pytest.warns(RuntimeWarning) if not steps else _no_warning():
        static = converted(*args)
    for got in (eager, static):
        assert [type(v) for v in got] == [type(v) for v in want]
        np.testing.assert_allclose([np.nan if v is None else v for v in got],
                                   [np.nan if v is None else v for v in want], rtol=1e-6)


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_a_numpy_sum_of_ints_of_a_run_decided_count_is_refused_at_the_line():
    def count(x):
        hits = []
        for i in range(int(x.sum())):
            hits.append(i % 2)
        return np.sum(hits)

    with pytest.raises(TypeError, match=r"np\.sum\(\) of a list whose length only the run "
                       r"decides") as info:
        d2s.to_static(count)(rt.to_tensor(np.array([1, 2])))
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert "return np.sum(hits)" in text and "sum(lst)" in text


def numpy_or_none(x):
    scores = x.numpy() if x.sum() > 0 else None
    peak = None
    if x.mean() > 1:
        peak = np.exp(x).max()
    return scores, peak


@pytest.mark.parametrize("values", [[1.0, 2.0], [-1.0, 0.0], [0.5, 1.0]])
def test_a_numpy_value_or_none_chosen_by_a_tensor_if(values):
    """A NumPy array / scalar on one branch and None on the other came back a Tensor."""
    x = np.array(values, "float32")
    want = (x if x.sum() > 0 else None, np.exp(x).max() if x.mean() > 1 else None)
    eager, static = numpy_or_none(rt.to_tensor(x)), d2s.to_static(numpy_or_none)(
        rt.to_tensor(x))
    for got in (eager, static):
        assert [type(v) for v in got] == [type(v) for v in want]
        for g, w in zip(got, want, strict=True):
            assert (g is None) == (w is None) and (w is None or g.dtype == w.dtype)
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-6)


def padded_positions(lengths):
    """Buffers sized by a length the model computes (`np.zeros(int(lengths.max()))`)."""
    longest = int(lengths.max())
    mask = np.zeros([len(lengths), longest], dtype="float32")
    return (mask, np.ones(longest), np.full(longest, -1), np.full([longest], 0.5),
            np.arange(longest), np.arange(1, longest, 2), np.arange(0.0, float(longest)),
            np.arange(longest, dtype=np.float32))


@pytest.mark.parametrize("lengths", [[2, 3], [0, 0], [5, 1]])
def test_numpy_arrays_sized_by_the_run(lengths):
    n = max(lengths)
    want = (np.zeros([2, n], "float32"), np.ones(n), np.full(n, -1), np.full([n], 0.5),
            np.arange(n), np.arange(1, n, 2), np.arange(0.0, float(n)),
            np.arange(n, dtype=np.float32))
    converted = d2s.to_static(padded_positions)
    t = rt.to_tensor(np.array(lengths))
    for got in (padded_positions(t), converted(t)):
        _same(got, want)


def class_mass(labels, weights):
    """Per-class weight of a batch of any size (`np.bincount` with weights)."""
    return np.bincount(labels.numpy(), weights=weights.numpy(), minlength=3)


def test_weighted_bincount_of_an_empty_batch_raises_where_numpy_gives_int64():
    # (NumPy ignores the weights of no values: int64 zeros; the program's counts are float64,
    # so an empty batch raises at the user's line instead of a float64 result, silently)
    static = d2s.to_static(class_mass, input_spec=[d2s.InputSpec([None], "int64"),
                                                   d2s.InputSpec([None], "float64")])
    labels, weights = np.array([0, 2, 2]), np.array([1.0, 2.0, 0.5])
    got = static(rt.to_tensor(labels), rt.to_tensor(weights))
    want = class_mass(rt.to_tensor(labels), rt.to_tensor(weights))
    assert type(got) is np.ndarray and got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got, np.bincount(labels, weights, 3))
    empty = (rt.to_tensor(np.zeros([0], "int64")), rt.to_tensor(np.zeros([0])))
    assert class_mass(*empty).dtype == np.int64
    with pytest.raises(Exception, match="np.bincount of an empty array with weights") as info:
        static(*empty)
    text = "\n".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert "return np.bincount(labels.numpy(), weights=weights.numpy()" in text
