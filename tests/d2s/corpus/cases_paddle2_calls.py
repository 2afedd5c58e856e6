"""More idioms of Paddle's dygraph-to-static call, closure and method tests
(test_closure_analysis.py, test_convert_call.py, test_lambda.py, test_tensor_methods.py,
test_grad.py, test_unuseful_inputs.py, test_partial_program.py, test_inplace_assign.py,
test_dict.py, test_isinstance.py, test_print.py), in new words: `nonlocal` writes in nested
functions under tensor conditions, a dict of lists appended in a Python loop, NumPy arrays
rebuilt in a loop, lambdas called inside
tensor branches, a callable object, a recursive helper and one left unconverted, tensor methods
(`clone`, `item`, `size`, true division of ints), `rt.grad` in a layer, an optional label
argument, nested tuple/list/dict outputs, `rt.assign(x, output=y)`, dict `update`/`setdefault`
and `isinstance` dispatch over containers."""
import numpy as np

import d2s
import runtime as paddle
from runtime import nn

from .registry import case, f32, i64, neg, pos, rand


@case(args=[(rand(3),), (rand(3) + 2,)])
def nonlocal_write_under_tensor_if(x):
    i = 10

    def bump():
        nonlocal i
        k = 3
        if True:
            i = i + k

    if x.mean() > 1:
        bump()
    return x * i


@case(args=[(i64([3]),), (i64([-1]),)])
def dict_of_list_appended_in_python_loop(x):
    ma = {"a": []}
    for i in range(3):
        ma["a"].append(i)
    if x > 0:
        ma["a"].append(x.sum())
    return ma


@case(args=[(i64([3]),), (i64([-3]),)])
def numpy_array_rebuilt_in_loop(x):
    a = np.array([1, 2, 3])
    for i in range(3):
        a = np.append(a, 4)
    if x.sum() > 0:
        return paddle.to_tensor(a) * x
    return paddle.to_tensor(a)


@case(args=[(rand(3),), (rand(3) - 2,)])
def lambdas_called_in_tensor_branches(x):
    double = lambda v: v * 2
    shift = lambda v, s=1.0: v + s
    if x.mean() > -0.5:
        y = double(x)
    else:
        y = shift(x, s=3.0)
    pick = (lambda v: v.max()) if x.sum() > 0 else (lambda v: v.min())
    return y, pick(x)


class _Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, v):
        if v.mean() > 0:
            return v * self.k
        return v / self.k


@case(args=[(f32([1.0, 2.0, 3.0, 4.0]),), (f32([-1.0, -2.0, 0.5, -4.0]),)])
def callable_object_with_tensor_if(x):
    s = _Scale(3.0)
    return s(x) * 2


def _fact(n, x):
    if n <= 1:
        return x
    return _fact(n - 1, x * n)


@case(args=[(rand(2), 3), (rand(2), 1)])
def recursive_python_helper(x, n):
    return _fact(n, x)


@d2s.not_to_static
def _python_stats(v):
    return v.mean(), (v > 0).astype("int64").sum()


@case(args=[(rand(4),), (rand(4) + 3,)])
def helper_left_unconverted_returns_numbers(x):
    m, k = _python_stats(x)
    if x.mean() > 1:
        return x - m, k
    return x + m, k


@case(args=[(i64([3, 4]),), (i64([[1, 2], [3, 4]]),)])
def tensor_methods_clone_item_size(x):
    y = x.clone()
    y = paddle.reshape(y, paddle.shape(y))
    n = y.size
    if n > 2:
        first = y[0, 0].item()
    else:
        first = y[0].item()
    return y, n, first


@case(args=[(i64([3, 4]), i64([2, 8])), (i64([1]), i64([4]))])
def true_division_of_int_tensors(x, y):
    z = x / y
    if z.shape[0] > 1:
        z = z + x // y
    return z


@case(args=[(rand(2, 3) - 3,), (rand(2, 3) + 3,)])
class GradOfInputLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        paddle.seed(7)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        x.stop_gradient = False
        y = self.fc(x) * x
        if x.mean() > 0:
            y = y * 2
        dx = paddle.grad([y], [x], create_graph=False)[0]
        return dx


@case(args=[(rand(3, 4), None), (rand(3, 4), i64([[0], [1], [1]]))])
class OptionalLabelLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        paddle.seed(11)
        self.fc = nn.Linear(4, 2)

    def forward(self, x, label=None):
        out = self.fc(x)
        if label is not None:
            loss = paddle.nn.functional.cross_entropy(out, label)
            return out, loss
        return out


@case(args=[(rand(3) + 2,), (rand(3) - 2,)])
def nested_tuple_list_dict_outputs(x):
    y = x * 2
    if x.mean() > 0:
        z = x + 1
    else:
        z = x - 1
    return x, (y, [z, {"w": z * y}]), {"a": [x], "b": (y,)}


@case(args=[(pos(3),), (neg(3),)])
def assign_into_output_argument(x):
    y = paddle.zeros([3])
    paddle.assign(x * 2, output=y)
    if y.mean() > 0:
        paddle.assign(x, output=y)
    return y


@case(args=[(rand(3),), (rand(3) - 2,)])
def dict_update_and_setdefault(x):
    d = {"x": x}
    d.update({"y": x * 2})
    d.update(z=x + 1)
    d.setdefault("x", x * 100)
    d.setdefault("w", x * 0)
    if x.mean() > 0:
        d["y"] = d["y"] + d["z"]
    return d


def _total(v):
    if isinstance(v, (list, tuple)):
        return sum(_total(u) for u in v)
    if isinstance(v, dict):
        return sum(_total(u) for u in v.values())
    if isinstance(v, paddle.Tensor):
        return v.sum()
    return v


@case(args=[(f32([1.0, 2.0, 0.5]),), (f32([-1.0, -2.0, 0.5]),)])
def isinstance_dispatch_over_containers(x):
    s = _total([x, (x * 2, {"k": x}), 3.0])
    if s > 0:
        s = s + _total({"a": [1, 2]})
    return s


@case(args=[(f32([1.5, 2.5]),), (f32([-1.0, 0.5]),)], stdout=("shape:", "val:", "end"))
def print_with_sep_and_end(x):
    print("shape:", x.shape, sep=" ")
    if x.sum() > 0:
        print("val:", x, end="!\n")
    else:
        print("val:", x * 2)
    print("end")
    return x
