"""Two idioms of per-item model code (issue 35: "`Tensor.tolist()` of an argument"):

- `lengths.tolist()` of an input, then a Python loop over the lengths, raised `TypeError:
  tolist() of static Variable 'lengths'`. A value whose shape is known when the program is
  built gives nested lists of its elements, each kept in the graph as `item()` keeps one; a
  shape known only at run time gives the run's lists.
- `if not pieces:` of a list that a tensor `if` appends to (a tensor array) raised the internal
  `OpTypeError: full_like: x must be a tensor, got list [Meta(...)]`: the truth of such a list
  is its run-time length > 0, as `len(pieces) > 0` already was."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def masked_prefix_sums(lengths, feats):
    lens = lengths.tolist()
    pieces = []
    for i, n in enumerate(lens):
        if n == 0:
            continue
        pieces.append(feats[i, :n].sum() * (i + 1.0))
    if not pieces:
        return rt.zeros([])
    return rt.stack(pieces).sum()


def _np_prefix_sums(lengths, feats):
    return sum((feats[i, :n].sum() * (i + 1.0) for i, n in enumerate(lengths) if n), 0.0)


@pytest.mark.parametrize("lengths", [[3, 1, 2], [0, 0, 0], [0, 4, 0]])
def test_tolist_of_an_input_drives_a_python_loop(lengths):
    fv = np.arange(12, dtype="float32").reshape(3, 4) / 10.0
    static = d2s.to_static(masked_prefix_sums, full_graph=True)
    want = _np_prefix_sums(lengths, fv.astype("float64"))
    for fn in (masked_prefix_sums, static):
        feats = rt.to_tensor(fv, stop_gradient=False)
        out = fn(rt.to_tensor(lengths), feats)
        np.testing.assert_allclose(float(out), want, rtol=1e-6)
        if any(lengths):
            out.backward()
            grad = numeric_grad(lambda v: _np_prefix_sums(lengths, v), fv.astype("float64"))
            np.testing.assert_allclose(feats.grad.numpy(), grad, rtol=1e-5, atol=1e-6)


def nested_rows(table):
    rows = table.tolist()
    return [sum(r) for r in rows], table.sum().tolist()


def test_tolist_nests_like_eager_and_one_program_serves_every_value():
    static = d2s.to_static(nested_rows, full_graph=True)
    for tv in ([[1, 2], [3, 4], [5, 6]], [[0, -1], [7, 7], [2, 2]]):
        want_rows, want_total = nested_rows(rt.to_tensor(tv))
        rows, total = static(rt.to_tensor(tv))
        assert len(rows) == len(want_rows) == 3
        assert [int(r) for r in rows] == want_rows
        assert int(total) == want_total
    assert len(static.program_cache) == 1


def lengths_of_unknown_count(lengths):
    return sum(lengths.tolist())


def test_tolist_of_a_run_time_length_is_a_list_of_that_length():
    static = d2s.to_static(lengths_of_unknown_count, full_graph=True,
                           input_spec=[d2s.InputSpec([None], "int64")])
    for v in ([1, 2], [5], [3, 0, 4]):
        got = static(rt.to_tensor(v))
        assert type(got) is int and got == sum(v) == lengths_of_unknown_count(rt.to_tensor(v))
    assert len(static.program_cache) == 1


def firsts_of_unknown_count(table):
    return sum(table.tolist()[0])


def test_tolist_of_more_dims_of_a_run_time_shape_is_the_runs_nested_lists():
    """(It raised `TypeError: tolist() of a tensor of shape [-1, 2]` at the line; nested lists
    of run-decided lengths convert now: test_tolist_of_run_sized_values.py.)"""
    static = d2s.to_static(firsts_of_unknown_count, full_graph=True,
                           input_spec=[d2s.InputSpec([None, 2], "int64")])
    for rows in ([[1, 2]], [[3, 4], [5, 6], [7, 8]]):
        got = static(rt.to_tensor(rows))
        assert type(got) is int and got == sum(rows[0]) == firsts_of_unknown_count(
            rt.to_tensor(rows))
    assert len(static.program_cache) == 1


def logged_stats(x):
    loss = (x * x).sum()
    return rt.to_tensor([loss.item(), float(x.mean()), 2.0]), rt.to_tensor(x.tolist())


def test_to_tensor_of_a_list_of_graph_values_stacks_them_with_eager_dtypes():
    static = d2s.to_static(logged_stats, full_graph=True)
    for v in ([1.0, 2.0, 3.0], [-1.0, 0.0, 0.5]):
        want = logged_stats(rt.to_tensor(v))
        got = static(rt.to_tensor(v))
        assert len(got) == len(want) == 2
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    ids = d2s.to_static(lambda t: rt.to_tensor([[int(t.argmax()), 1], [0, t.shape[0]]]))
    out = ids(rt.to_tensor([0.1, 0.9, 0.3]))
    assert out.dtype == rt.int64 and out.numpy().tolist() == [[1, 1], [0, 3]]
