"""The idioms of Paddle's dygraph-to-static tests of casts, prints, asserts, logic, gradients,
closures, partials, lambdas, decorators, isinstance, hooks and returns (test_cast.py,
test_print.py, test_assert.py, test_logical.py, test_grad.py, test_closure_analysis.py,
test_partial.py, test_lambda.py, test_decorator_transform.py, test_isinstance.py,
test_layer_hook.py, test_return.py, test_item.py, test_inplace_assign.py,
test_duplicate_output.py, test_drop_path.py), in new words."""
import functools

import runtime as paddle
import runtime.nn.functional as F
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand


# ---- casts ------------------------------------------------------------------------------
@case(args=[(f32([0.0]),), (f32([2.5]),)])
def bool_of_tensor_in_condition(x):
    flag = bool(x)
    if flag:
        return x * 2
    return x - 1


@case(args=[(f32([3.7]),), (f32([0.4]),)])
def int_float_bool_chain(x):
    n = int(x)
    r = float(n)
    b = bool(r)
    if b:
        r = r + 0.5
    return n, r, b


@case(args=[(f32([1.5]), 2), (f32([1.5]), 0)])
def cast_of_python_values(x, k):
    k = int(k)
    scale = float(k) + 0.5
    on = bool(k)
    if on:
        x = x * scale
    return x


# ---- print and assert -------------------------------------------------------------------
@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)],
      stdout=("positive:", "negative:", "shape", "done"))
def print_in_branches(x):
    print("shape", x.shape, "dtype", x.dtype)
    if x.sum() > 0:
        print("positive:", x)
    else:
        print("negative:", x * -1)
    print("done")
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 2.0]),)], raises=(AssertionError,))
def assert_tensor_with_message(x):
    assert x.shape[0] == 2, "two features"
    assert x[0] > 0, "the first feature must be positive"
    return x * 3


@case(args=[(i64([1]),), (i64([0]),)], raises=(AssertionError,))
def assert_bool_of_tensor(x):
    assert bool(x)
    return x + 1


# ---- logical operators ------------------------------------------------------------------
@case(args=[(f32([0.0]),), (f32([4.0]),)])
def not_of_tensor(x):
    if not x:
        x = x + 5
    y = not (x > 3)
    return x, y


@case(args=[(f32([2.0]),), (f32([20.0]),), (f32([-3.0]),)])
def and_or_of_tensor_comparisons(x):
    if x > 0 and x < 10:
        y = x * 2
    elif x < 0 or x > 100:
        y = -x
    else:
        y = x / 4
    inside = x > -5 and x < 5
    return y, inside


@case(args=[(rand(2, 3),), (rand(3, 2),)])
def shape_equality(x):
    if x.shape == [2, 3]:
        y = x + 1
    else:
        y = x.t()
    if x.shape != [3, 2]:
        y = y * 2
    return y


# ---- gradients --------------------------------------------------------------------------
class GradOfSquare(nn.Layer):
    def forward(self, x):
        x.stop_gradient = False
        y = x * x
        if y.mean() > 1:
            y = y * 3
        return paddle.grad(y, x)[0]


case(args=[(pos(2, 3) * 0.5,), (pos(2, 3) * 4,)])(GradOfSquare)


