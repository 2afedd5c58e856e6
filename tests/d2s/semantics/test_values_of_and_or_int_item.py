"""Values Python gives and converted code must give too, found porting Paddle's
dygraph_to_static tests (`test_logical.py`, `test_cast.py`, `test_item.py`): `and`/`or` used
as a value is the operand that decided (a bool first operand made it a bool scalar, so
`(x > 0) and y` gave True for eager's `y`); `int()`/`float()` of a traced tensor stand for
Python's numbers (int32 wrapped 3e9, float32 rounded 2**24 + 1); `x.item(i, j)` takes an
index as eager does. Each case: eager vs static vs NumPy, with inputs that take different
paths through one converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt


def window(x):
    keep = (x > 2) and (x < 8)  # two bool tensors of one shape: the deciding one
    return keep


def either(x, y):
    flag = (x.sum() > 0) or (y.mean() > 0)
    return flag


@pytest.mark.parametrize("a", [1.0, 5.0, 9.0])
def test_and_of_two_bool_tensors_keeps_the_operand(a):
    static = d2s.to_static(window)
    x = np.array([a], "float32")
    want = (x > 2) if not (x > 2).all() else (x < 8)
    for out in (window(rt.to_tensor(x)), static(rt.to_tensor(x))):
        assert out.shape == [1] and out.dtype == rt.bool
        np.testing.assert_array_equal(out.numpy(), want)


def test_or_of_scalars_through_one_program():
    static = d2s.to_static(either)
    for a, b in ([1.0, -1.0], [-1.0, 2.0], [-1.0, -2.0]):
        x, y = rt.to_tensor(np.array([a, a], "float32")), rt.to_tensor(np.array([b], "float32"))
        want = (a * 2 > 0) or (b > 0)
        out = static(x, y)
        assert out.shape == [] and bool(out) == want == bool(either(x, y))
    assert len(static.program_cache) == 1


def pick(x, y):
    chosen = x > 0 and y  # Python: y itself (int32) where x > 0, else the bool x > 0
    return chosen


def test_and_with_operands_of_other_dtypes_is_refused_at_the_line():
    x, y = rt.to_tensor(np.array([3], "int32")), rt.to_tensor(np.array([7], "int32"))
    assert pick(x, y).numpy().tolist() == [7]  # eager
    with pytest.raises(d2s.ConversionError, match="used as a value") as e:
        d2s.to_static(pick)(x, y)
    assert "chosen = x > 0 and y" in str(e.value)


def count_plus_one(x):
    return int(x) + 1


def as_float_plus_one(x):
    return float(x) + 1


def scaled(t, s):
    return t * float(s)


def test_int_and_float_hold_what_python_numbers_hold():
    for v in (2.5, 3e9):
        x = rt.to_tensor(np.array([v], "float64"))
        want = int(v) + 1
        assert count_plus_one(x) == want
        got = d2s.to_static(count_plus_one)(x)
        assert type(got) is int and got == want
    y = rt.to_tensor(np.array([16777217], "int64"))
    assert as_float_plus_one(y) == 16777218.0
    got = d2s.to_static(as_float_plus_one)(y)
    assert type(got) is float and got == 16777218.0


def test_float_of_a_tensor_takes_the_dtype_of_the_tensor_it_scales():
    t = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    s = rt.to_tensor(np.array([0.5], "float64"))
    eager, static = scaled(t, s), d2s.to_static(scaled)(t, s)
    assert eager.dtype == static.dtype == rt.float32
    np.testing.assert_allclose(static.numpy(), [0.5, 1.0])


def corner(x, k):
    return x.item(2, 1) + x.item(k) * x.item(-1)


def test_item_with_an_index_through_one_program():
    static = d2s.to_static(corner)
    a = np.arange(12, dtype="float64").reshape(3, 4)
    x = rt.to_tensor(a)
    for k in (0, 5, 11):
        want = a.item(2, 1) + a.item(k) * a.item(-1)
        kk = rt.to_tensor(np.int64(k))
        assert corner(x, kk) == want
        got = static(x, kk)
        assert type(got) is float and got == want
    assert len(static.program_cache) == 1


def flat_item(x):
    return x.item(12)


def test_item_out_of_range_is_eagers_index_error():
    x = rt.to_tensor(np.arange(12, dtype="float32").reshape(3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        flat_item(x)
    with pytest.raises(IndexError, match="index 12 is out of bounds for size 12"):
        d2s.to_static(flat_item)(x)


def mean_times(x, t):
    return x.mean().item() * t


def test_item_is_a_python_number_beside_a_tensor():
    x = rt.to_tensor(np.array([1.0, 3.0], "float64"))
    t = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    out = d2s.to_static(mean_times)(x, t)
    assert out.dtype == mean_times(x, t).dtype == rt.float32
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])


def first_row_small(x):
    y = x + 1
    if y.numpy()[0] < 10:  # a row of 3: its truth is ambiguous, eagerly too
        y = y * 2
    return y


def test_truth_of_a_tensor_of_several_elements_is_eagers_value_error():
    x = rt.to_tensor(np.ones([4, 3], "float32"))
    with pytest.raises(ValueError, match="truth value of an array with more than one"):
        first_row_small(x)
    with pytest.raises(ValueError, match="truth value of an array with more than one") as e:
        d2s.to_static(first_row_small)(x)
    assert "'t" not in str(e.value)  # no name of the program's own values


def whole_item(x):
    return x.item()


def test_item_of_several_elements_names_no_program_value():
    with pytest.raises(ValueError, match="only one-element tensors"):
        whole_item(rt.ones([3]))
    with pytest.raises(ValueError, match=r"item\(\) of a tensor of 3 elements \(f32\[3\]\)") \
            as e:
        d2s.to_static(whole_item)(rt.ones([3]))
    assert "'t" not in str(e.value).splitlines()[0]
