"""More idioms of Paddle's dygraph-to-static loop and list tests (test_loop.py,
test_for_enumerate.py, test_list.py), in new words: a name read on a later trip before the trip
that binds it, in-place `increment` in a loop, `range` with negative and variable steps, loops
over `x.numpy()` and its enumeration (with `start`, `break`, `continue`), `for a, b, c in
tensor`, `for t in enumerate(...)`, nested unpacking of enumerated rows, a list of tensors grown
in a graph loop then iterated, sliced, popped or stacked, and a dict of lists read at `[-2]`
while an enumeration over a tensor grows it."""
import numpy as np

import runtime as paddle

from .registry import case, f32, i64, neg, pos, rand


@case(args=[(3,), (1,), (5,)])
def name_bound_on_a_later_trip(max_len):
    x = paddle.full([1, 2], 1, dtype="int32")
    s = 0
    for i in range(max_len):
        if i > 1:
            s = a  # noqa: F821  (bound on an earlier trip, as in Paddle's test)
        a = i + 1  # noqa: F841
        q, _ = x.shape
    return paddle.full([1], s + q, dtype="int32")


@case(args=[(i64([3]),), (i64([0]),)])
def increment_in_tensor_range(n):
    ret = paddle.zeros([1], dtype="float32")
    for _ in range(n):
        ret = paddle.zeros([1], dtype="float32")
        paddle.increment(ret, value=2.0)
    return ret


@case(args=[(2,), (-2,), (-3,)])
def range_with_variable_negative_step(step):
    ret = paddle.zeros([1], dtype="float32")
    start, stop = (10, 1) if step < 0 else (1, 10)
    for i in range(start, stop, step):
        paddle.increment(ret, value=float(i))
    return ret


@case(args=[(i64([3]),), (i64([1]),)])
def var_made_in_tensor_range_loop(n):
    ret = paddle.ones([2, 3], dtype="float64")
    for i in range(n):
        ret = paddle.zeros([2, 3], dtype="float64") + i
    return ret


@case(args=[(i64([2]), i64([3])), (i64([1]), i64([0]))])
def nested_tensor_ranges_with_python_inner(two, three):
    a = 0
    for j in range(two):
        for i in range(4):
            a = 2 + j
    b = paddle.ones([1])
    for i in range(three):
        b = paddle.zeros([1]) + i
    return a, b


@case(args=[(i64([4]),), (i64([12]),)])
def while_condition_reads_shape_of_loop_var(x):
    a = paddle.zeros([1], dtype="float32")
    i = paddle.assign(x)
    s = i.shape
    while i < 10 and s[0] >= 1:
        a += i.shape[0]
        i += 1
    return a


@case(args=[(i64([-8]),), (i64([3]),), (i64([-2]),)])
def while_or_of_many_tensor_conditions(x):
    i = paddle.assign(x)
    while x <= -1 or x < -3 or (x < -7 or x < -5) or (x >= 0 and x < 6):
        i = i + x
        x = x + 1
    return i


@case(args=[(i64([4]),), (i64([0]),)])
def for_over_numpy_of_argument(x):
    z = paddle.full([1], 0, dtype="int32")
    for i in range(x.numpy().item()):
        z = z + i
    return z


@case(args=[(i64([1, 2, 3, 4, 5]),), (i64([7, 8]),)])
def enumerate_numpy_with_start_break(xs):
    y = paddle.full([1], 0, dtype="int32")
    z = paddle.full([1], 0, dtype="int32")
    for i, v in enumerate(xs.numpy(), 1):
        y = y + i
        z = z + v
        if i > 2:
            break
    return y, z


@case(args=[(i64([1, 2, 3, 4, 5]),), (i64([7, 8]),)])
def enumerate_numpy_continue(xs):
    y = paddle.full([1], 0, dtype="int32")
    z = paddle.full([1], 0, dtype="int32")
    for i, v in enumerate(xs.numpy()):
        y = y + i
        if i > 2:
            continue
        z = z + v
    return y, z


@case(args=[(i64([1, 2, 3, 4, 5]),), (i64([7, 8]),)])
def enumerate_tensor_sum_index_and_item(xs):
    y = paddle.full([1], 0, dtype="int64")
    z = paddle.full([1], 0, dtype="int64")
    for i, v in enumerate(xs):
        y = y + i
        z = z + v
    return y, z


@case(args=[(i64([2, 3]),), (i64([0, 1, 4]),)])
def enumerate_tensor_with_nested_tensor_range(xs):
    x = paddle.full([1], 0, dtype="int64")
    for i, num in enumerate(xs):
        for _ in range(num):
            x = x + num
    return x


@case(args=[(i64([1, 2, 3]),), (i64([4, 5]),)])
def for_over_tensor_slice_from_zero(xs):
    z = paddle.full([1], 0, dtype="int64")
    for v in xs[0:]:
        z = z + v
    return z


