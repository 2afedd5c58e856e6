"""Shapes computed at run time (issue 35): a shape tensor of a known length converts, one
program for every value; one whose length (the result's rank) is only known when the program
runs is an error at the user's line saying what to pass instead."""
import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.static import InputSpec
from tests.d2s.breadth35.messages import assert_at_user_line


def shaped_by(x, dims):
    filled = rt.full(dims, 2.0) + rt.zeros(dims)
    grid = rt.reshape(x, dims)
    wide = rt.expand(x[:1, :1, :1].reshape([1, 1, 1]), dims)
    return filled.sum() + (grid * wide).sum() + rt.shape(grid).sum().astype("float32")


def reference_shaped(x, dims):
    grid = x.reshape(dims)
    return 2.0 * np.prod(dims) + (grid * x.flat[0]).sum() + sum(dims)


SPECS = [InputSpec([None, None, None], "float32"), InputSpec([3], "int64")]


def test_a_shape_tensor_of_known_length_converts():
    static = d2s.to_static(shaped_by, input_spec=SPECS, full_graph=True)
    for dims in ([2, 3, 4], [4, 1, 6], [1, 24, 1]):
        x = np.arange(24, dtype="float32").reshape(dims[::-1]) / 7
        want = reference_shaped(x, dims)
        for fn in (shaped_by, static):
            got = fn(rt.to_tensor(x), rt.to_tensor(dims)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5)
    assert len(static.program_cache) == 1


def zeros_of(x, dims):
    return rt.zeros(dims) + x.sum()


def reshape_to(x, dims):
    return rt.reshape(x, dims) * 2


def expand_to(x, dims):
    return x.expand(dims)


def full_from_mask(x):
    dims = rt.nonzero(x > 0)[:, 0] + 1   # as many dims as positive entries
    return rt.full(dims, 1.0)


UNKNOWN_LENGTH = [InputSpec([2, 3], "float32"), InputSpec([None], "int64")]


@pytest.mark.parametrize("fn, op, line", [
    (zeros_of, "full", 1), (reshape_to, "reshape", 1), (expand_to, "expand", 1)])
def test_a_shape_tensor_of_unknown_length_is_an_error_at_the_users_line(fn, op, line):
    static = d2s.to_static(fn, input_spec=UNKNOWN_LENGTH, full_graph=True)
    with pytest.raises(ValueError, match=f"^{op}: the shape is a 1-D tensor whose length is "
                                         "only known when the program runs") as info:
        static(rt.ones([2, 3]), rt.to_tensor([3, 2]))
    text = assert_at_user_line(info.value, __file__, fn.__code__.co_firstlineno + line)
    assert "[rt.shape(x)[0], 4]" in text and "InputSpec([3], 'int64')" in text


def test_a_shape_computed_by_the_function_of_unknown_length():
    static = d2s.to_static(full_from_mask, full_graph=True)
    with pytest.raises(ValueError, match="result's rank would be too") as info:
        static(rt.to_tensor([[1.0, -1.0], [2.0, 0.0]]))
    assert_at_user_line(info.value, __file__, full_from_mask.__code__.co_firstlineno + 2)
