"""More idioms of Paddle's dygraph-to-static shape, return, slice and logic tests
(test_tensor_shape.py, test_return.py, test_slice.py, test_logical.py, test_cast.py,
test_len.py), in new words: shapes aliased, unpacked, sliced and read by `len` in `if`s and
loops, a shape unpacked before a reshape that changes it, returns of different arity behind a
Python-decided `if`, returns inside loops after a `continue`, dead statements after `return`,
a nested function returning from an always-true `if`, lists assigned by index inside tensor
loops, `not`/`and`/`or` mixing tensors and Python numbers, and casts of tensors and numbers."""

import runtime as paddle

from .registry import case, f32, i64, rand


@case(args=[(i64([1, 2, 3, 4, 5]),), (i64([[1, 2], [3, 4]]),)])
def reshape_to_minus_one_and_rank(x):
    y = paddle.reshape(x, shape=(-1, x.shape[0], len(x.shape)))
    if len(x.shape) > 1:
        y = y + 1
    return y


@case(args=[(i64([1, 2, 3, 4, 5]),), (i64([[1, 2, 3], [4, 5, 6]]),)])
def reshape_to_shape_slice(x):
    s = x.shape[0:]
    y = paddle.reshape(x, shape=s)
    if len(s) > 1:
        y = y * 2
    return y


@case(args=[(rand(5, 7),), (rand(2, 3),)])
def unpack_paddle_shape_tensor(x):
    a, b = paddle.shape(x)
    if a > 3:
        x = x * 2
    return paddle.reshape(x, shape=(b, a))


@case(args=[(rand(5, 7),), (rand(2, 3),)])
def paddle_shape_items_in_reshape(x):
    a = paddle.shape(x)[0]
    b = paddle.shape(x)[1]
    if b - a > 1:
        return paddle.reshape(x, shape=(b, a)) + 1
    return paddle.reshape(x, shape=(b, a))


@case(args=[(i64([1, 2, 3]),), (i64([0]),)])
def shape_reads_nested_in_python_if(x):
    res = paddle.reshape(x, [-1, 1])
    x_shape_0 = x.shape[0]
    if x_shape_0 < 2:
        if res.shape[0] > 1:
            res = paddle.full(shape=x.shape, fill_value=2, dtype="int32")
        else:
            res = paddle.full(shape=x.shape, fill_value=3, dtype="int32")
    return res


@case(args=[(i64([1, 2, 3]),), (i64([[1], [2]]),)])
def loops_over_shape_items_and_rank(x):
    res = paddle.full(shape=[1], fill_value=0, dtype="int32")
    for i in range(len(x.shape)):
        res += 1
    i = 1
    x_shape = x.shape
    while len(x_shape) > i:
        res += 10
        i += 1
    j = 1
    while j < x.shape[0]:
        res += 100
        j = j + 2
    return res


@case(args=[(rand(2, 3),), (rand(3, 2),)])
def shape_unpacked_before_reshape(x):
    a, b = x.shape
    x = paddle.reshape(x, shape=(-1, 1))
    if a > b:
        x = -x
    return paddle.reshape(x, shape=(b, a)), x.shape[0]


@case(args=[(i64([1, 2, 3]),), (i64([1]),)])
def len_of_paddle_shape_and_dict_of_shape(x):
    a = {}
    a["shape"] = x.shape[0]
    if len(paddle.shape(x)) > 0 and a["shape"] > 1:
        x = x + a["shape"]
    return x, a


@case(args=[(f32([1.0]),), (f32([-3.0]),)])
def return_after_augmented_assign_in_if(x):
    if x < 0:
        x -= 1
        return -x
    x += 3
    return x


@case(args=[(f32([1.0]),), (f32([-3.0]),)])
def dead_statements_after_return_in_both_branches(x):
    if x > 0:
        x += 100
        return x
        x -= 3
    else:
        x += 66
        return x
        x -= 88


@case(args=[(f32([1.0]), 0), (f32([3.0]), 8)])
def return_from_tensor_while_after_counter(x, start):
    i = paddle.full(shape=[1], dtype="int32", fill_value=start)
    while i < 10:
        i += 1
        if i > 5:
            x += 110
            return x
        x += i.astype("float32") * x
    return x


