"""User code for the debugging tests: each function fails (or not) in one phase of d2s.

Line numbers matter: the golden messages in test_debug_errors.py quote them.
"""
import d2s
import runtime as rt


def project(x, w):
    y = rt.matmul(x, w)
    return y


@d2s.to_static
def shape_error_in_helper(x):
    w = rt.ones([3, 3])
    return project(x, w)


@d2s.to_static
def key_error(x):
    table = {"a": x}
    return table["b"]


@d2s.to_static
def error_in_branch(x):
    if rt.mean(x) > 0:
        y = rt.reshape(x, [3, -1])
    else:
        y = x
    return y


@d2s.to_static
def error_in_unrolled_loop(x):
    w = rt.ones([4, 3])
    for _ in range(2):
        x = rt.matmul(x, w)
    return x


@d2s.to_static
def python_error_in_tensor_loop(x, n):
    i = rt.zeros([], "int64")
    names = {"x": x}
    while i < n:
        x = x + names["y"]
        i = i + 1
    return x


@d2s.to_static(input_spec=[d2s.InputSpec([None, 4]), d2s.InputSpec([], "int64")])
def kernel_error_in_while(x, n):
    i = rt.zeros([], "int64")
    while i < n:
        x = rt.reshape(x, [3, -1])
        i = i + 1
    return x


def check_positive(x):
    assert rt.mean(x) > 0, "the mean must be positive"
    return x * 2


@d2s.to_static
def failed_assert_in_helper(x):
    y = x + 1
    return check_positive(y)


@d2s.to_static
def generator(x):
    yield x


async def coroutine(x):
    return x


@d2s.to_static
def bound_in_one_branch(x):
    if rt.mean(x) > 0:
        y = "positive"  # not a tensor: checked while converting
    return y


CONFIGS = [{"scale": 10.0}, {"scale": 20.0}, {"scale": 30.0}]


@d2s.to_static
def tensor_as_list_index(x):
    k = int(rt.argmax(x))
    return x * CONFIGS[k]["scale"]
