"""`np.unique` of a NumPy value the program computes (issue 35): Open3D-style voxel
downsampling (`np.unique(keys, axis=0, return_inverse=True)`), SAM's connected-components
cleanup (`np.unique(labels.numpy())` driving a Python loop) and label statistics with
`return_index` / `return_counts`. It raised `TypeError: np.unique() of a NumPy array computed
by the converted code` at the line; now the number of distinct values is the run's (-1 in the
program), and one program serves inputs with any number of them. Eager vs static vs NumPy,
with dtypes, shapes and Python types compared."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    elif isinstance(want, rt.Tensor):
        _same(got.numpy(), want.numpy())
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        assert got == want


# ---- voxel downsampling -------------------------------------------------------------------

def voxel_downsample(points, voxel=0.5):
    keys = np.floor(points.numpy() / voxel).astype("int64")
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inv = rt.to_tensor(inverse)
    n = len(counts)
    sums = rt.zeros([n, points.shape[1]]).index_add(inv, 0, points)
    return sums / rt.to_tensor(counts).astype("float32").unsqueeze(-1), uniq, counts


def _voxel_reference(points, voxel=0.5):
    keys = np.floor(points / voxel).astype("int64")
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    sums = np.zeros((len(uniq), points.shape[1]), np.float32)
    np.add.at(sums, inverse, points)
    return sums / counts[:, None].astype(np.float32), uniq, counts


_CLOUDS = [np.float32([[0.1, 0.2, 0.3], [0.2, 0.1, 0.4], [1.7, 0.1, 0.2], [0.3, 0.3, 0.3]]),
           np.float32([[0.1, 0.1, 0.1]]),
           np.random.default_rng(3).uniform(-2, 2, (9, 3)).astype("float32")]


@pytest.mark.parametrize("spec", [None, [d2s.InputSpec([None, 3], "float32")]])
def test_voxels_of_clouds_with_any_number_of_voxels_one_program(spec):
    static = d2s.to_static(voxel_downsample, input_spec=spec)
    for points in _CLOUDS:
        want = _voxel_reference(points)
        eager = voxel_downsample(rt.to_tensor(points))
        got = static(rt.to_tensor(points))
        _same(eager[1:], want[1:])
        _same(got, eager)
        np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-6)
    assert len(static.program_cache) == (1 if spec else len({p.shape for p in _CLOUDS}))


# ---- connected-components cleanup: the distinct labels drive a Python loop ----------------

class RegionCleanup(rt.nn.Layer):
    """Drop labelled regions smaller than `min_area`; the labels are what the model gives."""

    def __init__(self, min_area):
        super().__init__()
        self.min_area = min_area

    def forward(self, labels):
        labels = labels * 1  # (a value of the program, not the argument)
        ids = np.unique(labels.numpy())
        keep = rt.zeros_like(labels)
        n_removed = 0
        for i in ids:
            if i == 0:
                continue
            region = (labels == rt.to_tensor(i)).astype("float32")
            if region.sum() < self.min_area:
                n_removed += 1
                continue
            keep = keep + region
        return keep, n_removed, len(ids)


def _cleanup_reference(labels, min_area):
    keep, n_removed = np.zeros(labels.shape, np.float32), 0
    ids = np.unique(labels)
    for i in ids[ids != 0]:
        region = (labels == i).astype(np.float32)
        if region.sum() < min_area:
            n_removed += 1
        else:
            keep += region
    return keep, n_removed, len(ids)


_LABELS = [np.float32([[1, 1, 0, 2], [0, 1, 0, 2], [3, 0, 0, 2], [0, 0, 4, 4]]),
           np.zeros((4, 4), np.float32),
           np.float32([[5, 5, 5, 5], [5, 5, 5, 5], [0, 0, 0, 0], [7, 0, 0, 0]])]


def test_a_loop_over_the_distinct_labels_is_a_graph_loop_of_the_runs_length():
    layer = RegionCleanup(min_area=2)
    static = d2s.to_static(RegionCleanup(min_area=2))
    for labels in _LABELS:
        eager, got = layer(rt.to_tensor(labels)), static(rt.to_tensor(labels))
        want = _cleanup_reference(labels, 2)
        assert type(got[1]) is int and type(got[2]) is int
        assert (got[1], got[2]) == (eager[1], eager[2]) == want[1:]
        np.testing.assert_array_equal(got[0].numpy(), eager[0].numpy())
        np.testing.assert_array_equal(got[0].numpy(), want[0])
    assert len(static.forward.program_cache) == 1


# ---- unique's other results: first index, inverse shaped as the input, counts ------------

def label_statistics(logits):
    pred = logits.argmax(-1).numpy()
    values, first, inverse, counts = np.unique(pred, return_index=True, return_inverse=True,
                                               return_counts=True)
    majority = values[np.argmax(counts)]
    return values, first, inverse, counts, majority, np.unique(pred)


@pytest.mark.parametrize("spec", [None, [d2s.InputSpec([None, None, 4], "float32")]])
def test_index_inverse_and_counts_as_numpy_gives_them(spec):
    static = d2s.to_static(label_statistics, input_spec=spec)
    rng = np.random.default_rng(0)
    for shape in ((2, 3, 4), (2, 3, 4), (5, 1, 4)):
        logits = rng.standard_normal(shape).astype("float32")
        pred = logits.argmax(-1)
        v, f, i, c = np.unique(pred, return_index=True, return_inverse=True,
                               return_counts=True)
        want = (v, f, i, c, v[np.argmax(c)], v)
        eager, got = label_statistics(rt.to_tensor(logits)), static(rt.to_tensor(logits))
        _same(eager, want)
        _same(got, want)
        assert got[2].shape == pred.shape  # (NumPy 2: the inverse is shaped as the input)


# ---- what a program cannot do ---------------------------------------------------------------

def texts_of_labels(labels):
    names = []
    for i in np.unique((labels * 1).numpy()):
        names.append("class_%d" % i)  # (text of a value only the run knows)
    return names


def unique_unsorted(labels):
    return np.unique((labels * 1).numpy(), sorted=False)


def test_what_the_program_cannot_do_is_refused_at_the_line():
    x = rt.to_tensor(np.array([3, 1, 3]))
    assert texts_of_labels(x) == ["class_1", "class_3"]
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(texts_of_labels)(x)
    assert_at_user_line(info.value, __file__, texts_of_labels.__code__.co_firstlineno + 3)
    with pytest.raises(TypeError, match=r"np\.unique\(equal_nan=False / sorted=False\)") as info:
        d2s.to_static(unique_unsorted)(x)
    assert_at_user_line(info.value, __file__, unique_unsorted.__code__.co_firstlineno + 1)


# ---- orders of the distinct values feeding Python indexing --------------------------------

CLASS_NAMES = ("background", "person", "car", "bicycle")


def majority_report(labels):
    ids, counts = np.unique(labels.numpy(), return_counts=True)
    order = np.argsort(counts, kind="stable")[::-1]
    ranked = [int(i) for i in ids[order]]
    return CLASS_NAMES[ranked[0]], ranked, sorted(ids.tolist(), reverse=True), ids[order][:2]


def test_argsort_and_sorted_of_the_distinct_values_pick_python_objects():
    static = d2s.to_static(majority_report, input_spec=[d2s.InputSpec([None], "int64")])
    for labels in ([1, 1, 2, 3], [0, 2, 2, 2, 3, 3], [3], [2, 1, 2, 1, 0]):
        labels = np.array(labels)
        ids, counts = np.unique(labels, return_counts=True)
        order = np.argsort(counts, kind="stable")[::-1]
        want = (CLASS_NAMES[int(ids[order][0])], [int(i) for i in ids[order]],
                sorted(ids.tolist(), reverse=True), ids[order][:2])
        _same(majority_report(rt.to_tensor(labels)), want)
        _same(static(rt.to_tensor(labels)), want)
    assert len(static.program_cache) == 1
