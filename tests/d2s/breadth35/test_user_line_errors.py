"""Errors that used to lose the user's line or show an internal name (issue 35): a Python
container indexed by a computed value, `round()` of a computed number, a misspelt name, a
name read after a graph loop that ran zero times."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line

SCALES = [0.5, 1.0, 2.0]
HEADS = [{"scale": 0.5}, {"scale": 1.0}, {"scale": 2.0}]  # (objects: no program picks them)
LABEL_WEIGHT = {0: {"w": 1.0}, 1: {"w": 3.0}}


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def scale_by_class(logits):
    cls = int(logits.argmax())
    return logits * HEADS[cls]["scale"]


def weight_by_label(logits):
    return logits * LABEL_WEIGHT[int(logits.argmax())]["w"]


@pytest.mark.parametrize("fn, text", [(scale_by_class, "HEADS[cls]"),
                                      (weight_by_label, "LABEL_WEIGHT[")])
def test_a_python_container_indexed_by_a_computed_value(fn, text):
    x = rt.to_tensor([0.1, 0.9, 0.3])
    np.testing.assert_allclose(fn(x).numpy(), x.numpy() * (1.0 if fn is scale_by_class
                                                           else 3.0))
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(x)
    text_shown = assert_at_user_line(info.value, __file__, line_of(fn, text))
    assert "indexes a Python container" in text_shown
    assert "rt.to_tensor(TABLE)[i]" in text_shown


def table_lookup(logits):
    return logits * rt.to_tensor(SCALES)[logits.argmax()]


def test_the_advice_converts():
    static = d2s.to_static(table_lookup, full_graph=True)
    for v in ([0.1, 0.9, 0.3], [0.8, 0.1, 0.0], [0.0, 0.1, 0.7]):
        x = rt.to_tensor(v)
        want = np.array(v, "float32") * SCALES[int(np.argmax(v))]
        np.testing.assert_allclose(static(x).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(table_lookup(x).numpy(), want, rtol=1e-6)


def rounded_gain(x):
    gain = round(float(x.mean()), 1)
    steps = round(float(x.max()))
    return x * gain, steps


@pytest.mark.parametrize("values", [[1.26, 1.26], [0.25, 0.25], [2.5, 2.5], [-2.5, -1.5],
                                    [3.5, 0.45]])
def test_round_of_a_computed_number_rounds_as_python(values):
    # halves go to the even neighbour, as Python's round: 0.25 -> 0.2, 2.5 -> 2, 3.5 -> 4
    static = d2s.to_static(rounded_gain, full_graph=True)
    x = rt.to_tensor(values, dtype="float64")
    mean, top = float(np.mean(values)), float(np.max(values))
    want_scaled, want_steps = np.array(values) * round(mean, 1), round(top)
    for fn in (rounded_gain, static):
        scaled, steps = fn(x)
        np.testing.assert_allclose(np.asarray(scaled.numpy() if hasattr(scaled, "numpy")
                                              else scaled), want_scaled, rtol=1e-12)
        assert int(steps) == want_steps
    assert len(static.program_cache) == 1


def misspelt(x):
    offset = 1.0  # noqa: F841
    return x + ofset  # noqa: F821


def test_a_name_error_keeps_pythons_suggestion():
    x = rt.to_tensor([1.0])
    with pytest.raises(NameError):
        misspelt(x)
    # (Python prints its suggestion from the frame that raised, which d2s drops)
    with pytest.raises(NameError) as info:
        d2s.to_static(misspelt, full_graph=True)(x)
    text = assert_at_user_line(info.value, __file__, line_of(misspelt, "x + ofset"))
    assert text.count("Did you mean: 'offset'") == 1, text


def last_step(x, n):
    for i in range(n):
        y = x * i
    return y


def test_unbound_after_a_graph_loop_that_ran_zero_times_names_the_loop():
    static = d2s.to_static(last_step, full_graph=True)
    x = rt.to_tensor([1.0, 2.0])
    np.testing.assert_allclose(static(x, rt.to_tensor(3)).numpy(), [2.0, 4.0])
    for fn in (last_step, static):
        with pytest.raises(UnboundLocalError, match="local variable 'y'") as info:
            fn(x, rt.to_tensor(0))
    assert_at_user_line(info.value, __file__, line_of(last_step, "for i in range(n)"))
    np.testing.assert_allclose(static(x, rt.to_tensor(2)).numpy(), [1.0, 2.0])
    assert len(static.program_cache) == 1


def bound_in_one_branch(x):
    if x.sum() > 0:
        label = "positive"
    return x, label


def test_a_name_bound_in_one_branch_names_the_if():
    with pytest.raises(UnboundLocalError) as info:
        d2s.to_static(bound_in_one_branch, full_graph=True)(rt.to_tensor([1.0]))
    assert_at_user_line(info.value, __file__, line_of(bound_in_one_branch, "if x.sum() > 0"))
