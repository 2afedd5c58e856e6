"""and / or / not on tensors and Python values (short-circuit kept), chained comparisons."""
import runtime as rt

from .registry import case, f32, neg, pos, signed


@case(args=[(f32([1.0, 2.0]),), (f32([1.0, 20.0]),), (f32([-1.0, -2.0]),)])
def and_of_tensor_comparisons(x):
    if rt.mean(x) > 0 and rt.max(x) < 10:
        x = x * 2
    else:
        x = x - 1
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 20.0]),), (f32([-1.0, -2.0]),)])
def or_of_tensor_comparisons(x):
    if rt.min(x) > 0 or rt.max(x) > 10:
        x = x * 2
    else:
        x = x - 1
    return x


@case(args=[(pos(2),), (neg(2),)], batch=lambda b: (signed(b, 2),))
def not_tensor(x):
    if not rt.mean(x) > 0:
        x = -x
    return x


@case(args=[(pos(2), True), (neg(2), True), (pos(2), False)])
def python_and_short_circuit(x, flag):
    if flag and rt.mean(x) > 0:
        return x + 1
    return x - 1


@case(args=[(pos(2), True), (neg(2), False), (pos(2), False)])
def python_or_short_circuit(x, force):
    if force or rt.mean(x) > 0:
        return x * 3
    return x


@case(args=[(pos(3), 0), (pos(3), 3), (neg(3), 3)])
def python_guard_against_division(x, n):
    if n > 0 and rt.sum(x) / n > 0.3:
        return x / n
    return x


@case(args=[(f32([2.0, 3.0]),), (f32([-2.0, -3.0]),), (f32([0.1, 0.2]),)])
def tensor_guard_against_nan(x):
    s = rt.sum(x)
    if s > 0 and rt.log(s) > 1:
        return x * rt.log(s)
    return x


@case(args=[(pos(2),), (neg(2),)])
def and_value_of_tensors(x):
    a = rt.mean(x) > 0
    b = rt.max(x) > 1.0
    both = a and b
    either = a or b
    return both, either


@case(args=[(pos(2), None), (pos(2), 3.0)])
def or_default_value(x, scale):
    scale = scale or 1.0
    return x * scale


@case(args=[(f32([0.5, 0.5]),), (f32([2.0, 2.0]),), (f32([-0.5, -0.5]),)])
def chained_tensor_comparison(x):
    if 0 < rt.mean(x) < 1:
        return x * 10
    return x


@case(args=[(pos(2), 3), (pos(2), 7), (pos(2), 0)])
def chained_python_comparison(x, n):
    if 0 < n < 5:
        return x * n
    return x


@case(args=[(f32([0.5]), 1), (f32([2.0]), 1), (f32([2.0]), 3), (f32([-2.0]), 3)])
def chained_mixed_comparison(x, n):
    if -1 < rt.mean(x) <= n:
        return x + n
    return x - n


@case(args=[(pos(2), 0), (pos(2), 2)])
def not_python_value(x, n):
    if not n:
        return x
    return x * n


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, 2.0, -3.0]),)])
def elementwise_logical_ops(x):
    m = rt.logical_and(x > -2.5, x < 2.5)
    m = rt.logical_or(m, x > 2.9)
    if rt.all(m):
        return x
    return rt.where(m, x, rt.zeros_like(x))


@case(args=[(f32([1.0, 2.0]),), (f32([1.0, -2.0]),), (f32([-1.0, -2.0]),)])
def and_or_three_operands(x):
    if rt.min(x) > 0 and rt.max(x) > 1 or rt.sum(x) < -2:
        return x * 2
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([1.0, 20.0]),), (f32([-1.0, -2.0]),)])
def not_of_and(x):
    if not (rt.mean(x) > 0 and rt.max(x) < 10):
        return -x
    return x


@case(args=[(pos(2), None), (pos(2), f32([1.0, -1.0])), (neg(2), f32([1.0, 1.0]))])
def is_none_and_tensor(x, bias):
    if bias is not None and rt.sum(x) > 0:
        return x + bias
    return x


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, 2.0, 5.0]),), (f32([-1.0, -1.0, -1.0]),)])
def bool_tensor_bit_ops(x):
    mask = (x > 0) & ~(x > 4) | (x < -1.5)
    if rt.any(mask):
        return rt.where(mask, x * 2, x)
    return x - 1


@case(args=[(pos(2), "relu"), (neg(2), "relu"), (neg(2), "abs"), (neg(2), "none")])
def in_tuple_of_modes(x, mode):
    if mode in ("relu", "abs") and rt.mean(x) < 0:
        x = rt.abs(x) if mode == "abs" else x * 0
    return x


@case(args=[(pos(2),), (neg(2),)])
def and_result_assigned_in_loop(x):
    ok = rt.mean(x) > 0
    i = 0
    while i < 3 and ok:
        x = x + 1
        i += 1
    return x


@case(args=[(f32([0.5, 0.2]),), (f32([2.0, 3.0]),)])
def or_returns_operand_value(x):
    m = rt.sum(x > 1).astype("float32")
    scale = m or rt.ones([]) * 0.5
    return x * scale


@case(args=[(f32([0.5, 0.2]),), (f32([2.0, 3.0]),)])
def and_returns_operand_value(x):
    m = rt.sum(x > 1).astype("float32")
    scale = m and rt.ones([]) * 3
    return x * scale


@case(args=[(f32([1.0, 1.0]), f32([2.0]), f32([2.0])), (f32([1.0, 1.0]), f32([2.0]), f32([3.0])),
            (f32([2.0, 0.0]), f32([2.0]), f32([2.0]))])
def chained_equality(x, a, b):
    if rt.sum(x) == a == b:
        return x * 10
    return x


@case(args=[(f32([1.0, 2.0]), f32([0.5, 0.5])), (f32([0.1, 0.2]), f32([0.5, 0.5])),
            (f32([0.1, 0.2]), f32([3.0, 0.5]))])
def builtin_max_of_scores(x, y):
    best = max(rt.sum(x), rt.sum(y))
    return best * 2 if best > 2 else best
