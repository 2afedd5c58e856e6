"""Strings appended in a graph loop (issue 35): a list that a loop over a tensor grows is a
tensor array, of the ids of its strs (trace-time constants; it once silently returned a list
of one item, the length of the trace's one trip, then was refused): its length follows the
trips (`test_str_lists_sized_by_tensors.py` for the rest); a list of strings the loop only
reads converts."""
import numpy as np
import pytest

import d2s
import runtime as rt


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
def test_a_string_appended_in_a_graph_loop_counts_the_trips(fn):
    x = rt.to_tensor([1.0, 2.0])
    static = d2s.to_static(fn, full_graph=True)
    for n in (0, 1, 3):
        want = fn(x, rt.to_tensor(n))[1]  # eager: one item per trip
        assert want == n + (fn is tags_after_a_header)
        got = static(x, rt.to_tensor(n))[1]
        assert got == want and type(got) is int
    assert len(static.program_cache) == 1


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
