"""`x.tolist()` of a value of rank 2 or more whose dims the run decides (issue 35): detection
post-processing over `boxes[keep].tolist()`, cells of `rt.nonzero(mask).tolist()`, rows of
an `InputSpec([None, None])` argument. It raised `TypeError: tolist() of a tensor of shape
[-1, 4], whose dims the run decides` at the line; now it is eager's nested lists of Python
numbers where it is returned, stored, iterated, indexed, sliced, zipped or enumerated (a
tensor array of the rows, each read as the row's `tolist()`), and one program serves every
size. Eager vs static vs NumPy's `tolist()`, Python types compared exactly."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def _same(got, want):
    assert type(got) is type(want), (got, want)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same(got[k], want[k])
    else:
        assert got == want, (got, want)  # (exactly: Python floats of float32 values)


# ---- detection post-processing ---------------------------------------------------------------

def boxes_postprocess(boxes, scores, thr=0.5):
    keep = rt.nonzero(scores > thr)[:, 0]
    kept = boxes[keep]
    areas, records = [], []
    for i, (x1, y1, x2, y2) in enumerate(kept.tolist()):
        areas.append((x2 - x1) * (y2 - y1))
        records.append({"id": i, "w": x2 - x1})
    rows = kept.tolist()
    return areas, rows, len(rows), rows[1:], list(reversed(rows)), records


def _postprocess_reference(boxes, scores, thr=0.5):
    rows = boxes[scores > thr].tolist()
    areas = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in rows]
    records = [{"id": i, "w": r[2] - r[0]} for i, r in enumerate(rows)]
    return areas, rows, len(rows), rows[1:], list(reversed(rows)), records


_BOXES = [(np.float32([[0.1, 0.2, 0.7, 0.9], [1, 1, 4, 3], [0.3, 0.1, 0.35, 1.7]]),
           np.float32([0.9, 0.2, 0.7])),
          (np.float32([[0, 0, 2, 2]]), np.float32([0.1])),
          (np.float32([[0, 0, 1, 1]] * 5) * np.arange(1, 6, dtype="float32")[:, None],
           np.float32([0.6, 0.7, 0.8, 0.9, 1.0]))]


@pytest.mark.parametrize("spec", [None, [d2s.InputSpec([None, 4], "float32"),
                                         d2s.InputSpec([None], "float32")]])
def test_boxes_kept_by_scores_as_nested_python_lists(spec):
    static = d2s.to_static(boxes_postprocess, input_spec=spec)
    for boxes, scores in _BOXES:
        want = _postprocess_reference(boxes, scores)
        eager = boxes_postprocess(rt.to_tensor(boxes), rt.to_tensor(scores))
        _same(eager, want)
        _same(static(rt.to_tensor(boxes), rt.to_tensor(scores)), want)
    if spec:
        assert len(static.program_cache) == 1


# ---- rows of unknown length, a tensor `if`, state ----------------------------------------------

class RowStats(rt.nn.Layer):
    """Per-row sums of a ragged-looking batch, the rows kept on the layer for logging."""

    def forward(self, x):
        rows = x.tolist()
        if x.sum() > 10:
            rows = (x * 2).tolist()
        self.last_rows = rows
        sums = [sum(r) for r in rows]
        last = rows[-1]
        cells = [(int(r), int(c)) for r, c in rt.nonzero(x > 2).tolist()]
        return sums, last, cells, [len(r) for r in rows]


def _row_stats_reference(x):
    rows = (x * 2).tolist() if x.sum() > 10 else x.tolist()
    return ([sum(r) for r in rows], rows[-1],
            [tuple(c) for c in np.argwhere(x > 2).tolist()], [len(r) for r in rows]), rows


def test_rows_of_any_shape_through_a_tensor_if_and_onto_the_layer():
    layer = RowStats()
    static = d2s.to_static(RowStats(), input_spec=[d2s.InputSpec([None, None], "int64")])
    for x in (np.arange(6).reshape(2, 3), np.ones((4, 1), "int64"), np.arange(2)[None] * 9,
              np.zeros((3, 0), "int64")):
        want, rows = _row_stats_reference(x)
        eager = layer(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        _same(eager, want)
        _same(got, want)
        _same(static.last_rows, rows)
        _same(layer.last_rows, rows)
    assert len(static.forward.program_cache) == 1


@pytest.mark.parametrize("shape", [(2, 3, 2), (0, 1, 2), (1, 4, 1)])
def test_three_dims_and_a_known_first_dim(shape):
    def as_lists(x, y):
        return (x * 2).tolist(), y.tolist(), [len(r) for r in x.tolist()]

    spec = [d2s.InputSpec([None, None, None], "float32"), d2s.InputSpec([2, None], "int64")]
    static = d2s.to_static(as_lists, input_spec=spec)
    x = np.arange(np.prod(shape), dtype="float32").reshape(shape) / 3
    y = np.arange(2 * shape[1]).reshape(2, shape[1])
    want = ((x * 2).tolist(), y.tolist(), [len(r) for r in x.tolist()])
    _same(as_lists(rt.to_tensor(x), rt.to_tensor(y)), want)
    _same(static(rt.to_tensor(x), rt.to_tensor(y)), want)


# ---- what a program cannot give --------------------------------------------------------------

def rows_as_numpy(x):
    return np.array(x.tolist())


def rows_sorted(x):
    return sorted(x.tolist())


def rows_summed(x):
    return sum(x.tolist(), [])


def row_in_rows(x):
    return [0, 1] in x.tolist()


def rows_as_tensor(x):
    return rt.to_tensor(x.tolist())


def rows_stacked(x):
    return rt.stack(x.tolist())


@pytest.mark.parametrize("fn, what", [(rows_summed, r"sum\(\)"), (row_in_rows, "`in`"),
                                      (rows_as_tensor, r"to_tensor\(\)"),
                                      (rows_stacked, r"rt\.stack\(\)")])
def test_what_eager_does_with_lists_of_lists_is_refused_at_the_line(fn, what):
    x = rt.to_tensor(np.arange(6).reshape(3, 2))
    with pytest.raises(TypeError, match=what + r" of `x\.tolist\(\)` of a tensor whose first dim "
                       "only the run decides") as info:
        d2s.to_static(fn, input_spec=[d2s.InputSpec([None, 2], "int64")])(x)
    assert_at_user_line(info.value, __file__, fn.__code__.co_firstlineno + 1)


def test_numpy_of_the_rows_and_sorting_them_are_refused_at_the_line():
    x = rt.to_tensor(np.arange(6).reshape(3, 2))
    spec = [d2s.InputSpec([None, 2], "int64")]
    with pytest.raises(TypeError, match=r"np.array|NumPy of `x.tolist\(\)`.*Use `x.numpy\(\)`"
                       ) as info:
        d2s.to_static(rows_as_numpy, input_spec=spec)(x)
    assert_at_user_line(info.value, __file__, rows_as_numpy.__code__.co_firstlineno + 1)
    with pytest.raises(d2s.ConversionError, match=r"sorted\(\)") as info:
        d2s.to_static(rows_sorted, input_spec=spec)(x)
    assert_at_user_line(info.value, __file__, rows_sorted.__code__.co_firstlineno + 1)
