"""More idioms of Paddle's dygraph-to-static `if`/`else` tests (ifelse_simple_func.py), in new
words: early returns of a pair or of a tensor beside None behind tensor `==` tests, an
`elif` of them, `add_n` over a list comprehension behind a constant test, nested tensor `if`s
on `.numpy()` reads whose innermost test compares with a batch size that a Python `if` made a
tensor, and names bound in one branch only then rebound after the `if`."""
import runtime as paddle

from .registry import case, f32, i64, rand


@case(args=[(i64([0]),), (i64([10]),)])
def early_return_pair_or_none(x):
    if x == 0:
        a = paddle.zeros([2, 2])
        b = paddle.zeros([3, 3])
        return a, b
    a = paddle.zeros([2, 2]) + 1
    return a, None


@case(args=[(i64([0]),), (i64([1]),), (i64([10]),)])
def early_returns_in_elif_of_equality_tests(x):
    if x == 0:
        return paddle.zeros([2, 2]), paddle.zeros([3, 3])
    elif x == 1:
        c = paddle.zeros([2, 2]) + 1
        return c, paddle.zeros([3, 3]) + 1
    e = paddle.zeros([2, 2]) + 3
    return e, paddle.zeros([3, 3]) + 3


@case(args=[(rand(2), 5), (rand(2), 1)])
def add_n_of_comprehension_behind_python_test(x, n):
    if n > 2:
        y = paddle.add_n([paddle.full(shape=[2], fill_value=v) for v in range(n)])
    else:
        y = x
    return y


@case(args=[(rand(16, 4) - 2,), (rand(3, 4) - 2,), (rand(3, 4) + 2,), (rand(3, 4) - 12,)])
def nested_numpy_ifs_with_batch_size_tensor(x_v):
    batch_size = 16
    feat_size = x_v.shape[-1]
    bias = paddle.full([feat_size], 1.0)
    if x_v.shape[0] != batch_size:
        batch_size = paddle.shape(x_v)[0]
    if paddle.mean(x_v).numpy() < 0:
        y = x_v + bias
        w = paddle.full([feat_size], 10.0)
        if y.numpy()[0, 0] < 10:
            tmp = y * w
            y = paddle.nn.functional.relu(tmp)
            if paddle.mean(y).numpy() < batch_size:
                y = paddle.abs(y)
            else:
                tmp = paddle.full(y.shape, -1.0)
                y = y - tmp
    else:
        y = x_v - bias
    return y


@case(args=[(f32([1.0, 2.0]),), (f32([9.0, 2.0]),)])
def names_bound_in_one_branch_then_rebound(x):
    y = x + 1
    if paddle.mean(x).numpy() < 5:
        x = x + 1
        z = x + 2
        q = x + 3
    else:
        y = y + 1
        z = x - 2
        q = x * 3
        n = x + 3
    q = q + 1
    n = q + 2
    return n + z + y
