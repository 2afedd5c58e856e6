"""Strings appended in a graph loop (issue 35): a list that a loop over a tensor grows is a
tensor array, which cannot hold text, so appending a string is a ConversionError naming the
list and the loop (it silently returned a list of one item, the length of the trace's one
trip); a list of strings the loop only reads converts."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def tags_of_steps(x, n):
    tags = []
    for i in range(n):
        x = x * 2.0
        tags.append("step")
    return x, len(tags)


def tags_after_a_header(x, n):
    tags = ["header"]
    for i in range(n):
        tags.append("step")
    return x, len(tags)


@pytest.mark.parametrize("fn", [tags_of_steps, tags_after_a_header])
def test_a_string_appended_in_a_graph_loop_is_refused(fn):
    x, n = rt.to_tensor([1.0, 2.0]), rt.to_tensor(3)
    assert fn(x, n)[1] in (3, 4)  # eager: one item per trip
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(x, n)
    text = assert_at_user_line(info.value, __file__, line_of(fn, "for i in range(n)"))
    assert "'tags' holds str items" in text
    assert "a loop whose condition is a tensor" in text


def scaled_by_name(x, n, names):
    total = rt.zeros([])
    for i in range(n):
        total = total + x[i] * (2.0 if names[0] == "double" else 1.0)
    return total


def test_strings_the_loop_only_reads_convert():
    static = d2s.to_static(scaled_by_name, full_graph=True)
    x = np.array([1.0, 2.0, 4.0], "float32")
    for k in (0, 2, 3):  # 0 trips included; one program
        want = 2.0 * x[:k].sum()
        for fn in (scaled_by_name, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(k), ["double", "x"])
            np.testing.assert_allclose(got.numpy(), want)
    assert len(static.program_cache) == 1
