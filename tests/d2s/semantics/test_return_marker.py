"""The function's return value is recognised by a marker the return converter records, not by
the name `_retval`: a user's own variable of that name is an ordinary variable (bound on one
path only, it raises where eager code raises, never zeros), and the return value the
converter names `_retval_1` beside it still gets the return value's placeholders. Each trace
has its own operator state (`d2s/operators/trace_state.py`)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.operators import trace_state


def users_retval_on_one_path(x):
    if x.sum() > 0:
        _retval = x * 2
    return _retval  # (unbound where the sum is not positive, as in eager code)


def early_return_beside_users_retval(x):
    _retval = x + 1
    for _ in range(3):
        if _retval.sum() > 10:
            return _retval * 2
        _retval = _retval * 3
    return _retval - 1


def _x(*values):
    return rt.to_tensor(np.array(values, "float32"))


def test_a_users_retval_bound_on_one_path_raises_where_eager_does():
    static = d2s.to_static(users_retval_on_one_path)
    pos = np.array([1.0, 2.0], "float32")
    np.testing.assert_allclose(static(_x(*pos)).numpy(), pos * 2)
    np.testing.assert_allclose(users_retval_on_one_path(_x(*pos)).numpy(), pos * 2)
    with pytest.raises(UnboundLocalError):
        users_retval_on_one_path(_x(-1.0, -2.0))
    with pytest.raises(UnboundLocalError):
        static(_x(-1.0, -2.0))


def _reference(x):
    v = x + 1
    for _ in range(3):
        if v.sum() > 10:
            return v * 2
        v = v * 3
    return v - 1


@pytest.mark.parametrize("values", [(0.1, 0.2), (1.0, 2.0), (5.0, 6.0), (-3.0, -4.0)])
def test_an_early_return_beside_a_users_retval(values):
    static = d2s.to_static(early_return_beside_users_retval)
    x = np.array(values, "float32")
    want = _reference(x)
    np.testing.assert_allclose(early_return_beside_users_retval(_x(*x)).numpy(), want,
                               rtol=1e-6)
    np.testing.assert_allclose(static(_x(*x)).numpy(), want, rtol=1e-6)
    assert "_retval_1" in static.code  # (the converter's own name beside the user's)


def test_each_trace_has_its_own_operator_state():
    seen = []

    def spy(x):
        seen.append(trace_state.current())
        return x

    @d2s.to_static
    def f(x):
        return spy(x) * 2

    outside = trace_state.current()
    np.testing.assert_allclose(f(_x(1.0, 2.0)).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(f(_x(1.0, 2.0, 3.0)).numpy(), [2.0, 4.0, 6.0])  # a new trace
    assert len(seen) == 2 and seen[0] is not seen[1]
    assert all(s is not outside for s in seen)
    assert trace_state.current() is outside  # (installed for the trace only)
    assert [len(s.call_logs) for s in seen] == [1, 1]  # the call's own mutation log
    assert not outside.trys and not outside.frames


def test_a_returned_list_of_items_of_two_dtypes_is_named_as_the_returned_value():
    # (found by the state fuzzer: the refusal named the converter's variable `_retval`; a
    # list of one dtype converts: tests/d2s/breadth35/test_branch_list_lengths.py)
    def f(x):
        lst = [x * 1.0]
        if x.sum() > 0:
            return x, lst
        lst.append(x.astype("int64"))
        return x, lst

    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(f)(rt.ones([2]))
    text = str(info.value)
    assert text.startswith("the returned value[1] has a different structure")
    assert "its items are tensors of dtypes float32 and int64" in text
    assert "_retval" not in text and "test_return_marker.py" in text
