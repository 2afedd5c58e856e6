"""Item 10: tensor predicates in every position Python allows, eager against static over
inputs that take different paths through one program: a walrus inside `and`/`or`, `match`
guards, comprehension filters (a clear error: the list's length would depend on data),
conditional expressions, `LayerList[i]` with a tensor index (a `switch_case`; gradients reach
the chosen layer only, checked against finite differences), and `and`/`or` between a float
tensor and a bool tensor (truth values in conditions; a clear error as a value)."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError
from tests.finite_differences import numeric_grad

ROWS = [[1.0, 2.0], [-1.0, 0.5], [0.0, 0.0], [3.0, -4.0]]


def _same(fn, rows=ROWS, programs=1):
    static = d2s.to_static(fn)
    for row in rows:
        x = rt.to_tensor(np.asarray(row, "float32"))
        want, got = fn(x), static(x)
        np.testing.assert_allclose(np.asarray(got.numpy()), np.asarray(want.numpy()),
                                   rtol=1e-6)
    assert len(static.program_cache) == programs


def walrus_in_or(x):
    if x.sum() < -5 or (peak := x.max()) > 1:
        return x * 2
    return x - 1


def walrus_in_and_then_read(x):
    m = rt.zeros([])
    if x.mean() > 0 and (m := x.max() - x.min()) > 0.5:
        return x * m
    return x + m


def float_and_bool(x):
    total = x.sum()  # float32
    positive = x.max() > 1  # bool
    if total and positive:
        return x * 2
    if not (total or positive):
        return x - 1
    return x * 0.5


MODES = {"double": 2.0, "half": 0.5}


def match_guard(x, mode="double"):
    match mode:
        case "double" if x.sum() > 0:
            y = x * MODES[mode]
        case "double" | "half" if x.min() < -0.5:
            y = x - 10.0
        case _:
            y = x + 1.0
    return y


def conditional_expression(x):
    scale = 2.0 if x.sum() > 0 else -1.0
    return x * scale if x.max() > 1 else x - scale


@pytest.mark.parametrize("fn", [walrus_in_or, walrus_in_and_then_read, float_and_bool,
                                match_guard, conditional_expression])
def test_tensor_predicates_match_eager(fn):
    _same(fn)


def test_comprehension_filter_on_a_tensor_converts():
    """The items are appended each under its own `if`: a tensor array (see
    test_comprehension_filters.py); a dict comprehension's filter stays a clear error."""
    def keep_large(x):
        parts = [x * i for i in range(3) if x.sum() > i]
        return rt.stack(parts).sum(axis=0)
    static = d2s.to_static(keep_large)
    for x in (rt.ones([2]), rt.ones([2]) * 0.2, rt.ones([2]) * 3):
        np.testing.assert_allclose(static(x).numpy(), keep_large(x).numpy())

    def keyed(x):
        return {i: x * i for i in range(3) if x.sum() > i}[0]
    with pytest.raises(ConversionError, match="comprehension filter") as info:
        d2s.to_static(keyed)(rt.ones([2]))
    assert "test_predicates.py" in str(info.value) and "x.sum() > i" in str(info.value)


def test_comprehension_with_python_filter_and_tensor_values_converts():
    def masked(x):
        parts = [rt.where(x > i, x * i, rt.zeros_like(x)) for i in range(4) if i % 2 == 0]
        return parts[0] + parts[1]
    _same(masked)


def test_and_or_of_float_and_bool_as_a_value_is_a_conversion_error():
    def either(x):
        return x.sum() or (x.max() > 1)
    with pytest.raises(ConversionError, match="used as a value") as info:
        d2s.to_static(either)(rt.ones([2]))
    assert "test_predicates.py" in str(info.value)


class Experts(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.experts = rt.nn.LayerList([rt.nn.Linear(3, 2) for _ in range(3)])

    def forward(self, x, which):
        return rt.tanh(self.experts[which](x)).sum()


def test_layer_list_with_a_tensor_index_is_a_switch_case():
    rt.seed(0)
    net = Experts()
    static = d2s.to_static(Experts())
    static.set_state_dict(net.state_dict())
    x = rt.to_tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype("float32"))
    for i in (0, 2, 1, -1):
        which = rt.to_tensor(np.int64(i))
        np.testing.assert_allclose(static(x, which).numpy(), net(x, which).numpy(),
                                   rtol=1e-6)
    assert len(static.forward.program_cache) == 1
    assert "switch_case" in str(static.forward.concrete_program.main_program)
    with pytest.raises(IndexError, match="out of range"):
        static(x, rt.to_tensor(np.int64(3)))


def test_layer_list_tensor_index_gradients_reach_the_chosen_layer_only():
    rt.seed(1)
    static = d2s.to_static(Experts())
    x = rt.to_tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype("float32"))
    static.clear_gradients()
    static(x, rt.to_tensor(np.int64(1))).backward()
    grads = [layer.weight.grad for layer in static.experts]
    assert grads[0] is None or not np.any(grads[0].numpy())
    assert grads[2] is None or not np.any(grads[2].numpy())
    chosen = static.experts[1]
    w = chosen.weight.numpy().astype("float64")
    b = chosen.bias.numpy().astype("float64")
    xs = x.numpy().astype("float64")
    want = numeric_grad(lambda m: float(np.tanh(xs @ m + b).sum()), w)
    np.testing.assert_allclose(grads[1].numpy(), want, rtol=1e-3, atol=1e-4)
