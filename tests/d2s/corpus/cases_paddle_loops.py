"""The idioms of Paddle's dygraph-to-static loop tests (test_loop.py, test_for_enumerate.py,
test_break_continue.py), in new words: `while` on a one-element tensor, conditions joining
tensors and Python numbers with `and`/`or`/`not`, a lambda made in the body, attributes of a
local object set in a graph loop, `range` of a tensor, `for` over tensors, lists, zips and
enumerations (with `start`), and `break`/`continue` in every kind of loop."""
import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, rand


@case(args=[(i64([2]),), (i64([15]),)])
def while_one_element_tensor(x):
    acc = paddle.assign(x)
    while x < 9:
        acc = acc + x
        x = x + 1
    return acc


@case(args=[(f32([1.0]), 1), (f32([1.0]), 6)])
def while_python_not_and(x, a):
    while not a > 4 and a > 0:
        x = x * 2
        a = a + 1
    return x, a


@case(args=[(i64([3]),), (i64([20]),)])
def while_lambda_made_in_body(x):
    acc = paddle.assign(x)

    def clip_neg(v):
        return F.relu(v)

    while x < 8:
        add = lambda a, b: a + b
        acc = add(acc, x)
        x = x + 1
    return clip_neg(acc.astype("float32") - 20)


@case(args=[(i64([4]), 1), (i64([4]), None)])
def while_conditional_expression_with_none(x, flag):
    acc = paddle.assign(x) if x is not None else x + 1
    while x < 7:
        acc = acc + x if flag is not None else x - acc
        x = x + 1
    return acc


@case(args=[(5,), (0,)])
def for_creates_tensor_in_body(n):
    out = paddle.full([1], -1.0)
    for _ in range(n):
        out = paddle.zeros([1])
        paddle.increment(out, value=3.0)
    return out


@case(args=[(4,), (3,)])
def for_reads_name_made_on_earlier_trip(n):
    x = paddle.full([1, 3], 1, dtype="int32")
    prev = 0
    for i in range(n):
        if i > 1:
            prev = last  # noqa: F821 (set on an earlier trip)
        last = i * 10  # noqa: F841
        rows, cols = x.shape  # noqa: RUF059
    return paddle.full([1], prev + cols, dtype="int32")


@case(args=[(1,), (3,)])
def for_negative_and_odd_steps(k):
    total = paddle.zeros([1])
    for i in range(12, 1, -3):
        paddle.increment(total, value=float(i))
    for j in range(1, 9, 2 * k):
        total = total + j
    return total


@case(args=[(3,), (1,)])
def for_break_counts_python(stop):
    count = 0
    for i in range(5):
        if i == stop:
            break
        count += 1
    return count


@case(args=[(f32([-9.0]),), (f32([2.0]),), (f32([20.0]),)])
def while_or_and_chain(x):
    acc = paddle.assign(x)
    while x <= -8 or x < -10 or (x < -20 or x < -15) or (x >= 0 and x < 6):
        acc = acc + x
        x = x + 1
    return acc


@case(args=[(f32([3.0]),), (f32([30.0]),)])
def while_tensor_and_python_counter(x):
    acc = paddle.assign(x)
    a = 1
    while x < 8 and (a < 5 or a > 0) or a < -1 or not x > -1:
        acc = acc + x
        x = x + 1
        a = a + 1
    return acc


@case(args=[(i64([5]),), (i64([12]),)])
def while_sets_attributes_of_local_object(i):
    class Holder:
        def __init__(self):
            self.base = 2
            self.zero = 7
            self.value = paddle.full([1], -1.0)

    h = Holder()
    while i < 10:
        h.zero = paddle.zeros([1])
        h.value = h.zero + h.base + i.astype("float32")
        i += 1
    return h.value


@case(args=[(f32([1.0, 2.0]),), (f32([12.0, 13.0]),)])
def while_condition_reads_static_shape(x):
    acc = paddle.zeros([1])
    s = x.shape
    while x[0] < 5 and s[0] >= 1:
        acc += s[0]
        x = x + 1
    return acc


@case(args=[(3,), (0,)])
def for_range_of_tensor_sets_attributes(n):
    class Holder:
        def __init__(self):
            self.base = 4
            self.value = paddle.full([1], -2.0)

    h = Holder()
    limit = paddle.full([1], n, dtype="int32")
    for _ in range(limit):
        h.zero = paddle.zeros([1])
        h.value = h.zero + h.base
    return h.value


@case(args=[(2, 3), (0, 1)])
def nested_for_over_tensor_ranges(outer, inner):
    two = paddle.full([1], outer, dtype="int32")
    three = paddle.full([1], inner, dtype="int32")
    a = 0
    for j in range(two):
        for _ in range(4):
            a = 2 + j
    b = paddle.full([1], -1.0)
    for _ in range(three):
        b = paddle.zeros([1]) + a
    return b


