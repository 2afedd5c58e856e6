"""while loops: tensor conditions with data-dependent trip counts (including zero), Python
conditions, while-else, nested loops, and branches inside loops."""
import numpy as np

import runtime as rt

from .registry import case, f32, f64, i64, neg, pos, signed


@case(args=[(f32([20.0, 1.0]),), (f32([6.0, 1.0]),), (f32([0.5, 0.25]),)])
def double_until_large(x):
    n = 0
    while rt.max(x) < 10:
        x = x * 2
        n += 1
    return x, n


@case(args=[(pos(3), 0), (pos(3), 1), (pos(3), 4)])
def python_counter_loop(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x


@case(args=[(f32([1.0]),), (f32([3.0]),), (f32([40.0]),)])
def halve_until_small(x):
    v = rt.sum(x)
    steps = 0
    while v > 1:
        v = v / 2
        steps = steps + 1
    return v, steps


@case(args=[(pos(2), i64(0)), (pos(2), i64(1)), (pos(2), i64(3))])
def while_else_no_break(x, n):
    i = rt.zeros([], dtype="int64")
    while i < n:
        x = x * 2
        i = i + 1
    else:  # noqa: PLW0120  (while-else without break is what this case is about)
        x = x + 100
    return x, i


@case(args=[(f32([1.0]),), (f32([30.0]),), (f32([-1.0]),)])
def while_else_with_break(x):
    i = 0
    while i < 4:
        if rt.sum(x) > 10:
            break
        x = x * 3
        i += 1
    else:
        x = -x
    return x


@case(args=[(f32([1.0]),), (f32([100.0]),), (f32([0.5]),)])
def fibonacci_until_limit(limit):
    a = rt.zeros([1])
    b = rt.ones([1])
    while b < limit:
        a, b = b, a + b
    return a, b


@case(args=[(f32([2.0]), f32([3.0])), (f32([0.5]), f32([3.0])), (f32([2.0]), f32([0.1]))])
def nested_tensor_whiles(x, y):
    total = rt.zeros([1])
    i = rt.zeros([1])
    while i < x:
        j = rt.zeros([1])
        while j < y:
            total = total + i * j + 1
            j = j + 1
        i = i + 1
    return total


@case(args=[(pos(2), 0), (pos(2), 3), (neg(2), 3)])
def python_and_tensor_condition(x, n):
    i = 0
    while i < n and rt.sum(x) < 20:
        x = x * 2
        i += 1
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([20.0, 1.0]),), (f32([3.0, 0.0]),)])
def while_true_tensor_break(x):
    while True:
        x = x * 2
        if rt.max(x) > 10:
            break
    return x


@case(args=[(f32([3.0]),), (f32([0.0]),), (f32([-2.0]),)])
def accumulate_into_existing(x):
    acc = rt.zeros([1])
    k = x
    while k > 0:
        acc = acc + k
        k = k - 1
    return acc


@case(args=[(f32([4.0, 1.0]),), (f32([0.0, 1.0]),)])
def setitem_in_loop(x):
    x = x.clone()
    while x[0] > 0:
        x[0] = x[0] - 1
        x[1] = x[1] * 2
    return x


@case(args=[(pos(3, 2),), (pos(1, 2),)])
def shape_bound_python_loop(x):
    i = 0
    s = rt.zeros([2])
    while i < x.shape[0]:
        s = s + x[i]
        i += 1
    return s


@case(args=[(f32([1.0]),), (f32([7.0]),), (f32([-5.0]),)])
def branches_inside_loop(x):
    i = 0
    y = x
    while i < 3:
        if rt.sum(y) > 5:
            y = y - 4
        elif rt.sum(y) > 0:
            y = y * 2
        else:
            y = y + 3
        i += 1
    return y


@case(args=[(pos(2),), (neg(2),)])
def loop_inside_branch(x):
    if rt.mean(x) > 0:
        s = rt.sum(x)
        while s < 50:
            s = s * 3
    else:
        s = rt.sum(x)
        while s > -50:
            s = s * 2
    return s


@case(args=[(f32([5.0]),), (f32([0.0]),), (f32([1.0]),)])
def zero_trip_temporary(x):
    y = x + 1
    while x > 0:
        tmp = x - 1
        x = tmp
        y = y * 2
    return x, y


