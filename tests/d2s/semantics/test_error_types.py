"""Item 12: where eager raises an exception class, converted code raises the same class (with
eager's message for conversions of many-element tensors), decided per input."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


class Mine(LookupError):
    pass


def to_float(x):
    return float(x) * 2


def to_int(x):
    return int(x) + 1


def to_bool(x):
    return x * 2 if bool(x > 0) else x


def index_out_of_range(x):
    return x[5]


def reshape_mismatch(x):
    return x.reshape([7])


def own_class(x):
    if x.sum() > 1:
        raise Mine("custom")
    return x


def _outcome(fn, x):
    try:
        fn(x)
    except Exception as e:  # noqa: BLE001  (the class and message are compared)
        return type(e), (str(e).splitlines() or [""])[0]
    return None


@pytest.mark.parametrize("fn", [to_float, to_int, to_bool, index_out_of_range,
                                reshape_mismatch, own_class])
@pytest.mark.parametrize("shape", [[1], [2, 3]])
def test_same_exception_class_as_eager(fn, shape):
    x = rt.to_tensor(np.ones(shape, "float32"))
    want, got = _outcome(fn, x), _outcome(d2s.to_static(fn), x)
    if want is None:
        assert got is None
    else:
        assert got is not None and got[0] is want[0], (want, got)
        if fn in (to_float, to_int, to_bool, own_class):
            assert got[1] == want[1]
