"""A value that is None after one branch of a tensor `if` and a tensor after the other, as a
returned tuple's item (`return mask, None` beside `return mask, counts`) or a local name read
after the `if`. One program value cannot be None for some inputs only: the converted call
raised `ValueError: cond: the branches return different structures: true_fn returned
((Variable b1[3], None),) ...` (internal Variables, no user line); it is a ConversionError at
the `if` naming the value, and the advice converts. Since issue 35's None-or-tensor values it
converts: the call gives None where eager code has None (`test_none_on_one_path.py`)."""
import numpy as np
import pytest

import d2s
import runtime as rt



def pad_counts(lengths):
    mask = lengths > 1
    if not mask.any():
        return mask, None
    return mask, mask.astype("int64").sum()


def optional_bias(x):
    y = x * 2.0
    if x.sum() > 0:
        bias = None
    else:
        bias = x + 1.0
    return y if bias is None else y + bias


def pad_counts_empty(lengths):
    mask = lengths > 1
    if not mask.any():
        return mask, rt.zeros([0], dtype="int64")
    return mask, mask.astype("int64").sum().reshape([1])


@pytest.mark.parametrize("fn", [pad_counts, optional_bias])
def test_none_on_one_path_converts(fn):
    """(issue 35: was a ConversionError at the `if`) None exactly where eager has it."""
    static = d2s.to_static(fn, full_graph=True)
    for v in ([2, 3], [0, 1], [-4, -1]):
        want, got = fn(rt.to_tensor(v)), static(rt.to_tensor(v))
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for w, g in zip(want, got, strict=True):
            assert (g is None) == (w is None)
            if w is not None:
                assert g.dtype == w.dtype
                np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert len(static.program_cache) == 1


def test_an_empty_tensor_instead_of_none_converts():
    static = d2s.to_static(pad_counts_empty, full_graph=True)
    for v, counts in (([2, 3], [2]), ([0, 1], [])):
        for fn in (pad_counts_empty, static):
            mask, got = fn(rt.to_tensor(v))
            np.testing.assert_array_equal(mask.numpy(), np.array(v) > 1)
            np.testing.assert_array_equal(got.numpy(), np.array(counts, "int64"))
    assert len(static.program_cache) == 1