@case(args=[(i64([[1, 2, 3], [4, 5, 6], [7, 8, 9]]),), (i64([[1, -1, 0]]),)])
def for_unpacks_three_columns_of_rows(z):
    a_result = paddle.zeros([1], dtype="int64")
    b_result = paddle.zeros([1], dtype="int64")
    c_result = paddle.zeros([1], dtype="int64")
    for a, b, c in z:
        a_result += a
        b_result += b
        c_result += c
    return a_result, b_result, c_result


@case(args=[(pos(5),), (neg(5),)])
def enumerate_kept_as_tuple(x):
    xs = [x, x * 2, x - 1]
    out = paddle.zeros([5])
    for t in enumerate(xs):
        out += t[1] * t[0]
        if t[0] == 1 and float(x.sum()) > 0:
            out = out - 1
    return out


@case(args=[(rand(5),), (f32([1, 2, 3, 4, 5]),)])
def enumerate_unpacks_five_items_of_rows(x):
    xs = [x, x + 1, x * 2]
    acc = paddle.zeros([1])
    for i, (a, b, c, d, e) in enumerate(xs):
        acc += a + b * i + c - d + e
        if acc > 20:
            break
    return acc


@case(args=[(3,), (1,)])
def layer_style_clone_of_rows_in_python_range(n):
    y = paddle.arange(60, dtype="float32").reshape([10, 2, 3])
    z = []
    for i in range(n + 2 - n * 0 - 2):
        z.append(y[i].clone())
    return z


@case(args=[(i64([3]),), (i64([5]),)])
def list_grown_in_tensor_range_then_iterated(n):
    a = []
    for i in range(n):
        a.append(paddle.full([1], 2, dtype="int64") + i)
    y = paddle.full([1], 0, dtype="int64")
    z = paddle.full([1], 0, dtype="int64")
    for i, v in enumerate(a):
        y = y + i
        z = z + v
    return y, z


@case(args=[(i64([3]),), (i64([6]),)])
def tensor_array_sliced_then_read(n):
    a = []
    for i in range(n):
        a.append(paddle.to_tensor(i))
    t = a[1:3]
    return a[2], t[0]


@case(args=[(rand(3, 4),), (rand(5, 4),)])
def list_grown_over_shape_loop_subscript(x):
    iter_num = paddle.shape(x)[0]
    a = []
    i = 0
    while i < iter_num:
        x = x + 1
        a.append(x)
        i += 1
    out = paddle.concat(a)
    return out[0], out.shape[0]


@case(args=[(i64([1, 2, 3]), 3), (i64([4, 5, 6]), 0)])
def list_popped_in_numpy_range(x, iter_num):
    n = paddle.full([1], iter_num, dtype="int32")
    a = [x, x * 3]
    b = [x - 1, x + 1]
    for i in range(n):
        a.append(x + i)
        b.append(x * 2)
    one = paddle.ones([1], dtype="int32")
    for i in range(one.numpy()[0]):
        item = a.pop()
    return a[0], item, b[1], len(b)


@case(args=[(i64([1, 2]), 3), (i64([4, 5]), 4)])
def list_popped_on_odd_trips_of_tensor_while(x, iter_num):
    n = paddle.full([1], iter_num, dtype="int32")
    a = []
    b = [x]
    b.append(x)
    b.pop()
    i = 0
    while i < n:
        a.append(x + i)
        b.append(x - i)
        i += 1
        if i % 2 == 1:
            a.pop()
    return a[0], b[2]


@case(args=[(i64([1, 2]), 3), (i64([4, 5]), 1)])
def list_stacked_after_numpy_bounded_while(x, iter_num):
    n = paddle.full([1], iter_num, dtype="int32")
    a = []
    i = 0
    while i < n.numpy()[0]:
        a.append(x + i)
        i += 1
    return paddle.stack(a, axis=1)


@case(args=[(10,), (4,)])
def dict_of_list_read_behind_while_enumerating(n):
    feats = {}
    feats["key"] = []
    idx = paddle.arange(0, n)
    feat = paddle.to_tensor(-1, dtype="int64")
    for i, v in enumerate(idx):
        if i > 1:
            feat = feats["key"][-2]
        feats["key"].append(v)
    return feat


@case(args=[(f32([2.0, 3.0, 4.0]), i64([1])), (f32([2.0, 3.0, 4.0]), i64([0]))])
def list_of_rows_indexed_by_tensor_if(x, index):
    y = paddle.nn.functional.relu(x)
    a = []
    for i in y:
        a.append(i)
    if index > 0:
        res = a[0] * a[0]
        y = y + 1
    else:
        res = a[-1] * a[-1]
        y = y - 1
    return a[-1] * res * y[0]


@case(args=[(i64([3]),), (i64([0]),)])
def list_comprehension_in_tensor_range(n):
    arr = [1, 2, 3]
    a = 1
    res = [0]
    x = 0
    for j in range(n):
        res = [v + a for v in arr]
        x = 1
    b = [v * 2 for v in arr]
    return res, x, b


@case(args=[(np.int64(3),), (np.int64(0),)])
def numpy_int_bounded_for_sum(n):
    z = paddle.zeros([1], dtype="float32")
    for i in range(n):
        z = z + float(i) * 0.5
    return z
