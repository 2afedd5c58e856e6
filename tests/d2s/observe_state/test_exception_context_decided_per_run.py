"""A `raise` in an `except` clause the program runs, where the run decides which error the
clause caught (`KeyError('x')` on one path, `KeyError('y')` on another): the new exception's
`__context__` is the error this run caught, as eager's (issue 33; was None, silently, where
the errors differ, so the traceback lost "During handling of the above exception"), with
`from cause` and `from None` kept. Eager vs static over inputs taking every path through one
program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as paddle


class MissingWeight(Exception):
    pass


class Lookup(paddle.nn.Layer):
    """A layer whose forward checks its input as model code does, raising per case."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    def forward(self, x):
        try:
            if x.sum() > 0:
                raise KeyError("positive")
            if x.sum() < -5:
                raise KeyError("very negative")
            w = 2.0
        except KeyError:
            if x.max() > -100:
                if self.how == "plain":
                    raise MissingWeight("no weight for this input")
                if self.how == "none":
                    raise MissingWeight("no weight for this input") from None
                raise MissingWeight("no weight") from RuntimeError("table empty")
            w = 1.0
        return x * w


XS = [np.full([2], v, "float32") for v in (1.0, -10.0, -1.0)]


def _observed(fn, x):
    try:
        out = fn(paddle.to_tensor(x))
    except MissingWeight as e:
        ctx, cause = e.__context__, e.__cause__
        return ("raised", str(e), type(ctx), ctx.args if ctx is not None else None,
                type(cause), cause.args if cause is not None else None, e.__suppress_context__)
    return ("ok", out.numpy().tolist(), out.dtype)


@pytest.mark.parametrize("how", ["plain", "none", "from"])
def test_context_is_the_error_this_run_caught(how):
    layer = Lookup(how)
    static = d2s.to_static(layer)
    eager = [_observed(layer, x) for x in XS]
    assert [o[3] for o in eager[:2]] == [("positive",), ("very negative",)]
    assert eager[2] == ("ok", [-2.0, -2.0], paddle.float32)
    for _ in range(2):  # (the same program each call)
        assert [_observed(static, x) for x in XS] == eager
