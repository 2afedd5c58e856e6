"""A `return`, `break` or `continue` in a `finally` clause discards the error its `try` body
raised, as in Python (issue 33): the `finally`'s return value is the result, the loop goes on
or stops; where the `finally` does not jump, the error is raised after it. With raises and
jumps under tensor and Python conditions, several inputs through one converted program,
against eager and a NumPy reference."""
# ruff: noqa: B012  (jumps in `finally` are what this file tests)
import numpy as np
import pytest

import d2s
import runtime as rt


def return_under_tensor_tests(x):
    try:
        if x[0] > 0:
            raise ValueError("positive")
        y = x * 2
    finally:
        if x[1] > 0:
            return x + 100
    return y


def return_under_a_python_test(x, swallow):
    try:
        raise ValueError("always")
    finally:
        if swallow:
            return x.sum().item()


def break_after_a_raise(x):
    total = x * 0
    for _ in range(3):
        try:
            total = total + x
            if x[0] > 0:
                raise KeyError("k")
        finally:
            if x[1] > 0:
                break
    return total


def continue_after_a_raise(x):
    total = x * 0
    for i in range(3):
        try:
            total = total + x
            if x[0] > i:
                raise KeyError("k")
        finally:
            continue
    return total


def return_under_tensor_tests_reference(v):
    if v[1] > 0:
        return v + 100
    if v[0] > 0:
        return ValueError
    return v * 2


def break_after_a_raise_reference(v):
    total = v * 0
    for _ in range(3):
        total = total + v
        if v[1] > 0:
            break
        if v[0] > 0:
            return KeyError
    return total


def continue_after_a_raise_reference(v):
    return v * 3


INPUTS = ([1.0, 2.0], [-1.0, -2.0], [1.0, -2.0], [-1.0, 2.0], [1.5, 2.0])
CASES = [(return_under_tensor_tests, return_under_tensor_tests_reference),
         (break_after_a_raise, break_after_a_raise_reference),
         (continue_after_a_raise, continue_after_a_raise_reference)]


def _outcome(fn, *args):
    try:
        return fn(*args).numpy()
    except (ValueError, KeyError) as e:
        return type(e)


@pytest.mark.parametrize(("fn", "reference"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_jump_in_finally_discards_the_error(fn, reference):
    static = d2s.to_static(fn)
    for v in INPUTS:
        expected = reference(np.array(v, "float32"))
        eager, converted = _outcome(fn, rt.to_tensor(v)), _outcome(static, rt.to_tensor(v))
        for got in (eager, converted):
            if isinstance(expected, type):
                assert got is expected, (v, got)
            else:
                assert isinstance(got, np.ndarray), (v, got)
                np.testing.assert_allclose(got, expected)
    assert len(static.program_cache) == 1


def test_a_python_decided_return_in_finally_discards_the_error():
    static = d2s.to_static(return_under_a_python_test)
    x = rt.to_tensor([1.0, 2.5])
    assert return_under_a_python_test(x, True) == static(x, True) == 3.5
    assert type(static(x, True)) is float
    for fn in (return_under_a_python_test, static):
        with pytest.raises(ValueError, match="always"):
            fn(x, False)
