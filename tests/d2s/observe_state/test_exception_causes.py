"""`raise NewError(...) from err` in converted code, `err` the user's own exception: the
raised exception's `__cause__` is `err`, as eager's (the traceback shows "The above exception
was the direct cause"); converted code dropped it (it hides causes inside d2s and the
runtime, which are not the user's). Eager vs static, through helpers and a Layer."""
import pytest

import d2s
import runtime as rt


def scaled(x, cfg):
    try:
        k = cfg["scale"]
    except KeyError as err:
        raise ValueError("cfg needs a 'scale'") from err
    return x * k


class Head(rt.nn.Layer):
    def __init__(self, table):
        super().__init__()
        self.table = table

    def forward(self, x, name):
        return x * self._pick(name)

    def _pick(self, name):
        try:
            return self.table[name]
        except KeyError as err:
            raise LookupError(f"no head {name!r}") from err


def _raised(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


def test_the_users_cause_is_kept():
    x = rt.to_tensor([1.0, 2.0])
    for fn in (scaled, d2s.to_static(scaled)):
        e = _raised(fn, x, {})
        assert type(e) is ValueError and str(e).startswith("cfg needs a 'scale'")
        assert type(e.__cause__) is KeyError and e.__cause__.args == ("scale",)
        assert e.__suppress_context__
    assert float(d2s.to_static(scaled)(x, {"scale": 2.0}).sum()) == 6.0


def test_through_a_layers_helper():
    x = rt.to_tensor([1.0, 2.0])
    for head in (Head({"a": 2.0}), d2s.to_static(Head({"a": 2.0}))):
        e = _raised(head, x, "b")
        assert type(e) is LookupError and type(e.__cause__) is KeyError
        assert e.__cause__.args == ("b",)
