"""Tensor attributes of a value that is a Python number on some runs and a tensor on others
(issue 33): `b = 1`, then `b = x.mean() * 2` under a tensor `if` (or `b = b + x[i]` in a graph
loop that may run zero times), then `b.item()`, `b.numpy()`, `b.shape`, `b.astype(...)`. Eager
code raises AttributeError ("'int' object has no attribute 'item'") on the runs where `b` is
the number; the converted call returned a value there. Now the program raises eager's error,
at the user's line, on those runs only (an `except AttributeError` catches it), and reads
whose answer one program cannot give (`b.is_integer()`, `getattr(b, 'numpy')`) are a
ConversionError at the line. Inputs take both paths through ONE converted program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import same_with_reference as same

POS = np.array([1.0, -2.0, 3.0], "float32")


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e), str(e).splitlines()[0])


def both_paths(fn, *extra):
    """Eager and static agree for an input taking the branch and one that does not; the
    static call raises where eager does, with eager's class and message, naming the user's
    file."""
    static = d2s.to_static(fn)
    results = []
    for data in (POS, -POS, POS):
        args = (rt.to_tensor(data), *extra)
        want, got = outcome(fn, *args), outcome(static, *args)
        assert got[0] == want[0], (got, want)
        if want[0] == "ok":
            same(got[1], want[1])
        else:
            assert got[1:] == want[1:]
            with pytest.raises(want[1]) as info:
                static(*args)
            notes = "\n".join(getattr(info.value, "__notes__", ()))
            assert "test_number_or_tensor_attributes.py" in notes, notes
        results.append(want)
    assert len(static.program_cache) == 1
    return results


def item_of(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    return b.item()


def numpy_of_arithmetic(x):
    scale = 0.5
    if x.sum() > 0:
        scale = x.max() / 4
    s = scale * 2 + 1
    return s.numpy()


def astype_of(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    return b.astype("float64"), x * 2


def shape_of(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    s = b.shape
    return x + 1, s


@pytest.mark.parametrize("fn", [item_of, numpy_of_arithmetic, astype_of, shape_of])
def test_a_tensor_attribute_raises_where_eager_has_the_number(fn):
    results = both_paths(fn)
    assert results[0][0] == "ok" and results[1][0] == "raised"
    assert results[1][1] is AttributeError and "object has no attribute" in results[1][2]


def caught(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    try:
        v = b.item()
    except AttributeError:
        v = -1.0
    return v


def test_an_except_clause_catches_it():
    results = both_paths(caught)
    assert results[1] == ("ok", -1.0) and type(results[0][1]) is float


def summed(x, n):
    total = 0
    for i in range(n):
        total = total + x[i]
    return total.astype("float64")


def test_a_number_a_loop_that_may_not_run_makes_a_tensor():
    static = d2s.to_static(summed)
    x = rt.to_tensor(POS)
    for n in (0, 2, 0):
        nt = rt.to_tensor(np.array(n))
        want, got = outcome(summed, x, nt), outcome(static, x, nt)
        assert got[0] == want[0]
        if want[0] == "ok":
            same(got[1], want[1])
            np.testing.assert_allclose(want[1].numpy(), POS[:n].sum())
        else:
            assert got[1:] == want[1:] == (AttributeError,
                                           "'int' object has no attribute 'astype'")
    assert len(static.program_cache) == 1


def arithmetic(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    return b + 1, isinstance(b, int)


def test_arithmetic_works_on_both_paths():
    results = both_paths(arithmetic)
    assert results[1] == ("ok", (2, True))


class Gate(rt.nn.Layer):
    """Paddle-style: a scale that is the Python 1.0 unless a learned gate opens."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 1)

    def forward(self, x):
        scale = 1.0
        g = self.fc(x).mean()
        if g > 0:
            scale = g * 0.5 + 1.0
        return x * 2.0, scale.numpy()


def test_a_layer_reading_numpy_of_such_a_value():
    rt.seed(1)
    layer = Gate()
    static = d2s.to_static(layer)
    kinds = set()
    for data in (POS, -POS, POS * 3, -POS * 3):
        x = rt.to_tensor(data[None])
        want, got = outcome(layer, x), outcome(static, x)
        assert got[0] == want[0]
        kinds.add(want[0])
        if want[0] == "ok":
            same(got[1], want[1])
        else:
            assert got[1:] == want[1:] == (AttributeError,
                                           "'float' object has no attribute 'numpy'")
    assert kinds == {"ok", "raised"}


def is_integer_of(x):
    b = 1.5
    if x.mean() > 0:
        b = x.mean() * 2
    return b.is_integer()


def getattr_numpy(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    return getattr(b, "numpy")()  # noqa: B009  (getattr, as written)


def has_item(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    return hasattr(b, "item")


def test_hasattr_is_the_runs_answer():
    results = both_paths(has_item)
    assert [r[1] for r in results] == [True, False, True]


@pytest.mark.parametrize("fn,line", [(is_integer_of, "return b.is_integer()"),
                                     (getattr_numpy, 'return getattr(b, "numpy")()')])
def test_a_read_whose_answer_the_run_decides_is_a_clear_error(fn, line):
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(rt.to_tensor(POS))
    message = str(info.value)
    assert line in message and "on some runs and a tensor on others" in message
    for internal in ("_retval", "Variable(%", "<undefined", "%t"):
        assert internal not in message
