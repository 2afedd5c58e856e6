"""More idioms of Paddle's dygraph-to-static control-flow tests (test_break_continue.py,
test_ifelse.py and ifelse_simple_func.py), in new words: `continue` then `break` in a Python
`for` followed by the same in a `for` over a tensor range, a `break` under a tensor test in a
Python `for` whose body then grows the carried value, `break` first in a tensor `while`,
nested loops that `break` on the outer index and `continue` on a tensor test, `if` on
`x is not None and mean > 0`, on a one-element mean, on `.numpy()` of it, a Layer whose
forward branches on `self.training` and a hidden size, conditional expressions inside
`while` conditions, and `else` of a `for` that a tensor `break` skips."""
import runtime as paddle
from runtime import nn

from .registry import case, f32, i64, rand


@case(args=[(f32([0.0]), i64([3])), (f32([1.0]), i64([8]))])
def continue_then_break_in_python_and_tensor_for(x, b):
    for i in range(1, 10, 1):
        if i <= 4:
            x += 1
            continue
        else:
            x += 100
            break
    x += 1000
    a = paddle.full([1], 0, dtype="int64")
    for i in range(b):
        if a <= 4:
            x += 1
            a += 1
            continue
        else:
            x += 10
            break
    return x, a


@case(args=[(f32([0.5]),), (f32([3.0]),)])
def tensor_break_in_python_for_then_grow(x):
    for i in range(10):
        if x.sum() > 5:
            break
        x += 1
        x += i
        if i < 3:
            x = x * 2
    return x


@case(args=[(f32([0.0]), i64([0])), (f32([0.0]), i64([7]))])
def break_first_in_tensor_while(x, i):
    while i < 10:
        if i > 5:
            break
        x += 100
        i += 1
    return x, i


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([-1.0, 0.5, 9.0]),)])
def nested_loops_outer_break_inner_tensor_continue(x):
    total = paddle.zeros([1])
    for i in range(4):
        if i > 2:
            break
        for j in range(3):
            if x[j] < 0:
                continue
            total += x[j] * (i + 1)
    return total


@case(args=[(rand(3),), (None,), (rand(3) - 2,)])
def if_not_none_and_mean(x):
    if x is not None and paddle.mean(x) > 0:
        return x + 1
    if x is None:
        return paddle.zeros([3])
    return x - 1


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def if_on_mean_and_on_its_numpy(x):
    mean = paddle.mean(x)
    if mean:
        x = x + 1
    if mean.numpy() > 0:
        x = x * 2
    if paddle.mean(x).numpy() < 0:
        x = x - 10
    return x


@case(args=[(rand(2, 8),), (rand(2, 32),)])
class BranchesOnTrainingAndWidth(nn.Layer):
    def __init__(self):
        super().__init__()
        self.alpha = 10.0
        self.fc8 = nn.Linear(8, 4)
        self.fc32 = nn.Linear(32, 4)

    def forward(self, x):
        hidden_dim = x.shape[-1]
        if hidden_dim > 16:
            y = self.fc32(x)
        else:
            y = self.fc8(x)
        if self.training:
            y = y * self.alpha
        if y.mean() > 0:
            y = y + 1
        return y


@case(args=[(f32([1.0]), None), (f32([1.0]), 3)])
def conditional_expression_in_while_condition(x, limit):
    i = 0
    while i < (limit if limit is not None else 5) and x < 100:
        x = x * 3
        i += 1
    return x, i


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([1.0, 9.0, 3.0]),)])
def for_else_skipped_by_tensor_break(x):
    found = paddle.to_tensor(-1)
    for i in range(3):
        if x[i] > 5:
            found = paddle.to_tensor(i)
            break
    else:
        found = paddle.to_tensor(99)
    return found


@case(args=[(f32([2.0]),), (f32([-2.0]),)])
def if_else_chain_assigns_different_names(x):
    if x > 1:
        y = x * 2
        z = y + 1
    elif x > -1:
        y = x
        z = x
    else:
        z = -x
        y = z * 3
    return y + z
