"""assert (passing), print with sep/end, len of tensors and lists, bool/int/float casts."""
import runtime as rt

from .registry import case, f32, i64, neg, pos, rand, signed


@case(args=[(pos(3),), (neg(3),)])
def assert_tensor_condition(x):
    assert rt.all(x > -10), "inputs out of range"
    if rt.mean(x) > 0:
        x = x * 2
    return x


@case(args=[(pos(3), 2), (neg(3), 1)])
def assert_python_condition(x, k):
    assert k > 0, f"k must be positive, got {k}"
    if rt.sum(x) > 0:
        return x * k
    return x / k


@case(args=[(pos(3, 2),), (neg(3, 2),)], batch=lambda b: (signed(b, 2),))
def assert_shape(x):
    assert x.shape[-1] == 2
    assert len(x.shape) == 2
    return x.sum(axis=1) if rt.mean(x) > 0 else x.sum(axis=0)


@case(args=[(pos(2),), (neg(2),)])
def assert_inside_branch(x):
    if rt.mean(x) > 0:
        assert rt.min(x) > 0
        y = rt.sqrt(x)
    else:
        assert rt.max(x) < 0
        y = rt.sqrt(-x)
    return y


@case(args=[(pos(2),), (neg(2),)], stdout=("mean=",))
def print_tensor_sep_end(x):
    m = rt.mean(x)
    print("mean", m, sep="=", end=";\n")
    return x - m if m > 0 else x + m


@case(args=[(pos(2),), (neg(2),)], stdout=("positive:", "negative:"))
def print_in_tensor_branch(x):
    if rt.mean(x) > 0:
        print("positive:", rt.max(x))
        y = x
    else:
        print("negative:", rt.min(x))
        y = -x
    return y


@case(args=[(pos(2), 1), (pos(2), 3)], stdout=("step",))
def print_in_python_loop(x, n):
    for i in range(n):
        x = x * 2
        print("step", x, sep=" ")
    return x


@case(args=[(pos(2),), (neg(2),)])
def print_python_values_only(x):
    print("shape", x.shape, "ndim", x.ndim)
    return x * 2 if rt.sum(x) > 0 else x


@case(args=[(pos(3, 2),), (pos(5, 2),), (neg(5, 2),)], batch=lambda b: (signed(b, 2),))
def len_of_tensor(x):
    n = len(x)
    if rt.mean(x) > 0:
        return x.sum(axis=0) / n
    return x.sum(axis=0) * n


@case(args=[(pos(2), neg(2)), (neg(2), neg(2))])
def len_of_list(x, y):
    xs = [x, y]
    if rt.mean(x) > 0:
        xs = [x, y, x + y]
    return len(xs), xs[0]


@case(args=[(f32([1.0, 2.0, -1.0]),), (f32([-1.0, -2.0, -1.0]),)])
def int_of_tensor(x):
    k = int(rt.sum(x > 0))
    if k > 1:
        return x * k
    return x - k


@case(args=[(pos(3),), (neg(3),)])
def float_of_tensor(x):
    m = float(rt.mean(x))
    if m > 0:
        return x - m
    return x + m * 2


@case(args=[(f32([1.0, 2.0, -1.0]),), (f32([-1.0, -2.0, -1.0]),)])
def bool_of_tensor(x):
    b = bool(rt.any(x > 0))
    if b:
        x = x + 1
    return x


@case(args=[(pos(2), 2.7), (pos(2), -1.2)])
def casts_of_python_values(x, v):
    k = int(v)
    f = float(k)
    if bool(k > 0):
        return x * f
    return x - f


@case(args=[(pos(4, 2),), (neg(4, 2),)], batch=lambda b: (signed(b, 2),))
def len_as_loop_bound(x):
    s = rt.zeros([2])
    for i in range(len(x)):
        row = x[i]
        s = s + row if row.sum() > 0 else s - row
    return s


@case(args=[(pos(6, 2),), (neg(6, 2),)], batch=lambda b: (rand(b, 2),))
def shape_arithmetic(x):
    rows = x.shape[0]
    y = x.reshape([rows * 2, 1])
    if rt.mean(y) > 0:
        return y * (rows + 1)
    return y - rows


@case(args=[(i64([3, 1]),), (i64([1, 3]),)])
def int_cast_of_element(x):
    if int(x[0]) > int(x[1]):
        return x * 2
    return x


@case(args=[(pos(2),), (neg(2),)])
def float_cast_in_arithmetic(x):
    scale = float(x.mean()) * 2 + 1
    if scale > 1:
        return x * scale
    return x / scale


@case(args=[(pos(3, 2),), (neg(3, 2),)])
def astype_after_branch(x):
    if rt.mean(x) > 0:
        y = x.astype("float64")
    else:
        y = (x * 2).astype("float64")
    return y, y.astype("int32")


@case(args=[(f32([1.0]),), (f32([20.0]),), (f32([3.0]),)], stdout=("iter",))
def print_in_tensor_while(x):
    while rt.sum(x) < 10:
        x = x * 2
        print("iter", x)
    return x


@case(args=[(pos(3),), (neg(3),)], raises=(AssertionError,))
def assert_fails_for_some_inputs(x):
    assert rt.all(x > 0), "inputs must be positive"
    return rt.log(x)


@case(args=[(f32([1.0, 2.0, 3.0]),), (f32([1.0, 200.0, 3.0]),)], raises=(AssertionError,))
def assert_fails_inside_loop(x):
    total = rt.zeros([])
    for i in range(3):
        assert x[i] < 100, "value too large"
        total = total + x[i]
    return total


@case(args=[(pos(2), "sum"), (neg(2), "sum"), (pos(2), "bad")], raises=(ValueError,))
def python_raise_on_bad_mode(x, mode):
    if mode not in ("sum", "mean"):
        raise ValueError(f"unknown mode {mode!r}")
    return x.sum() if rt.mean(x) > 0 else x.mean()
