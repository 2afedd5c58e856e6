"""`locals()`, `vars()` and `dir()` without arguments in a converted function (issue 33): the
converted code keeps names a tensor `if` binds in branch functions of its own and adds its own
(`_d2s`), so what they listed differed from eager's silently (`locals().get("t")` None where
eager has the tensor, `dir()` listing `_if_true_1`). Refused at the user's line; the same
names given by the user (`vars(obj)`, a local called `locals`) still convert."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as paddle
from d2s.errors import ConversionError

XS = [np.array([1.0, 2.0], "float32"), np.array([-3.0, 1.0], "float32")]


class Head(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        if x.mean() > 0:
            t = x * self.scale
        else:
            t = x - 1.0
        return locals().get("t")


def picked(x):
    if x.mean() > 0:
        t = x * 2.0
    else:
        t = x - 1.0
    return vars()["t"]


def listed(x):
    y = x + 1.0
    return sorted(dir()), y


def formatted(x):
    total = float(x.sum())
    return "%(total).1f" % locals()


@pytest.mark.parametrize("fn, line", [
    (Head(), 'return locals().get("t")'), (picked, 'return vars()["t"]'),
    (listed, "return sorted(dir()), y"), (formatted, 'return "%(total).1f" % locals()')])
def test_frame_names_are_refused_at_the_line(fn, line):
    eager = [fn(paddle.to_tensor(x)) for x in XS]  # eager runs (the names exist)
    assert eager[0] is not None
    static = d2s.to_static(fn)
    for x in XS:
        with pytest.raises(ConversionError) as info:
            static(paddle.to_tensor(x))
        text = str(info.value)
        assert line in text and "Name the variables" in text
        for internal in ("_d2s", "_if_true", "Variable", "t0"):
            assert internal not in text


def test_user_names_and_vars_of_objects_still_convert():
    class Box:
        def __init__(self):
            self.w = 3.0

    def scaled(x, box, locals=dict):  # noqa: A002  (the user's own `locals`)
        if x.mean() > 0:
            y = x * vars(box)["w"]
        else:
            y = x - vars(box)["w"]
        return y, len(locals())

    static = d2s.to_static(scaled)
    for x in XS:
        want = np.where(x.mean() > 0, x * 3.0, x - 3.0)
        for out in (scaled(paddle.to_tensor(x), Box()), static(paddle.to_tensor(x), Box())):
            np.testing.assert_allclose(out[0].numpy(), want)
            assert out[1] == 0 and type(out[1]) is int
