"""Errors met writing Paddle's own dygraph-to-static tests as corpus cases: what a converted
function cannot do raises at the user's line and never names an internal value."""
import pytest

import d2s
import runtime as rt

from .messages import assert_at_user_line


def backward_to_argument(x):
    x.stop_gradient = False
    loss = (rt.tanh(x) * 2).mean()
    loss.backward()
    return loss, x.grad


def test_backward_with_an_argument_needing_a_gradient_names_no_internal_value():
    with pytest.raises(RuntimeError, match="argument") as info:
        d2s.to_static(backward_to_argument)(rt.ones([2, 3]))
    text = assert_at_user_line(info.value, __file__,
                               backward_to_argument.__code__.co_firstlineno + 3)
    assert "'x'" in text and "backward()" in text


def grad_of_leaf_made_inside(x):
    w = rt.ones([3])
    w.stop_gradient = False
    (x * w).sum().backward()
    return w.grad


def test_grad_of_a_leaf_made_inside_the_function_is_refused_at_the_line():
    with pytest.raises(d2s.ConversionError, match="made in the converted code as a leaf that "
                       "needs a gradient") as info:
        d2s.to_static(grad_of_leaf_made_inside)(rt.ones([3]))
    assert_at_user_line(info.value, __file__, grad_of_leaf_made_inside.__code__.co_firstlineno + 4)


def text_or_tensor(x):
    if x > 0:
        return "not a tensor"
    return x + 2


def test_a_text_against_a_tensor_in_branches_shows_the_tensor_by_dtype_and_shape():
    with pytest.raises(d2s.ConversionError, match="string chosen by a tensor condition") as info:
        d2s.to_static(text_or_tensor)(rt.to_tensor([1.0]))
    text = assert_at_user_line(info.value, __file__, text_or_tensor.__code__.co_firstlineno + 1)
    assert "'not a tensor' in the if branch, a float32 tensor of shape [1] in the else" in text
