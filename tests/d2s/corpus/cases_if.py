"""if / elif / else and conditional expressions on tensor and Python conditions."""
import numpy as np

import runtime as rt

from .registry import case, f32, i64, neg, pos, rand, signed


@case(args=[(pos(3, 4),), (neg(3, 4),)], batch=lambda b: (signed(b, 4),),
      ref=lambda x: x * 2 if x.mean() > 0 else x - 1)
def if_else_assign_both(x):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        y = x - 1
    return y


@case(args=[(f32([2.0, 3.0]),), (f32([0.1, 0.2]),), (f32([-4.0, -5.0]),)])
def if_elif_else(x):
    m = rt.mean(x)
    if m > 1:
        y = x * 10
    elif m > -1:
        y = x + 100
    else:
        y = -x
    return y


@case(args=[(pos(4),), (neg(4),)], ref=lambda x: x + 1 if x.sum() > 0 else x)
def if_without_else(x):
    y = x
    if rt.sum(x) > 0:
        y = y + 1
    return y


@case(args=[(f32([3.0, 4.0]),), (f32([0.5, 0.5]),), (f32([-3.0, -4.0]),), (f32([-0.5, -0.1]),)])
def nested_if(x):
    if rt.mean(x) > 0:
        if rt.max(x) > 2:
            y = x * 3
        else:
            y = x * 4
    else:
        if rt.min(x) < -2:
            y = x - 3
        else:
            y = x - 4
    return y


@case(args=[(pos(2, 3), True), (neg(2, 3), True), (pos(2, 3), False)])
def python_flag_and_tensor(x, use_shift):
    if use_shift:
        if rt.mean(x) > 0:
            x = x - 0.5
        else:
            x = x + 0.5
    return x * 2


@case(args=[(pos(3), 1), (neg(3), 1), (pos(3), 5)])
def python_if_then_tensor_elif(x, n):
    if n > 2:
        y = x * n
    elif rt.sum(x) > 0:
        y = x + n
    else:
        y = x - n
    return y


@case(args=[(pos(2, 2),), (neg(2, 2),)])
def two_vars_in_both_branches(x):
    if rt.sum(x) > 0:
        a = x + 1
        b = x * 2
    else:
        a = x - 1
        b = x / 2
    return a + b, a * b


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, -2.0, -3.0]),)],
      ref=lambda x: x * 2 if x.mean() > 0 else -x)
def conditional_expression(x):
    y = x * 2 if rt.mean(x) > 0 else -x
    return y


@case(args=[(f32([5.0]),), (f32([0.5]),), (f32([-5.0]),)])
def nested_conditional_expression(x):
    s = rt.sum(x)
    return x + 1 if s > 1 else (x * 0 if s > 0 else x - 1)


@case(args=[(f32([1.0, 2.0, 3.0, -1.0]),), (f32([-1.0, -2.0, 3.0, -1.0]),)],
      batch=lambda b: (rand(b, 3),))
def count_condition(x):
    if rt.sum((x > 0).astype("int64")) > 2:
        return x * 2
    return x * -2


@case(args=[(f32([2.0, -1.0]),), (f32([-2.0, 1.0]),)])
def element_condition(x):
    if x[0] > 0:
        out = x[0] * x
    else:
        out = x[1] * x
    return out


@case(args=[(f32([1.0, 4.0]),), (f32([1.0, 2.0]),)])
def any_condition(x):
    if rt.any(x > 3):
        x = rt.clip(x, 0.0, 3.0)
    return x


@case(args=[(pos(3),), (f32([1.0, -1.0, 1.0]),)])
def not_all_condition(x):
    if not rt.all(x > 0):
        x = rt.abs(x)
    return x + 1


@case(args=[(pos(2),), (neg(2),)])
def python_int_in_both_branches(x):
    if rt.mean(x) > 0:
        k = 2
    else:
        k = 3
    return x * k


@case(args=[(pos(4, 2),), (neg(4, 2),), (pos(2, 2),)])
def shape_condition_outside(x):
    if x.shape[0] > 2:
        if rt.mean(x) > 0:
            x = x[:2]
        else:
            x = x[2:]
    return x.sum(axis=0)


