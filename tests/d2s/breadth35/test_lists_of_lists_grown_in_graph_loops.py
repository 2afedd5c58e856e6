"""A list grown in a graph loop appended to another list a graph loop grows (AutoGraph's
`nested_fill`: `row.append(j)` in the inner loop, `mat.append(row)` in the outer one, both
over `range` of a tensor). Each list is a tensor array, which holds tensors or Python
numbers: the append is refused at the user's line, saying what to write (it was an internal
`AttributeError: 'list' object has no attribute 'item'` when returned, and a misleading
`len() of a 0-d tensor` when a row was read). The advised form converts and agrees with
eager code and NumPy over zero, one and several trips of each loop."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def rows_of_lists(m, n):
    mat = []
    for _ in range(m):
        row = []
        for j in range(n):
            row.append(j * 0.5)
        mat.append(row)
    return mat


def rows_read_back(m, n):
    mat = []
    for _ in range(m):
        row = []
        for j in range(n):
            row.append(j)
        mat.append(row)
    return sum(len(r) for r in mat)


def rows_as_tensors(m, n):
    mat = []
    for i in range(m):
        row = []
        for j in range(n):
            row.append(rt.ones([]) * (i * 10 + j))
        mat.append(rt.stack(row))
    return rt.stack(mat), len(mat)


@pytest.mark.parametrize("fn", [rows_of_lists, rows_read_back])
def test_a_grown_list_appended_to_a_grown_list_is_a_clear_refusal(fn):
    m, n = rt.to_tensor(2), rt.to_tensor(3)
    fn(m, n)  # eager runs
    with pytest.raises(d2s.StateChangeError) as e:
        d2s.to_static(fn)(m, n)
    message = str(e.value)
    assert message.startswith("a list whose length depends on a tensor is appended to "
                              "another such list (File ")
    assert "line" in message and "mat.append(row)" in message
    assert "mat.append(rt.to_tensor(row))" in message
    for internal in ("_retval", "Variable(", "<undefined", "'list' object"):
        assert internal not in message


def test_rows_appended_as_tensors_convert():
    converted = d2s.to_static(rows_as_tensors)
    for m, n in ((1, 2), (3, 2), (2, 4)):
        want = np.asarray([[i * 10 + j for j in range(n)] for i in range(m)], np.float32)
        eager = rows_as_tensors(rt.to_tensor(m), rt.to_tensor(n))
        static = converted(rt.to_tensor(m), rt.to_tensor(n))
        assert static[1] == eager[1] == m and type(static[1]) is int
        assert static[0].dtype == eager[0].dtype and static[0].shape == eager[0].shape
        np.testing.assert_array_equal(static[0].numpy(), eager[0].numpy())
        np.testing.assert_array_equal(static[0].numpy(), want)
