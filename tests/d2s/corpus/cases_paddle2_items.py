"""More idioms of Paddle's dygraph-to-static item-assignment tests (test_jit_setitem.py,
test_slice.py, test_set_value.py), in new words: `y[...] = x[...] + c` with ints, slices with
steps, lists of ints, `...`, int tensors and 0-d int tensors as indices, each followed by the
input's gradient (`rt.grad`); a value tensor's own gradient; rows set in loops over
`rt.shape(b)[0]` and over Python ranges; a shifted copy through `clone()`; a pad list built
by item assignment from tensor halves."""
import numpy as np

import runtime as paddle
import runtime.nn.functional as F

from .registry import case, i64, rand


def _with_grad(x, fn):
    x.stop_gradient = False
    y = fn(x)
    (g,) = paddle.grad([y.sum()], [x])
    return y, g


@case(args=[(rand(4, 3, 2),), (rand(4, 3, 2) + 2,)])
def setitem_strided_slice_with_grad(x):
    def f(x):
        y = x + 1
        y[1::2] = x[1::2] * 3
        if x.mean() > 1:
            y[:, 2] = x[:, 2] + 99
        return y
    return _with_grad(x, f)


@case(args=[(rand(4, 3, 2),), (rand(4, 3, 2) + 2,)])
def setitem_int_pairs_and_ellipsis_with_grad(x):
    def f(x):
        y = x + 1
        y[[1, 2], [2, 0]] = x[[1, 2], [2, 0]] * 5
        if x.mean() > 1:
            y[1, ..., 1] = x[1, ..., 1] + 10
        else:
            y[1, :, 0] = x[1, :, 0] - 10
        return y
    return _with_grad(x, f)


@case(args=[(rand(4, 3, 2), i64([1, 2])), (rand(4, 3, 2), i64([3]))])
def setitem_int_tensor_index_with_grad(x, index):
    def f(x):
        y = x + 1
        y[index] = x[index] * 2 + 99
        return y
    y, g = _with_grad(x, f)
    if index.shape[0] > 1:
        g = g * 2
    return y, g


@case(args=[(rand(4, 3, 2) + 2,), (rand(4, 3, 2) - 2,)])
def setitem_zero_d_tensor_indices(x):
    y = x + 1
    one = paddle.to_tensor(1, dtype="int64")
    two = paddle.to_tensor(1, dtype="int64")
    if x.mean() > 0:
        y[one, :, two] = x[1, :, two] + 100
    else:
        y[one, 1] = x[one, 2] * 3
    return y


@case(args=[(rand(4, 3, 2),), (rand(4, 3, 2) - 2,)])
def setitem_ellipsis_slice_scaled_in_place(x):
    y = x + 1
    y[..., 0:1] = y[..., 0:1] * 100
    if y.mean() > 10:
        y[..., 1:] = 0
    return y


@case(args=[(rand(3, 4), rand(4)), (rand(3, 4), rand(4) + 2)])
def setitem_value_gets_gradient(x, value):
    x.stop_gradient = False
    value.stop_gradient = False
    y = x + 1
    if value.mean() > 1:
        y[2] = value * 2
    else:
        y[0] = value
    gx, gv = paddle.grad([y.sum()], [x, value])
    return y, gx, gv


@case(args=[([4, 3, 2],), ([2, 3],)])
def rows_set_in_loop_over_shape_tensor(shape):
    res = paddle.zeros(shape)
    b = paddle.zeros(shape)
    v = paddle.to_tensor(1.0)
    for i in range(paddle.shape(b)[0]):
        res[i] = v + i
    for i in range(len(shape)):
        res[0] = res[0] * 2
    return res


@case(args=[(2,), (3,)])
def shifted_copy_through_clone(rows):
    data = np.arange(rows * 4).reshape((rows, 4)).astype("float32")
    x = paddle.to_tensor(data)
    x[:, 1:] = x[:, :-1].clone()
    x[:, 0] = 1
    if rows > 2:
        x[-1] = x[0]
    return x.flatten()


@case(args=[(i64([6]), i64([4])), (i64([3]), i64([8]))])
def pad_list_built_by_item_assignment(h, w):
    x = paddle.ones((1, 6, 6, 3))
    b, _, _, c = x.shape
    pad_list = paddle.zeros([4], dtype="int32")
    pad_list[3] = h // 2
    pad_list[1] = w // 2
    out = F.pad(x, pad_list, data_format="NHWC")
    if h > w:
        out = out * 2
    return out, out.shape[1] * 0 + b + c


@case(args=[(rand(5),), (rand(5) + 3,)])
def getitem_by_bool_mask_and_tensor_bounds(x):
    mask = x > 1
    picked = x[mask]
    n = paddle.shape(picked)[0]
    if n > 2:
        head = picked[:2]
    else:
        head = x[:2]
    return head, x[paddle.to_tensor(1):paddle.to_tensor(4)]
