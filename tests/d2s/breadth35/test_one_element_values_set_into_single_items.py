"""A one-element value of shape [1] assigned to a single item (Paddle's test_jit_setitem.py
idiom: `pad_list[3] = H // 2` with `H = rt.full([1], 6, "int32")`, then `F.pad(x,
pad_list)`): Paddle assigns it; the runtime raised NumPy's "setting an array element with a
sequence", eagerly and in the program. Leading 1s beyond the selection's rank are dropped (as
the op's shape rule already allowed), in eager code, in converted code, and in the gradient
back to the value."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F


def padded(x, h, w):
    pads = rt.zeros([4], dtype="int32")
    pads[3] = h // 2
    pads[1] = w // 2
    out = F.pad(x, pads, data_format="NHWC")
    if h > w:
        out = out * 2
    return out


def row_from_value(x, v):
    y = x * 1.0
    y[1] = v * 2.0
    y[0, 2] = v[0, 0, 1]
    return y


def _ref_padded(x, h, w):
    out = np.pad(x, [(0, 0), (0, h // 2), (0, w // 2), (0, 0)])
    return out * 2 if h > w else out


@pytest.mark.parametrize("h, w", [(6, 4), (2, 8)])
def test_pad_list_set_from_one_element_tensors(h, w):
    x = np.ones((1, 3, 3, 2), "float32")
    args = lambda: (rt.to_tensor(x), rt.full([1], h, "int32"), rt.full([1], w, "int32"))
    want = padded(*args())
    got = d2s.to_static(padded)(*args())
    np.testing.assert_array_equal(want.numpy(), _ref_padded(x, h, w))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.shape == want.shape


def test_value_with_leading_ones_and_its_gradient():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    v = np.array([[[5.0, 6.0, 7.0]]], "float32")
    ref = x.copy()
    ref[1] = v[0, 0] * 2
    ref[0, 2] = v[0, 0, 1]
    static = d2s.to_static(row_from_value)
    for fn in (row_from_value, static):
        xt, vt = rt.to_tensor(x), rt.to_tensor(v, stop_gradient=False)
        y = fn(xt, vt)
        np.testing.assert_array_equal(y.numpy(), ref)
        (g,) = rt.grad([y.sum()], [vt])
        np.testing.assert_array_equal(g.numpy(), [[[2.0, 3.0, 2.0]]])
