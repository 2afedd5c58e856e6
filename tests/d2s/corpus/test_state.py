"""The corpus harness's state comparison (state.py) tells apart what a user can observe after a
call and ignores what differs between two equal Layers (their unique names, the converted
forward)."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .state import assert_same_state, python_state, snapshot


class _Counter(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)
        self.register_buffer("seen", rt.zeros([2]))
        self.calls, self.log = 0, {"last": None}

    def forward(self, x):
        self.seen.set_value(self.seen + x.sum(0))
        self.calls += 1
        self.log["last"] = float(x.mean())
        return self.fc(x)


def _layer():
    rt.seed(0)
    return _Counter()


class _Box:
    def __init__(self):
        self.scale, self.hist = 2.0, [1, 2]


def _fails(expected, got):
    with pytest.raises(AssertionError):
        assert_same_state(snapshot(expected), snapshot(got), 1e-6, 1e-6)


def test_equal_layers_and_a_converted_one_compare_equal():
    x = rt.to_tensor(np.ones((3, 2), "float32"))
    eager, static = _layer(), d2s.to_static(_layer())
    eager(x), static(x)
    assert_same_state(snapshot(eager), snapshot(static), 1e-6, 1e-6)


def test_buffers_counters_and_dict_contents_are_compared():
    x = rt.to_tensor(np.ones((3, 2), "float32"))
    a, b = _layer(), _layer()
    a(x)
    _fails(a, b)  # the buffer, the counter and the dict entry differ
    b(x)
    b.log["last"] = rt.to_tensor(1.0)  # a Tensor where eager keeps a Python float
    _fails(a, b)
    b.log = {"last": 1.0, "extra": 1}
    _fails(a, b)


def test_plain_objects_lists_and_in_place_argument_updates():
    a, b = _Box(), _Box()
    b.hist.append(3)
    _fails(a, b)
    _fails([rt.to_tensor([1.0, 2.0])], [rt.to_tensor([1.0, 2.5])])
    _fails({"k": rt.to_tensor([1.0])}, {"k": rt.to_tensor([1], dtype="int64")})


def test_python_state_ignores_tensor_values_only():
    a, b = _layer(), _layer()
    b.seen.set_value(rt.ones([2]))
    assert python_state(snapshot(a)) == python_state(snapshot(b))
    b.calls = 1
    assert python_state(snapshot(a)) != python_state(snapshot(b))