class SumOverLayerDict(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerDict({
            "narrow": nn.Conv2D(2, 2, 1),
            "wide": nn.Conv2D(2, 2, 3, padding=1),
            "pool": nn.AvgPool2D(3, stride=1, padding=1),
        })

    def forward(self, x):
        out = 0
        for name in self.blocks:
            out += self.blocks[name](x)
        if out.mean() > 0:
            out = F.relu(out)
        return out


case(args=[(rand(1, 2, 4, 4) + 3,), (rand(1, 2, 4, 4) - 3,)],
     batch=lambda b: (rand(b, 2, 4, 4),))(SumOverLayerDict)


# ---- for: the iterables of test_for_enumerate.py -----------------------------------------
@case(args=[(i64([3]),), (i64([0]),)])
def for_range_of_argument_tensor(n):
    z = paddle.zeros([1], dtype="int64")
    for i in range(n):
        z = z + i
    return z


@case(args=[([2, 5, 7],), ([],)])
def for_over_python_list(values):
    z = paddle.zeros([1], dtype="int64")
    for v in values:
        z = z + v
    return z


@case(args=[([4, 1, 3],), ([9],)])
def for_enumerate_python_list(values):
    z = paddle.zeros([1], dtype="int64")
    for i, v in enumerate(values):
        z = z + v * (i + 1)
    return z


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),), (f32([[-1.0, 0.5]]),)])
def for_over_tensor_rows(x):
    z = paddle.zeros([2])
    for row in x:
        if row.sum() > 0:
            z = z + row
        else:
            z = z - row
    return z


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([4.0]),)])
def for_enumerate_tensor_with_start(x):
    z = paddle.zeros([1])
    for i, v in enumerate(x, 2):
        z = z + v * i
    return z


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0]]),), (f32([[0.5, 0.5], [1.0, 1.0], [2.0, 0.0]]),)])
def for_enumerate_tensor_continue_break(x):
    total = paddle.zeros([2])
    for i, row in enumerate(x):
        if i == 0:
            continue
        if i > 1:
            break
        total = total + row * 3
    return total


@case(args=[(f32([1.0, 2.0, 3.0]), f32([4.0, 5.0, 6.0])), (f32([1.0]), f32([-1.0]))])
def for_zip_of_tensors(a, b):
    out = paddle.zeros([1])
    for u, v in zip(a, b):
        out = out + u * v
    return out


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0]]),), (f32([[5.0, 6.0]]),)])
def for_enumerate_zip_tuples(x):
    pairs = [(x, x * 2), (x + 1, x - 1)]
    out = paddle.zeros(x.shape)
    for i, (p, q) in enumerate(pairs):
        if i > 0 and x.shape[0] > 1:
            out = out + p * q
        else:
            out = out - q
    return out


@case(args=[({"a": f32([1.0]), "b": f32([2.0])},), ({"w": f32([-3.0])},)])
def for_over_dict_items(feeds):
    out = paddle.zeros([1])
    for name, value in feeds.items():
        if name == "a":
            out = out + value * 10
        else:
            out = out + value
    return out


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0]]),), (f32([[1.0], [2.0], [3.0]]),)])
def for_over_list_of_tensor_rows(x):
    rows = paddle.split(x, x.shape[0], axis=0)
    out = []
    for r in rows:
        out.append(r * 2)
    return paddle.concat(out, axis=0)


@case(args=[(f32([2.0, 3.0, 1.0]), 2), (f32([-2.0, 3.0, 1.0]), 5)])
def for_range_of_tensor_numel(x, extra):
    """`range` over a size read from a tensor (`paddle.numel`), plus a Python offset."""
    out = paddle.zeros([1])
    for i in range(paddle.numel(x)):
        if x[i] > 0:
            out = out + x[i] * (i + extra)
    return out


# ---- break / continue -------------------------------------------------------------------
@case(args=[(i64([2]),), (i64([11]),)])
def continue_in_for_python_range(x):
    x = paddle.assign(x)
    for i in range(10):
        x += 1
        if i > 5:
            continue
            x += 100  # noqa: unreachable, as in Paddle's test
        if x > 12:
            continue
        x += i
    return x


@case(args=[(i64([1]),), (i64([40]),)])
def continue_on_tensor_condition(x):
    for i in range(8):
        x = x + 1
        if x > 6:
            continue
        x = x + i
    return x


@case(args=[(i64([2]),), (i64([8]),)])
def break_in_while_tensor_condition(x):
    i = paddle.full([1], 0, dtype="int64")
    while i < 10:
        i = i + 1
        if x + i > 12:
            break
        x = x + i
    return x, i


@case(args=[(i64([3]),), (i64([50]),)])
def while_true_with_break(x):
    i = paddle.zeros([1], dtype="int64")
    while True:
        if i > 6:
            break
        if x > 20:
            break
        x = x + i
        i = i + 1
    return x


@case(args=[(f32([1.0]),), (f32([3.0]),)])
def break_then_continue_nested(x):
    for i in range(4):
        for j in range(4):
            if x * j > 5:
                break
            if j == 1:
                continue
            x = x + 0.5
        x = x * 1.1
    return x


@case(args=[(f32([0.0]),), (f32([10.0]),)])
def break_in_for_else(x):
    for i in range(5):
        x = x + 1
        if x > 3:
            x = x * 2
            break
    else:
        x = -x
    return x


@case(args=[(f32([1.0]),), (f32([-2.0]),)])
def loop_with_break_and_return_value(x):
    total = 0.0
    for i in range(6):
        if x * i > 3:
            break
        total += 1.5
    return x + total
