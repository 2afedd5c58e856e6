"""break and continue in while and for loops, under tensor and Python conditions, nested,
and both in one loop."""
import runtime as rt

from .registry import case, f32, i64, neg, pos, signed


@case(args=[(f32([1.0]),), (f32([50.0]),), (f32([6.0]),)])
def while_break_tensor(x):
    i = 0
    while i < 5:
        if x > 10:
            break
        x = x * 2
        i += 1
    return x


@case(args=[(f32([1.0, -1.0, 2.0, -2.0]),), (pos(4),)])
def while_continue_tensor(x):
    i = 0
    total = rt.zeros([])
    while i < 4:
        i += 1
        if x[i - 1] < 0:
            continue
        total = total + x[i - 1]
    return total


@case(args=[(f32([1.0, 2.0, 30.0, 4.0]),), (f32([1.0, 2.0, 3.0, 4.0]),)])
def for_range_break_tensor(x):
    s = rt.zeros([])
    for i in range(4):
        if x[i] > 10:
            break
        s = s + x[i]
    return s


@case(args=[(f32([1.0, -2.0, 3.0, -4.0]),), (f32([-1.0, -2.0, -3.0, -4.0]),)])
def for_range_continue_tensor(x):
    s = rt.zeros([])
    for i in range(4):
        if x[i] < 0:
            continue
        s = s + x[i] * 2
    return s


@case(args=[(f32([1.0, -1.0, 5.0, 100.0, 2.0]),), (f32([-1.0, 1.0, 1.0, 1.0, 1.0]),),
            (f32([200.0, 1.0, 1.0, 1.0, 1.0]),)])
def break_and_continue_together(x):
    s = rt.zeros([])
    for i in range(5):
        if x[i] < 0:
            continue
        if x[i] > 50:
            break
        s = s + x[i]
    return s


@case(args=[(f32([1.0]), 2), (f32([1.0]), 10), (f32([100.0]), 10)])
def python_break_in_tensor_while(x, limit):
    i = 0
    while rt.sum(x) < 1000:
        x = x * 3
        i += 1
        if limit < 5:
            break
    return x


@case(args=[(f32([[1.0, 2.0], [30.0, 1.0]]),), (f32([[1.0, 2.0], [3.0, 1.0]]),)])
def nested_inner_break(x):
    total = rt.zeros([])
    for i in range(2):
        for j in range(2):
            if x[i, j] > 10:
                break
            total = total + x[i, j]
    return total


@case(args=[(f32([[1.0, 2.0], [30.0, 1.0]]),), (f32([[1.0, 2.0], [3.0, 1.0]]),),
            (f32([[50.0, 2.0], [3.0, 1.0]]),)])
def nested_outer_break_after_inner(x):
    total = rt.zeros([])
    for i in range(2):
        row_sum = rt.zeros([])
        for j in range(2):
            row_sum = row_sum + x[i, j]
        total = total + row_sum
        if row_sum > 20:
            break
    return total


@case(args=[(f32([[1.0, 1.0], [-5.0, 0.0], [2.0, 2.0]]),), (pos(3, 2),)],
      batch=lambda b: (signed(b, 2),))
def break_over_tensor_rows(x):
    acc = rt.zeros([2])
    for row in x:
        if row.sum() < 0:
            break
        acc = acc + row
    return acc


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def continue_over_list(x, y):
    out = rt.zeros([2])
    for t in [x, y, x + y]:
        if rt.mean(t) < 0:
            continue
        out = out + t
    return out


@case(args=[(f32([1.0]),), (f32([64.0]),)])
def while_true_counted_break(x):
    n = 0
    while True:
        n += 1
        x = x / 2
        if x < 1:
            break
    return x, n


@case(args=[(f32([1.0, 2.0, 3.0, 40.0]), i64(4)), (f32([1.0, 2.0, 3.0, 40.0]), i64(2)),
            (f32([1.0, 2.0, 3.0, 40.0]), i64(0))])
def tensor_bound_break(x, n):
    s = rt.zeros([])
    for i in range(n):
        if x[i] > 10:
            break
        s = s + x[i]
    return s


@case(args=[(pos(3), 1), (pos(3), 3)])
def python_continue_nested(x, skip):
    total = rt.zeros([3])
    for i in range(3):
        for j in range(2):
            if i == skip:
                continue
            if rt.mean(x) * j > 0.5:
                total = total + x
    return total


@case(args=[(f32([3.0]),), (f32([-3.0]),), (f32([0.5]),)])
def while_else_continue(x):
    i = 0
    while i < 3:
        i += 1
        if x < 0:
            x = x + 1
            continue
        x = x * 2
    else:  # noqa: PLW0120  (while-else is what this case is about)
        x = x - 0.5
    return x


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def break_over_enumerate(x, y):
    idx = -1
    for i, t in enumerate([x, y]):
        if rt.sum(t) < 0:
            idx = i
            break
    return idx, x + y


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([5.0, 2.0, 3.0]),)])
def break_value_used_after(x):
    stop = rt.zeros([])
    for i in range(3):
        stop = x[i]
        if x[i] > 4:
            break
    return stop * 10


@case(args=[(pos(2), neg(2)), (neg(2), pos(2))])
def break_in_zip_loop(x, y):
    out = rt.zeros([2])
    for t, w in zip([x, y, x * y], [1.0, 2.0, 3.0]):
        if rt.mean(t) < 0:
            break
        out = out + t * w
    return out


@case(args=[(pos(2),), (neg(2),)])
def continue_over_dict_items(x):
    scales = {"a": 1.0, "b": -1.0, "c": 2.0}
    out = rt.zeros([2])
    for name, s in scales.items():
        if rt.mean(x * s) < 0:
            continue
        out = out + x * s + len(name)
    return out


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([1.0, -2.0, 3.0]),)])
def assert_and_continue_in_loop(x):
    total = rt.zeros([])
    for i in range(3):
        assert rt.abs(x[i]) < 100, "value out of range"
        if x[i] < 0:
            continue
        total += x[i]
    return total


@case(args=[(f32([1.0]),), (f32([4.0]),), (f32([-1.0]),)])
def break_in_nested_tensor_if(x):
    i = 0
    while i < 6:
        if x > 0:
            if x > 5:
                break
            x = x + 2
        else:
            x = x + 3
        i += 1
    return x


@case(args=[(f32([1.0, 5.0, -1.0, 2.0]),), (f32([1.0, 2.0, 3.0, 4.0]),)])
def continue_in_nested_tensor_if(x):
    s = rt.zeros([])
    for i in range(4):
        if x[i] > 0:
            if x[i] > 4:
                continue
            s = s + x[i]
        else:
            s = s - 10
    return s


@case(args=[(pos(2),), (f32([3.0, 4.0]),)])
def break_over_list_by_index(x):
    xs = [x, x * 2, x * 3]
    acc = rt.zeros([2])
    for i in range(len(xs)):
        if rt.sum(xs[i]) > 5:
            break
        acc = acc + xs[i]
    return acc


@case(args=[(f32([1.0]),), (f32([9.0]),)])
def while_not_done_flag(x):
    done = rt.sum(x) > 8
    i = 0
    while not done and i < 5:
        x = x * 2
        done = rt.sum(x) > 8
        i += 1
    return x, done


@case(args=[(f32([1.0]),), (f32([7.0]),), (f32([-2.0]),)])
def while_else_break_in_nested_if(x):
    i = 0
    while i < 3:
        if x > 0:
            x = x + 1
            if x > 6:
                break
        x = x + 2
        i += 1
    else:
        x = x * 100
    return x
