"""return inside branches and loops, several return points, tuples and None."""
import contextlib

import runtime as rt

from .registry import case, f32, neg, pos, signed


@case(args=[(pos(3),), (neg(3),)], batch=lambda b: (signed(b, 3),),
      ref=lambda x: x * 2 if x.mean() > 0 else (x - 1) * 3)
def early_return_in_if(x):
    if rt.mean(x) > 0:
        return x * 2
    y = x - 1
    return y * 3


@case(args=[(pos(2),), (neg(2),)])
def return_in_both_branches(x):
    if rt.sum(x) > 0:
        return x + 1
    else:
        return x - 1


@case(args=[(f32([5.0]),), (f32([1.0]),), (f32([-1.0]),), (f32([-9.0]),)])
def return_in_elif_chain(x):
    if x > 3:
        return x * 3
    elif x > 0:
        return x * 2
    elif x > -5:
        return x
    return -x


@case(args=[(f32([1.0]),), (f32([9.0]),), (f32([-2.0]),)])
def return_inside_while(x):
    i = 0
    while i < 4:
        if x > 8:
            return x - 100
        x = x * 2
        i += 1
    return x


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([1.0, -2.0, 3.0]),)],
      batch=lambda b: (signed(b),))
def return_inside_for_range(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return x * i
    return x + 1


@case(args=[(f32([[1.0, 2.0], [3.0, 4.0]]),), (f32([[1.0, 2.0], [3.0, -4.0]]),),
            (f32([[-1.0, 2.0], [3.0, 4.0]]),)])
def return_from_nested_loops(x):
    for i in range(2):
        for j in range(2):
            if x[i, j] < 0:
                return x[i] * 10
    return x.sum(axis=0)


@case(args=[(pos(2),), (neg(2),)])
def return_tuples_from_branches(x):
    if rt.mean(x) > 0:
        return x, x * 2
    return x - 1, x * 3


@case(args=[(pos(2), True), (pos(2), False)])
def return_none_on_python_path(x, skip):
    if skip:
        return None
    return x * 2


@case(args=[(pos(2),), (neg(2),)])
def bare_return_after_work(x):
    y = x.clone()
    if rt.mean(x) > 0:
        y[0] = 1.0
    return  # noqa: PLR1711  (a bare return is what this case is about)


@case(args=[(pos(3), 0), (pos(3), 2), (neg(3), 2)])
def python_value_or_tensor(x, n):
    if n == 0:
        return 0
    if rt.mean(x) > 0:
        return x.sum() * n
    return x.sum() - n


@case(args=[(f32([2.0]),), (f32([100.0]),), (f32([-1.0]),)])
def return_in_loop_with_else(x):
    i = 0
    while i < 3:
        x = x * 2
        if x > 50:
            return x
        i += 1
    else:  # noqa: PLW0120  (while-else after a return in the loop)
        x = x + 0.5
    return -x


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def return_in_loop_over_list(x, y):
    for t in [x, y]:
        if rt.mean(t) > 0:
            return t * 2
    return x + y


@case(args=[(pos(3),), (neg(3),)])
def return_conditional_expression(x):
    return rt.exp(x) if rt.max(x) < 0 else rt.log(x)


@case(args=[(f32([1.0]),), (f32([40.0]),)])
def return_in_while_true(x):
    while True:
        x = x * 3
        if x > 100:
            return x


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 2.0]),), (f32([1.0, -2.0]),)])
def return_nested_if_in_loop(x):
    out = rt.zeros([])
    for i in range(2):
        if x[i] > 0:
            if i == 1:
                return out + x[i]
            out = out + 10
    return out - 1


@case(args=[(pos(2),), (neg(2),)])
def return_three_values(x):
    m = rt.mean(x)
    if m > 0:
        return m, x - m, x.shape[0]
    return -m, x + m, x.shape[0]


@case(args=[(f32([3.0]),), (f32([-3.0]),)])
def return_before_unreachable_code(x):
    if x > 0:
        return x
    else:
        return -x * 2
    x = x * 100
    return x


@case(args=[(pos(2),), (neg(2),)])
def bound_in_one_branch_other_returns(x):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        return x - 1
    return y + 1


def _first_negative_index(t):
    for i in range(t.shape[0]):
        if t[i] < 0:
            return i
    return -1


@case(args=[(f32([[1.0, -1.0], [2.0, 2.0]]),), (f32([[1.0, 1.0], [-2.0, 2.0]]),)])
def helper_with_early_return_in_loop(x):
    total = rt.zeros([])
    for row in x:
        total = total + _first_negative_index(row)
    return total


@case(args=[(pos(2),), (neg(2),)])
def return_inside_with(x):
    with contextlib.nullcontext():
        if rt.mean(x) > 0:
            return x * 2
    return x - 2


@case(args=[(f32([5.0]),), (f32([2.0]),), (f32([-2.0]),), (f32([-5.0]),)])
def return_three_levels_deep(x):
    if x > 0:
        if x > 3:
            if x > 4:
                return x * 100
            return x * 10
        return x + 1
    elif x > -3:
        return x - 1
    return -x


@case(args=[(pos(2), 2), (neg(2), 2), (pos(2), 0)])
def recursive_tensor_helper(x, depth):
    def step(t, d):
        if d == 0:
            return t
        return step(t * 2 if rt.mean(t) > 0 else t - 1, d - 1)

    return step(x, depth)


@case(args=[(f32([[1.0, 2.0], [-3.0, 1.0]]),), (pos(2, 2),)],
      batch=lambda b: (signed(b, 2),))
def return_row_from_tensor_loop(x):
    for row in x:
        if row.sum() < 0:
            return row
    return x[0]
