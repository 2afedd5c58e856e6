"""Calls from converted code: helper functions, nested functions and closures, lambdas,
methods, *args/**kwargs, defaults, decorators, partials, recursion, generators."""
import functools
import math

import numpy as np

import runtime as rt

from .registry import case, f32, neg, pos, signed


def _relu_or_neg(t):
    if rt.mean(t) > 0:
        return rt.maximum(t, rt.zeros_like(t))
    return -t


def _grow(t, limit):
    while rt.max(t) < limit:
        t = t * 2
    return t


def _two_level(t):
    t = _relu_or_neg(t)
    return _grow(t, 4.0)


def _log_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) + 1

    return wrapper


def _scaled(scale):
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(x):
            return fn(x * scale)

        return wrapper

    return decorator


class _Normalizer:
    def __init__(self, eps):
        self.eps = eps

    def apply(self, t):
        s = rt.sum(rt.abs(t))
        if s > self.eps:
            return t / s
        return t

    @staticmethod
    def clip(t):
        return rt.clip(t, -1.0, 1.0) if rt.max(rt.abs(t)) > 1 else t

    @classmethod
    def make(cls):
        return cls(0.5)


@case(args=[(pos(3),), (neg(3),)], batch=lambda b: (signed(b, 3),))
def helper_with_if(x):
    return _relu_or_neg(x) * 2


@case(args=[(f32([1.0]),), (f32([9.0]),)])
def helper_with_while(x):
    return _grow(x, 8.0) + 1


@case(args=[(pos(2),), (neg(2),)])
def nested_function_with_if(x):
    def inner(t):
        if rt.sum(t) > 0:
            return t * 3
        return t - 3

    return inner(x) + inner(x * 2)


@case(args=[(pos(2), 2.0), (neg(2), 2.0)])
def closure_captures_outer(x, k):
    offset = x * k

    def shifted(t):
        if rt.mean(t) > 0:
            return t + offset
        return t - offset

    return shifted(x)


@case(args=[(pos(3),), (neg(3),)])
def lambda_with_conditional(x):
    f = lambda t: t if rt.mean(t) > 0 else -t
    return f(x) * 2


@case(args=[(pos(2),), (neg(2),)])
def two_lambdas_one_line(x):
    inc, dbl = (lambda t: t + 1), (lambda t: t * 2)
    if rt.sum(x) > 0:
        return inc(x)
    return dbl(x)


@case(args=[(pos(2),), (f32([0.1, 0.1]),)])
def method_with_control_flow(x):
    norm = _Normalizer(0.5)
    return norm.apply(x)


@case(args=[(f32([3.0, 0.5]),), (f32([0.2, 0.5]),)])
def staticmethod_and_classmethod(x):
    n = _Normalizer.make()
    return _Normalizer.clip(x), n.apply(x)


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def star_args_helper(x, y):
    def total(*ts):
        s = ts[0]
        for t in ts[1:]:
            if rt.mean(t) > 0:
                s = s + t
        return s

    return total(x, y, x * 2)


@case(args=[(pos(2),), (neg(2),)])
def kwargs_helper(x):
    def layer(t, **options):
        if options.get("negate") and rt.mean(t) < 0:
            t = -t
        return t * options.get("scale", 1.0)

    return layer(x, negate=True, scale=2.0), layer(x)


@case(args=[(pos(2),), (neg(2),), (pos(2), 3.0), (neg(2), 1.0, f32([1.0, 1.0]))])
def default_arguments(x, scale=2.0, shift=None):
    if shift is not None:
        x = x + shift
    if rt.mean(x) > 0:
        return x * scale
    return x


@case(args=[(pos(2),), (neg(2),)])
def keyword_only_arguments(x):
    def act(t, *, kind="relu", alpha=0.1):
        if kind == "leaky" and rt.mean(t) < 0:
            return t * alpha
        return rt.maximum(t, rt.zeros_like(t))

    return act(x, kind="leaky"), act(x)


@case(args=[(pos(2),), (neg(2),)])
@_log_calls
def wrapped_by_functools(x):
    if rt.mean(x) > 0:
        return x * 2
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
@_scaled(3.0)
def decorator_with_argument(x):
    return x + 1 if rt.sum(x) > 0 else x - 1


@case(args=[(pos(2), 4), (pos(2), 1)])
def recursive_python_helper(x, n):
    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)

    return x * fact(n)


@case(args=[(pos(2),), (neg(2),), (f32([0.1, 0.2]),)])
def helper_calls_helper(x):
    return _two_level(x)


@case(args=[(pos(2),), (neg(2),)])
def function_as_argument(x):
    def apply(fn, t, times):
        for _ in range(times):
            t = fn(t)
        return t

    return apply(_relu_or_neg, x, 2)


@case(args=[(f32([1.0]),), (f32([20.0]),)])
def partial_helper(x):
    grow_to_16 = functools.partial(_grow, limit=16.0)
    return grow_to_16(x)


@case(args=[(pos(2), 3), (pos(2), 0)])
def generator_helper(x, n):
    def powers(k):
        for i in range(k):
            yield 2 ** i

    total = sum(powers(n))
    return x * total


@case(args=[(pos(2),), (neg(2),)])
def call_result_in_condition(x):
    if rt.sum(_relu_or_neg(x)) > 1:
        return x + 10
    return x


@case(args=[(pos(2),), (neg(2),)])
def method_on_python_list(x):
    fns = [_relu_or_neg, lambda t: t * 3]
    out = x
    for fn in fns:
        out = fn(out)
    return out


@case(args=[(pos(2),), (neg(2),)])
def nonlocal_counter(x):
    calls = 0

    def step(t):
        nonlocal calls
        calls += 1
        if rt.mean(t) > 0:
            return t * 2
        return t - 1

    y = step(step(x))
    return y, calls


@case(args=[(pos(2),), (neg(2),)])
@rt.no_grad()
def decorated_with_no_grad(x):
    if rt.mean(x) > 0:
        return x * 2
    return -x


@case(args=[(pos(2), neg(2)), (neg(2), neg(2), pos(2))])
def star_args_signature(*ts):
    total = ts[0]
    for t in ts[1:]:
        total = total + t if rt.mean(t) > 0 else total - 1
    return total


@case(args=[(pos(2),), (neg(2),), (f32([0.2, 0.3]),)])
def numpy_and_math_on_python_values(x):
    threshold = float(np.log(2.0)) * math.cos(0.0)
    if rt.mean(x) > threshold:
        return x * math.pi
    if rt.mean(x) > 0:
        return x + np.float32(1.0).item()
    return x
