"""The idioms of Paddle's dygraph-to-static tests of checks and types (test_error.py,
test_isinstance.py, test_assert.py, test_tensor_methods.py, test_jit_setitem.py's augmented
assignments, test_dict.py's `get`/`in`), in new words: an error raised under a tensor
condition, type and dtype tests, `int()` of a reduction as a loop bound, `while ... else`,
a nonzero of run-time length, and `x[i] += v` in a loop."""
import runtime as paddle

from .registry import case, f32, i64


@case(args=[(f32([1.0, 2.0]),), (f32([30.0, 2.0]),)], raises=(ValueError,))
def raise_under_tensor_condition(x):
    if x.mean() > 10:
        raise ValueError("the input is out of range")
    return x + 1


@case(args=[(f32([1.0]),), (i64([1]),)])
def type_and_dtype_tests(x):
    if isinstance(x, paddle.Tensor) and paddle.is_tensor(x):
        x = x + 1
    if x.dtype == paddle.float32:
        x = x * 2.5
    return x


@case(args=[(f32([1.0]),), (f32([-1.0]),)])
def dict_get_and_membership(x):
    d = {"a": x}
    if "b" in d:
        y = d["b"]
    else:
        y = d.get("c", x * 2)
    if x.sum() > 0:
        d["b"] = y
    else:
        d["b"] = -y
    return d


@case(args=[(f32([1.0, -2.0, 3.0]),), (f32([-1.0, -2.0, -3.0]),)])
def gather_of_nonzero(x):
    idx = paddle.nonzero(x > 0)
    if idx.shape[0] > 0:
        return paddle.gather(x, idx.squeeze(-1))
    return x


@case(args=[(f32([1.0, 1.0]),), (f32([0.0, 0.0]),)])
def int_of_reduction_bounds_python_loop(x):
    n = int(x.sum())
    out = paddle.zeros([3])
    for i in range(3):
        if i < n:
            out[i] = 1.0
    return out


@case(args=[(f32([1.0]),), (f32([0.001]),)])
def while_else_with_tensor_break(x):
    i = 0
    while x.sum() < 10:
        x = x * 2
        i += 1
        if i > 5:
            break
    else:
        x = x - 1
    return x, i


@case(args=[(f32([1.0, 2.0]),), (f32([1.0, -2.0]),)], raises=(AssertionError,))
def assert_shape_and_values(x):
    assert x.shape == [2], "expected two values"
    assert (x > 0).all(), "expected positive values"
    return x


@case(args=[(f32([1.0]),), (f32([-5.0]),)])
def to_tensor_of_constants_inside(x):
    t = paddle.to_tensor([1.0, 2.0])
    if (x * t).sum() > 0:
        t = t * 3
    return t + x


@case(args=[(f32([1.0, 2.0, 3.0]), 2), (f32([1.0, 2.0, 3.0]), i64(1))])
def augmented_item_assignment_in_loop(x, n):
    for i in range(n):
        x[i] += 1
        x[i:i + 1] *= 2
    return x


@case(args=[(f32([1.0, 2.0]),), (f32([-1.0, 0.5]),)], stdout=("loss:",))
def print_fstring_of_tensor(x):
    loss = (x * x).sum()
    if x.sum() > 0:
        print(f"loss: {loss}")
    return loss
