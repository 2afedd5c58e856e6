"""`getattr(x, "name")` (and any `getattr` with a str, a constant or a name) of a tensor the
converted code computes answers as `x.name` does, as eager's Tensor (issue 33): None for a
computed tensor, never the program's `t3`; an attribute only the program's Variable has
(`program`, `block`) gives the default or eager's AttributeError; `shape` the run's sizes.
`vars()` of such a tensor is a ConversionError at the line. Eager vs static vs NumPy over
inputs taking both paths of a tensor `if` in one program."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as paddle
from d2s.errors import ConversionError


class Tagger(paddle.nn.Layer):
    """Names its outputs as some model code does (`getattr(t, "name", None) or key`)."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x, field="name"):
        h = self.fc(x)
        if h.mean() > 0:
            h = h * 2.0
        # (the spellings of others' code on purpose)
        tags = {"h": getattr(h, "name", None) or "h", "x": getattr(x, "stop_gradient"),  # noqa: B009
                "w": getattr(self.fc.weight, field), "shape": getattr(h, "shape"),  # noqa: B009
                "program": getattr(h, "program", "none"), "field": getattr(h, field)}
        return h, tags


XS = [np.array([[1.0, 2.0, 0.5]] * 2, "float32"), np.array([[-1.0, -3.0, 0.5]] * 2, "float32")]


def test_getattr_answers_as_eager_on_every_path():
    net, converted = Tagger(), Tagger()
    converted.set_state_dict(net.state_dict())
    static = d2s.to_static(converted)
    for x in XS:
        h1, t1 = net(paddle.to_tensor(x))
        h2, t2 = static(paddle.to_tensor(x))
        ref = x @ net.fc.weight.numpy() + net.fc.bias.numpy()
        ref = ref * 2.0 if ref.mean() > 0 else ref
        np.testing.assert_allclose(h2.numpy(), ref, rtol=1e-6)
        np.testing.assert_allclose(h1.numpy(), ref, rtol=1e-6)
        assert (t1.pop("w"), t2.pop("w")) == (net.fc.weight.name, converted.fc.weight.name)
        assert t1 == t2 == {"h": "h", "x": True, "shape": [len(x), 2], "program": "none",
                            "field": None}
        assert all(type(v) is type(t1[k]) for k, v in t2.items())
    assert len(static.forward.program_cache) == 1


def test_an_attribute_tensors_lack_raises_eagers_attribute_error():
    def read(x):
        return getattr(x * 2.0, "program")  # noqa: B009

    x = paddle.to_tensor(XS[0])
    with pytest.raises(AttributeError) as eager:
        read(x)
    with pytest.raises(AttributeError) as static:
        d2s.to_static(read)(x)
    assert str(static.value) == str(eager.value) == "'Tensor' object has no attribute 'program'"


def test_vars_of_a_computed_tensor_is_refused_at_the_line():
    def fields(x):
        y = x + 1.0
        return len(vars(y)), vars().get("y") is y

    assert fields(paddle.to_tensor(XS[0])) == (0, True)
    with pytest.raises(ConversionError) as info:
        d2s.to_static(fields)(paddle.to_tensor(XS[0]))
    text = str(info.value)
    assert "vars()" in text and "return len(vars(y))" in text
    assert "Variable" not in text and "t0" not in text
