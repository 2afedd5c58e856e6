"""The text of a tensor computed by converted code, found porting Paddle's `test_print.py`:
`str(x)`, `repr(x)`, `format(x)`, `"%s" % x` and an f-string used as a value gave the traced
value's own text (`Variable(%t0: i64[])`) where eager gives the tensor's, and nothing said
so. They are a ConversionError at the user's line (an f-string's text is made when the
program runs now); text of Python values is Python's, and
`print` (f-strings in it too) still prints tensors when the program runs."""
import contextlib
import io

import numpy as np
import pytest

import d2s
import runtime as rt


def as_str(x):
    return str(x.sum())


def as_repr(x):
    return repr(x.sum())


def as_format(x):
    return format(x.sum())


def percent_value(x):
    return "sum=%s" % x.sum()  # noqa: UP031  (the idiom under test)


def fstring_value(x):
    label = f"sum={x.sum()}"
    return label


@pytest.mark.parametrize("fn", [as_str, as_repr, as_format, percent_value])
def test_text_of_a_traced_tensor_is_refused_at_the_line(fn):
    x = rt.ones([5], "int64")
    assert "5" in fn(x)  # eager: the tensor's text
    with pytest.raises(d2s.ConversionError, match="its text exists only when the program runs") \
            as e:
        d2s.to_static(fn)(x)
    assert fn.__name__ in str(e.value) or "test_text_of_traced_values.py" in str(e.value)


def test_an_fstring_value_is_made_when_the_program_runs():
    # (was refused with the others above: `py_format` makes its text when the program runs,
    # tests/d2s/observe_wild/test_fstrings_made_when_run.py)
    x = rt.ones([5], "int64")
    assert d2s.to_static(fstring_value)(x) == fstring_value(x) == f"sum={x.sum()}"


def named_steps(x, n):
    names = []
    for i in range(n):  # a Python range: Python ints, Python text
        names.append("step_%d" % i + f"/{i}")  # noqa: UP031
    if x.sum() > 0:
        y = x * len(names)
    else:
        y = x
    return y, names, str(n)


def test_text_of_python_values_is_pythons():
    static = d2s.to_static(named_steps)
    for a in ([1.0, 2.0], [-3.0, 1.0]):
        x = rt.to_tensor(np.array(a, "float32"))
        y, names, text = static(x, 3)
        want_y, want_names, want_text = named_steps(x, 3)
        np.testing.assert_allclose(y.numpy(), want_y.numpy())
        assert names == want_names == ["step_0/0", "step_1/1", "step_2/2"]
        assert text == want_text == "3"


def shows(x):
    print(f"sum: {x.sum()}")


def test_print_of_an_fstring_still_shows_the_value_when_the_program_runs():
    x = rt.ones([5], "int64")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        d2s.to_static(shows)(x)
    assert out.getvalue().startswith("sum: Tensor(") and "5)" in out.getvalue()


class Scaled:
    scale = 3.0

    @classmethod
    @d2s.to_static
    def apply(cls, x):
        if x.sum() > 0:
            return x * cls.scale
        return x - 1.0


class MoreScaled(Scaled):
    scale = 5.0


def test_classmethod_over_to_static():
    """Paddle's `test_full_name_usage`: the class's `__dict__` is read-only, where d2s kept
    the bound function (an internal TypeError about a mappingproxy)."""
    for owner, k in ((Scaled, 3.0), (Scaled(), 3.0), (MoreScaled, 5.0), (MoreScaled(), 5.0)):
        np.testing.assert_allclose(owner.apply(rt.to_tensor(np.array([1.0, 2.0], "float32")))
                                   .numpy(), [k, 2 * k])
        np.testing.assert_allclose(owner.apply(rt.to_tensor(np.array([-1.0], "float32")))
                                   .numpy(), [-2.0])
