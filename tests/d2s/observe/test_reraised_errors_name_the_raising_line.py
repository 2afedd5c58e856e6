"""An error the program raises inside a `try` under a tensor condition and re-raises (a bare
`raise` in the `except` clause, also under a tensor condition; or no clause catches it and
it leaves after `finally`) names the line eager's traceback names last: the `raise` that
first raised it (also in a helper the `try` body calls). Before, the user's line shown was
the `try:` line, or the line of the `if` around the `raise`."""
import re
import traceback

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import INTERNAL, shown

POSITIVE = np.array([1.0, 2.0, 3.0], "float32")
NEGATIVE = np.array([-1.0, -2.0, 0.5], "float32")


def eager_line(e: BaseException) -> int:
    """The innermost line of this file in eager's traceback."""
    return [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == __file__][-1]


def static_line(e: BaseException) -> int:
    text = shown(e)
    assert not INTERNAL.search(text), text
    return int(re.findall(rf'File "{re.escape(__file__)}", line (\d+)', text)[-1])


def check_finite(x):
    if x.mean() > 0:  # (a validation helper, as in data pipelines)
        raise ValueError("mean must not be positive")
    return x


def logged(x, log):
    try:
        y = check_finite(x) * 2
    except ValueError as err:
        log.append(str(err))
        raise
    return y


def fallback(x):
    try:
        y = x * 2
        if x.sum() > 0:
            raise KeyError("token")
    except KeyError:
        if x.max() > 2:  # (re-raised on some runs only)
            raise
        y = -x
    return y


def cleanup(x):
    try:
        if x.mean() > 0:
            raise RuntimeError("overflow")
        y = x + 1
    finally:
        x = x * 0
    return y


@pytest.mark.parametrize("fn, args", [
    (logged, ([],)), (fallback, ()), (cleanup, ()),
])
def test_reraised_error_names_the_raising_line(fn, args):
    static = d2s.to_static(fn)
    with pytest.raises(Exception) as eager:
        fn(rt.to_tensor(POSITIVE), *args)
    with pytest.raises(Exception) as got:
        static(rt.to_tensor(POSITIVE), *args)
    assert type(got.value) is type(eager.value) and got.value.args == eager.value.args
    assert static_line(got.value) == eager_line(eager.value)
    out, want = static(rt.to_tensor(NEGATIVE), *args), fn(rt.to_tensor(NEGATIVE), *args)
    np.testing.assert_array_equal(out.numpy(), want.numpy())  # (the other path: eager's)