@case(args=[(pos(3),), (neg(3),)])
def branch_calls_methods(x):
    if x.mean() > 0:
        y = x.abs().sum()
    else:
        y = (x * x).sum().sqrt()
    return y


@case(args=[(f32([4.0]),), (f32([2.0]),), (f32([0.0]),), (f32([-3.0]),)])
def four_way_chain_then_common(x):
    s = rt.sum(x)
    if s > 3:
        y = x * 4
    elif s > 1:
        y = x * 3
    elif s > -1:
        y = x + 2
    else:
        y = x - 1
    y = y * y
    return y + 1


@case(args=[(pos(3),), (neg(3),)])
def condition_in_variable(x):
    positive = rt.mean(x) > 0
    if positive:
        x = x + 1
    y = x * 2
    if positive:
        y = y - 1
    return y


@case(args=[(pos(3), neg(3)), (neg(3), pos(3))])
def compare_two_tensors(x, y):
    if rt.sum(x) > rt.sum(y):
        big, small = x, y
    else:
        big, small = y, x
    return big - small


@case(args=[(pos(3),), (neg(3),)])
def temporary_only_in_branch(x):
    if rt.mean(x) > 0:
        t = rt.exp(x)
        x = x + t
    else:
        u = x * x
        x = x - u
    return x


@case(args=[(i64([3, 4]),), (i64([-3, 1]),)])
def int_tensor_condition(x):
    if rt.sum(x) % 2 == 1:
        y = x * 2
    else:
        y = x + 1
    return y


@case(args=[(pos(2, 3),), (neg(2, 3),)], batch=lambda b: (signed(b, 3),))
def if_changes_dtype_consistently(x):
    if rt.mean(x) > 0:
        y = (x > 0.9).astype("float32")
    else:
        y = (x < -0.9).astype("float32")
    return y.sum(axis=1)


@case(args=[(f32([1.0, 2.0]), None), (f32([1.0, 2.0]), f32([3.0, 1.0])),
            (f32([1.0, 2.0]), f32([-3.0, -1.0]))])
def optional_tensor_argument(x, bias):
    if bias is not None:
        if rt.mean(bias) > 0:
            x = x + bias
        else:
            x = x - bias
    return x


@case(args=[(f32(np.arange(6).reshape(2, 3)),), (f32(-np.arange(6).reshape(2, 3)),)])
def if_on_reduction_axis(x):
    col = x.sum(axis=0)
    if col[0] + col[2] > col[1]:
        z = col * 2
    else:
        z = col / 2
    return z


@case(args=[(pos(4, 2),), (pos(1, 2),)], batch=lambda b: (pos(b, 2),))
def branch_on_batch_size(x):
    if x.shape[0] > 2:
        y = x * 2
    else:
        y = x + 1
    return y.sum(axis=0)


@case(args=[(pos(3, 2),), (neg(3, 2),)])
def branches_with_different_lengths(x):
    if rt.mean(x) > 0:
        y = x[:1]
    else:
        y = x
    return y.sum(axis=0), y.shape[0]


@case(args=[(pos(2),), (neg(2),)])
def python_flag_set_in_tensor_branch(x):
    flag = False
    if rt.mean(x) > 0:
        flag = True
    if flag:
        y = x * 2
    else:
        y = x
    return y, flag


@case(args=[(f32([1.0]),), (f32([10.0]),)])
def closure_reads_updated_variable(x):
    scale = x

    def scaled(t):
        return t * scale

    y = x
    i = 0
    while rt.sum(y) < 50 and i < 6:
        scale = scale * 2
        y = scaled(y)
        i += 1
    return y


@case(args=[(pos(2),), (neg(2),)])
def python_int_or_float_from_branches(x):
    if rt.mean(x) > 0:
        k = 1
    else:
        k = 2.5
    return x * k, k


@case(args=[(pos(2), 0), (pos(2), 1), (neg(2), 1), (neg(2), 2)])
def elif_chain_mixing_python_and_tensor(x, n):
    if n == 0:
        y = x
    elif rt.mean(x) > 0:
        y = x * 2
    elif n == 1:
        y = x - 1
    else:
        y = x * n
    return y
