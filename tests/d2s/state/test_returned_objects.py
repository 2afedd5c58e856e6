"""What a converted function may return: containers the program rebuilds on every call
(lists, tuples, dicts and their subclasses, namedtuples, dataclasses, as model outputs are
written), and never an object still holding the trace's Variable."""
import collections
import dataclasses
import typing

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime import nn

from .helpers import t


@dataclasses.dataclass
class ClassifierOutput:
    logits: object
    loss: object = None
    hidden: tuple = ()


class ModelOutput(collections.OrderedDict):
    """Hugging Face style: a dict whose items are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Pair(typing.NamedTuple):
    first: object
    second: object


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x, labels=None):
        logits = self.fc(x)
        loss = None
        if labels is not None:
            loss = ((logits - labels) ** 2).mean()
        return ClassifierOutput(logits=logits, loss=loss, hidden=(x, logits * 2))


def test_dataclass_dict_and_namedtuple_outputs_are_rebuilt_each_call():
    head = Head()
    static = d2s.to_static(head)
    w, b = head.fc.weight.numpy(), head.fc.bias.numpy()
    for xv in ([[1.0, 2.0]], [[-3.0, 0.5]]):
        x, y = t(xv), t([[0.0, 1.0]])
        out = static(x, y)
        ref = np.array(xv) @ w + b
        assert type(out) is ClassifierOutput and type(out.logits) is rt.Tensor
        np.testing.assert_allclose(out.logits.numpy(), ref, rtol=1e-6)
        np.testing.assert_allclose(float(out.loss), ((ref - [[0.0, 1.0]]) ** 2).mean(),
                                   rtol=1e-5)
        np.testing.assert_allclose(out.hidden[1].numpy(), 2 * ref, rtol=1e-6)
        assert static(x).loss is None

    @d2s.to_static
    def as_dict(x):
        return ModelOutput(scores=x * 2, pair=Pair(x + 1, x - 1))

    for v in (1.0, 3.0):
        out = as_dict(t([v]))
        assert type(out) is ModelOutput and type(out.pair) is Pair
        np.testing.assert_allclose(out.scores.numpy(), [2 * v])
        np.testing.assert_allclose(out.pair.second.numpy(), [v - 1])


class Box:
    def __init__(self, value):
        self.value = value
        self.extra = {"items": [value]}


def test_an_object_holding_a_computed_tensor_is_refused():
    @d2s.to_static
    def boxed(x):
        return Box(x * 3)

    with pytest.raises(d2s.ConversionError, match=r"returns a Box object holding a tensor .*"
                                                   r"\(in \.(value|extra)"):
        boxed(t([1.0]))

    @d2s.to_static
    def plain_object(x):  # an object holding no tensor is returned as it is
        return x * 2, Box(3)

    y, box = plain_object(t([1.0]))
    np.testing.assert_allclose(y.numpy(), [2.0])
    assert box.value == 3
