"""Item 10 (issue 12): comprehension filters on a tensor. Over a Python list / tuple / dict
of fixed length, `[f(v) for v in xs if <tensor>]` (and a generator expression) builds its
result item by item, each under its own `if`: the result is a tensor array whose length is
decided when the program runs, read by `rt.stack`, `rt.concat`, `len`, `sum`, `rt.add_n` and
indexing. A filter that cannot be a graph (a dict comprehension: its keys) stays a clear
error naming the line. Eager vs static (and NumPy) over inputs keeping different items,
through one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError
from tests.finite_differences import numeric_grad

ROWS = [[1.0, 2.0], [-1.0, -2.0], [3.0, 4.0], [0.5, -0.2]]


def _np(v):
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v, "float64")


def _same(fn, rows=ROWS, reference=None):
    static = d2s.to_static(fn)
    for row in rows:
        x = rt.to_tensor(np.asarray(row, "float32"))
        want, got = fn(x), static(x)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-5, atol=1e-6, err_msg=str(row))
        if reference is not None:
            np.testing.assert_allclose(_np(got[0]), reference(np.asarray(row, "float64")),
                                       rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def stacked(x):
    xs = [x, x * 2, -x]
    kept = [v * 3 for v in xs if v.sum() > 0]
    return rt.stack(kept).sum(0), len(kept)


def _stacked_ref(a):
    return sum(v * 3 for v in (a, a * 2, -a) if v.sum() > 0)


def test_list_comprehension_filtered_by_a_tensor_is_a_tensor_array():
    _same(stacked, reference=_stacked_ref)


def python_sum(x):
    xs = (x, x * 2, -x)
    # (a tensor start: the row [0.5, -0.2] keeps no item, and eager's sum is that tensor)
    return sum([v * 3 for v in xs if v.sum() > 0]), sum((v.mean() for v in xs if v.max() > 1),
                                                        rt.zeros([]))


def add_n(x):
    xs = [x, x * 2, -x]
    return rt.add_n([v * 3 for v in xs if v.sum() > 0])


def concat_two_filters(x):
    xs = [x, x * 2, -x, x - 1]
    return rt.concat([v for v in xs if v.sum() > 0 if v.max() < 5])


def nested_fors(x):
    xs = (x, x - 1)
    return rt.stack([a + b for a in xs for b in xs if (a * b).sum() > 1]).sum(0)


def dict_items(x):
    d = {"a": x, "b": -x, "c": x * 4}
    return rt.stack([v for k, v in d.items() if v.mean() > 0.5 and k != "z"]).mean(0)


def indexed(x):
    xs = [x * 2, x, -x]
    kept = [v for v in xs if v.sum() > 0]
    return kept[0] + kept[-1] if len(xs) > 1 else x


def python_filter(x):  # a Python filter keeps a Python list (Python's order, exactly)
    xs = [x, None, x * 2]
    return [v * 2 for v in xs if v is not None][1]


@pytest.mark.parametrize("fn", [python_sum, add_n, concat_two_filters, nested_fors, indexed,
                                python_filter])
def test_filtered_comprehension_results_read_as_eager(fn):
    rows = [[1.0, 2.0], [3.0, 4.0], [0.5, 1.5]] if fn in (indexed, concat_two_filters) \
        else ROWS
    _same(fn, rows)


def test_dict_items_filter():
    _same(dict_items, [[1.0, 2.0], [-1.0, -2.0], [0.2, 0.1]])


def test_filtered_items_train_like_eager():
    def loss_fn(x):
        parts = [(v * v).sum() for v in (x, x * 2, x - 3) if v.mean() > 0]
        return rt.stack(parts).sum()
    static = d2s.to_static(loss_fn)
    for row in ([1.0, 2.0], [4.0, 5.0]):
        x = rt.to_tensor(np.asarray(row, "float32"))
        x.stop_gradient = False
        static(x).backward()
        want = numeric_grad(lambda a: float(loss_fn(rt.to_tensor(a)).item()),
                            np.asarray(row, "float64"), eps=1e-4)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)


def test_dict_comprehension_filter_on_a_tensor_stays_a_clear_error():
    def f(x):
        d = {"a": x, "b": -x}
        kept = {k: v for k, v in d.items() if v.mean() > 0}
        return kept["a"]
    with pytest.raises(ConversionError, match="comprehension filter") as info:
        d2s.to_static(f)(rt.ones([2]))
    assert "test_comprehension_filters.py" in str(info.value)


def _check(h):
    if h.sum() > 10:
        raise OverflowError("too large")
    return h


def checked_items_in_try(x):
    try:
        kept = [_check(v) for v in (x, x * 3) if v.mean() > 0]
        total = rt.stack(kept).sum(0) if len(kept) > 0 else x * 0
    except OverflowError:
        total = x * 0 - 1
    return total


def test_a_helper_error_while_computing_a_kept_item_reaches_the_except():
    _same(checked_items_in_try, [[1.0, 1.0], [3.0, 3.0], [-1.0, -1.0]])