class GradThroughLinear(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        x.stop_gradient = False
        out = self.fc(x)
        loss = paddle.tanh(out).sum()
        gx = paddle.grad([loss], [x], create_graph=False)[0]
        with paddle.no_grad():
            frozen = self.fc(x) * 2
        return gx, frozen, out


case(args=[(rand(2, 3),)])(GradThroughLinear)


@case(args=[(f32([0.5, 1.0]),), (f32([2.0, 3.0]),)])
def second_order_gradient(x):
    x.stop_gradient = False
    y = paddle.pow(x, 3).sum()
    (g,) = paddle.grad(y, x, create_graph=True)
    if g.sum() > 5:
        g = g * 0.5
    (gg,) = paddle.grad(g.sum(), x)
    return g, gg


# ---- closures, partial, lambda, decorators ---------------------------------------------
@case(args=[(f32([1.0]),), (f32([-1.0]),)])
def closure_with_nonlocal(x):
    calls = 0
    acc = x

    def add(v):
        nonlocal calls, acc
        calls += 1
        acc = acc + v

    add(x)
    if x > 0:
        add(x * 10)
    return acc, calls


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def closures_made_in_python_loop(x):
    fns = []
    for k in range(3):
        fns.append(lambda v, k=k: v * (k + 1))
    out = [f(x) for f in fns]
    total = paddle.add_n(out)
    if total.sum() > 0:
        total = F.relu(total - 5)
    return total


def _scaled_sum(x, scale, bias=0.0):
    if x.mean() > 0:
        return x.sum() * scale + bias
    return x.sum() - bias


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def functools_partial_of_function(x):
    fn = functools.partial(_scaled_sum, scale=3.0, bias=1.0)
    return fn(x)


class PartialOfMethod(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def run(self, x, times):
        for _ in range(times):
            x = self.fc(x)
        return x

    def forward(self, x):
        twice = functools.partial(self.run, times=2)
        y = twice(x)
        return y if y.mean() > 0 else -y


case(args=[(rand(3, 2),)])(PartialOfMethod)


@case(args=[(f32([1.0, 2.0]),), (f32([-5.0, 2.0]),)])
def lambda_with_tensor_condition(x):
    shift = lambda v: v + 1 if v.mean() > 0 else v - 1
    pairs = list(map(lambda v: v * 2, [x, x + 1]))  # noqa: C417
    return shift(x), pairs[1]


def _double_output(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2
    return wrapper


@_double_output
def _decorated_helper(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


@case(args=[(f32([1.0]),), (f32([-1.0]),)])
def call_decorated_helper(x):
    return _decorated_helper(x) + 1


# ---- isinstance, hooks, drop path -------------------------------------------------------
class DispatchByType(nn.Layer):
    def __init__(self):
        super().__init__()
        self.parts = nn.LayerList([nn.Linear(3, 3), nn.ReLU(), nn.Dropout(0.5), nn.Linear(3, 2)])

    def forward(self, x):
        for layer in self.parts:
            if isinstance(layer, nn.Dropout):
                continue
            if isinstance(layer, (nn.Linear,)) and x.mean() < 0:
                x = layer(x) + 1
            else:
                x = layer(x)
        return x


case(args=[(pos(2, 3),), (neg(2, 3) * 3,)])(DispatchByType)


class ScaledByHooks(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.fc.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 2,))
        self.fc.register_forward_post_hook(lambda layer, inputs, out: out + 1)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            y = y * 0.5
        return y


case(args=[(rand(2, 2),)])(ScaledByHooks)


def _drop_path(x, keep, training):
    if not training or keep == 1.0:
        return x
    mask = paddle.floor(keep + paddle.zeros([x.shape[0], 1]) + 0.5)
    return x / keep * mask


class DropPathBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return x + _drop_path(self.fc(x), 0.8, self.training)


case(args=[(rand(2, 3),)])(DropPathBlock)


# ---- returns ----------------------------------------------------------------------------
@case(args=[(i64([1]),), (i64([30]),)])
def return_inside_while(x):
    while x < 10:
        x = x + 3
        if x > 6:
            return x * 10
    return x


@case(args=[(f32([1.0]),), (f32([-20.0]),)])
def return_inside_python_for(x):
    for i in range(5):
        x = x + i
        if x > 4:
            return x, i
    return x, -1


def _countdown(x, depth):
    if depth == 0:
        return x
    if x.sum() > 0:
        return _countdown(x - 1, depth - 1)
    return _countdown(x * 2, depth - 1)


@case(args=[(f32([3.0]),), (f32([-1.0]),)])
def recursive_helper(x):
    return _countdown(x, 3)


@case(args=[(f32([1.0]),), (f32([-1.0]),)])
def return_without_value(x):
    out = [x]

    def fill(v):
        if v > 0:
            out.append(v * 2)
            return
        out.append(v * 3)

    fill(x)
    return out[-1]


@case(args=[(f32([2.0]),), (f32([-2.0]),)])
def return_list_of_one_and_tuple_of_many(x):
    if x > 0:
        y = x + 1
    else:
        y = x - 1
    return [y], (y, y * 2, y * 3, x)


@case(args=[(f32([2.0]),), (f32([-2.0]),)])
def duplicate_outputs(x):
    y = x * 2 if x > 0 else x * 3
    return y, y, x


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, -2.0]),)])
def assign_into_output(x):
    out = paddle.zeros([2])
    paddle.assign(x * 2, output=out)
    if out.sum() > 0:
        paddle.assign(out + 1, out)
    return out


@case(args=[(f32([1.5, 2.5]),), (f32([-1.0, 0.5]),)])
def item_of_reductions(x):
    m = x.mean().item()
    s = float(x.sum())
    if m > 0:
        return x * m + s
    return x - s