@case(args=[(f32([0.2, 0.3]),), (f32([5.0, 0.0]),)], batch=lambda b: (signed(b, 2),))
def loop_over_reduced_norm(x):
    while rt.sum(x * x) < 4:
        x = x * 1.5 + 0.1
    return x


@case(args=[(i64(7),), (i64(1),), (i64(6),)])
def collatz_steps(n):
    steps = rt.zeros([], dtype="int64")
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps = steps + 1
    return steps


@case(args=[(f32([1.0, 2.0]), f32([0.5])), (f32([1.0, 2.0]), f32([5.0]))])
def two_tensors_in_condition(x, tol):
    err = rt.max(rt.abs(x))
    it = 0
    while err > tol and it < 10:
        x = x * 0.5
        err = rt.max(rt.abs(x))
        it += 1
    return x, err


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def accumulate_from_python_zero(x):
    total = 0
    while rt.sum(x) > 0 and total < 10:
        total = total + x.sum()
    return total


@case(args=[(f32([1.0]),), (f32([5.0]),), (f32([0.5]),)])
def shape_grows_in_loop(x):
    while rt.sum(x) < 8:
        x = rt.concat([x, x])
    return x.sum(), x.shape[0]


@case(args=[(f32([1.0]),), (f32([20.0]),)])
def name_first_bound_inside_loop(x):
    k = 1
    while True:
        y = x * k
        k += 1
        if rt.sum(y) > 10:
            break
    return y, k


@case(args=[(f32([2.0]),), (f32([-1.0]),)])
def python_float_state_tensor_condition(x):
    t = 0.0
    while t < rt.sum(x):
        t = t + 0.5
    return t


@case(args=[(pos(3),), (neg(3),)])
def augmented_assign_in_loop(x):
    acc = rt.zeros([3])
    i = 0
    while rt.sum(acc) < 5 and i < 4:
        acc += x
        i += 1
    return acc


@case(args=[(f32([1.0]), True), (f32([1.0]), False), (f32([50.0]), True)])
def conditional_expression_in_loop_test(x, use_sum):
    while (x.sum() if use_sum else x.mean() * 4) < 10:
        x = x * 2
    return x


@case(args=[(f32([1.0]),), (f32([30.0]),)])
def nested_def_in_loop_body(x):
    i = 0
    while rt.sum(x) < 20 and i < 5:
        def bump(t):
            return t * 3 if rt.sum(t) < 5 else t + 1

        x = bump(x)
        i += 1
    return x


@case(args=[(f32([1.0]),), (f32([20.0]),)])
def tuple_as_loop_state(x):
    state = (x, 0)
    while state[0].sum() < 10:
        state = (state[0] * 2, state[1] + 1)
    return state


def _magnitude(t):
    if rt.mean(t) > 0:
        return rt.sum(t)
    return -rt.sum(t)


@case(args=[(f32([1.0, 1.0]),), (f32([-1.0, -1.0]),), (f32([20.0, 1.0]),)])
def helper_with_if_in_loop_test(x):
    while _magnitude(x) < 10:
        x = x * 2
    return x


@case(args=[(pos(2),), (neg(2),)])
def list_items_updated_in_tensor_loop(x):
    xs = [x, x * 2]
    i = 0
    while rt.sum(xs[0]) < 10 and i < 4:
        xs[0] = xs[0] + xs[1]
        i += 1
    return xs[0], xs[1]


@case(args=[(np.array([3, 4], dtype=np.int32),), (np.array([0, -1], dtype=np.int32),)])
def int32_counter(x):
    c = rt.zeros([], dtype="int32")
    while c < x.sum():
        c = c + 2
    return c


@case(args=[(f64([0.25, 0.5]),), (f64([-3.0, 1.0]),)])
def float64_state(x):
    s = rt.zeros([], dtype="float64")
    while s < 4 and rt.mean(x) > 0:
        s = s + rt.sum(x) * 1.5
    return s, x * 0.1


@case(args=[(pos(2), f32([1, 0]) > 0), (pos(2), f32([0, 0]) > 0)])
def bool_mask_input(x, mask):
    if rt.any(mask):
        return rt.where(mask, x, -x)
    return x * 0


@case(args=[(f32([1.0]),), (f32([-1.0]),), (f32([40.0]),)])
def python_for_with_tensor_if_inside_tensor_while(x):
    while rt.sum(x) < 30 and rt.sum(x) > 0:
        for k in range(3):
            if rt.sum(x) > 5:
                x = x + k
            else:
                x = x * 2
    return x
