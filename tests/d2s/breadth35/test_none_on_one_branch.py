"""A value that is None after one branch of a tensor `if` and a tensor after the other, as a
returned tuple's item (`return mask, None` beside `return mask, counts`) or a local name read
after the `if`. One program value cannot be None for some inputs only: the converted call
raised `ValueError: cond: the branches return different structures: true_fn returned
((Variable b1[3], None),) ...` (internal Variables, no user line); it is a ConversionError at
the `if` naming the value, and the advice converts."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


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


def _if_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if line.strip().startswith("if "))


@pytest.mark.parametrize("fn, what", [(pad_counts, "the returned value[1] is None in the if"),
                                      (optional_bias, "'bias' is None in the if")])
def test_none_on_one_path_is_an_error_at_the_if(fn, what):
    x = rt.to_tensor([2, 3])
    fn(x)  # eager code runs
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(x)
    text = assert_at_user_line(info.value, __file__, _if_line(fn))
    assert what in text and "branch and a tensor in the else branch" in text, text
    assert "cannot be None for some inputs only" in text


def test_an_empty_tensor_instead_of_none_converts():
    static = d2s.to_static(pad_counts_empty, full_graph=True)
    for v, counts in (([2, 3], [2]), ([0, 1], [])):
        for fn in (pad_counts_empty, static):
            mask, got = fn(rt.to_tensor(v))
            np.testing.assert_array_equal(mask.numpy(), np.array(v) > 1)
            np.testing.assert_array_equal(got.numpy(), np.array(counts, "int64"))
    assert len(static.program_cache) == 1