@case(args=[(f32([1.0]), 4), (f32([2.0]), 12)])
def return_after_continue_in_python_for(x, last):
    for i in range(10):
        if i <= last:
            x += 1
            continue
        else:
            return x + 1000
    return x - 1


def _two_values(x):
    return x * 2, x + 1


def _maybe_two_values(x):
    if False:
        return x + 1, x - 1
    else:
        return _two_values(x)


@case(args=[(rand(3),), (rand(1),)])
def tuple_returned_by_helper_behind_false(x):
    y, z = _maybe_two_values(x)
    if y.shape[0] > 1:
        y = y + 1
    return y, z


@case(args=[(rand(1),), (rand(2),)])
def nested_function_returns_from_true_if(x):
    def pick():
        rr = 0
        if True:
            rr = 1
            return 1
            rr = 2  # noqa: F841  (dead code after return, on purpose)
        else:
            return 4
        return 3

    if x.shape[0] > 1:
        return pick() - x, x.shape[0]
    return pick() + x, x.shape[0]


@case(args=[(rand(2, 2),), (rand(3, 3),)])
def list_set_by_index_in_tensor_while(x):
    a = []
    iter_num = paddle.full([1], 3, dtype="int32")
    i = 0
    while i < iter_num:
        a.append(x)
        i += 1
    i = 0
    while i < iter_num:
        a[i] = paddle.full([2, 2], 2.0) + i
        i += 1
    out = a[0:3]
    if x.shape[0] > 2:
        return out[1] + x.sum()
    return out[1]


@case(args=[(rand(3),), (rand(3) + 5,)])
def list_item_set_in_tensor_if(x):
    a = []
    if x.mean() > 0:
        a.append(x)
    else:
        a.append(paddle.full([3], -1.0))
    if x.mean() > 2:
        a[0] = x
        a[0] = x + 1
    return a[0]


@case(args=[(i64([3]),), (i64([10]),), (i64([0]),)])
def not_of_tensor_then_not_equal(x):
    if not x:
        x = x - 1
    else:
        x = x + 1
    if x != 10:
        x = x - 1
    else:
        x = x + 1
    return x


@case(args=[(i64([3]), 1), (i64([3]), 0), (i64([20]), 0)])
def not_and_or_of_tensor_and_number(x, a):
    if (x < 5 or x > 10) and not a:
        x = x + 1
    elif not x > 2 or a:
        x = x - 1
    else:
        x = x * 2
    return x


@case(args=[(rand(1, 2, 3),), (rand(2, 3),)])
def shape_equality_picks_result(x):
    y = paddle.zeros([1, 2, 3])
    if x.shape == y.shape:
        return y
    if x.shape != y.shape and x.shape != [2, 2]:
        return paddle.ones([1, 2, 3])
    return x


@case(args=[(f32([1.0, 2.0]), i64([2])), (f32([-1.0, 2.0]), i64([0]))])
def assigned_logical_values(x, y):
    a = x.sum() > 1 and y.sum() > 1
    b = x.sum() < 0 or y.sum() > 1
    c = not (x.sum() > 0)
    return a, b, c


@case(args=[(f32([0.7]),), (f32([0.0]),), (f32([-2.5]),)])
def casts_of_one_element(x):
    b = bool(x)
    i = int(x)
    f = float(x)
    if b:
        f = f + 1
    return paddle.to_tensor(b), paddle.to_tensor(i), paddle.to_tensor(f), x.astype("bool")


@case(args=[(1,), (0,)])
def casts_of_python_numbers(v):
    x = int(v * 1.5)
    b = bool(v)
    y = float(x) + 0.5
    if b:
        y = y * 2
    return paddle.to_tensor([x]), b, y


@case(args=[(rand(3, 2),), (rand(1, 4),)])
def len_of_tensor_array_and_slices(x):
    a = []
    for i in range(paddle.shape(x)[0]):
        a.append(x[i])
    n = len(a)
    m = len(x[0])
    return n, m, len(x)
