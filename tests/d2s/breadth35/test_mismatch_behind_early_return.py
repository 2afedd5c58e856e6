"""A list that cannot become one tensor array, under a tensor `if` whose other branch
returns early (issue 35): the refusal named the early return's value, unbound on the path
that does not return, as "a tuple of length 2 in the if branch and Undefined in the else
branch" (an internal word, and not the cause). The message names the list and its items, at
the user's line."""
from __future__ import annotations

import re

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.operators.mutation import StateChangeError

from .messages import shown

INTERNAL = re.compile(r"_retval|\bt\d+\b|Variable\(%|<undefined|Undefined")


def stack_rows(x):
    rows = [x * 1.0]
    if x.sum() > 0.0:
        if x.max() > 2.0:  # the user line of the refusal
            return x, len(rows)
        rows.append(x.reshape([1, -1]))  # a rank-2 item beside a rank-1 one
    return x * 2.0, len(rows)


def tag_rows(x):
    rows = [x * 1.0]
    if x.sum() > 0.0:
        if x.max() > 2.0:  # the user line of the refusal
            return x, len(rows)
        rows.append("kept")
    return x * 2.0, len(rows)


@pytest.mark.parametrize("fn, held", [(stack_rows, "tensors of ranks 1 and 2"),
                                      (tag_rows, "the str 'kept'")])
def test_list_beside_an_early_return_is_named_in_the_users_words(fn, held):
    x = rt.to_tensor(np.asarray([1.0, 2.0], "float32"))
    out, n = fn(x)  # eager code runs: a list of two items, then x * 2
    assert n == 2
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])
    with pytest.raises(StateChangeError) as info:
        d2s.to_static(fn)(x)
    text = shown(info.value)
    line = fn.__code__.co_firstlineno + 3
    assert f'File "{__file__}", line {line}' in text, text
    assert "'rows' is a list of length 1 in the if branch and one of length 2" in text, text
    assert held in text, text
    assert not INTERNAL.search(text), text
