"""A dict's `keys()` / `items()` view against a set converted code made, where the converter
cannot see the view (a helper's parameter): the view's own `&`, `-`, `^` iterate the made set
and compare its items by hash and equality, which for a value the program computes
(`int(x.argmax())`) is the trace's identity. Such a made set is refused there at the user's
line, as `made & view` and `view & made` written in one function are (before: eager 1 common
key, the converted call 0, silently); one of Python values gives eager's answer."""
import numpy as np
import pytest

import d2s
import runtime as rt

DATA = [[0.0, 5.0, 1.0], [9.0, 1.0, 1.0], [1.0, 1.0, 7.0], [-1.0, -3.0, -0.5]]


def common(keys, wanted):
    return keys & wanted


def missing(items, wanted):
    return items - wanted


def either(keys, wanted):
    return keys ^ wanted


def none_shared(keys, wanted):
    return keys.isdisjoint(wanted)


def computed(x, table):
    wanted = {int(x.argmax()), 7}
    return x * 2.0, len(common(table.keys(), wanted))


def computed_items(x, table):
    wanted = {(int(x.argmax()), 1)}
    return x * 2.0, len(missing(table.items(), wanted))


def computed_disjoint(x, table):
    wanted = {int(x.argmax())}
    return x * 2.0, none_shared(table.keys(), wanted)


@pytest.mark.parametrize("fn, line", [(computed, "return keys & wanted"),
                                      (computed_items, "return items - wanted"),
                                      (computed_disjoint, "return keys.isdisjoint")])
def test_a_view_against_computed_items_is_refused_at_the_line(fn, line):
    static = d2s.to_static(fn)
    with pytest.raises(d2s.ConversionError, match=r"line \d+: +" + line.replace(".", r"\.")):
        static(rt.to_tensor(np.array(DATA[0], "float32")), {0: 1, 1: 1})


def python_values(x, table, names):
    wanted = {"a", "c", len(names)}
    if x.sum() > 0:  # (a tensor `if`: the inputs take both paths of one program)
        y = x * 2.0
    else:
        y = x - 1.0
    return (y, sorted(map(str, common(table.keys(), wanted))),
            sorted(map(str, either(table.keys(), wanted))),
            sorted(map(str, missing(table.items(), {("a", 1)}))), none_shared(table.keys(),
                                                                             wanted))


def test_a_view_against_python_values_is_eagers():
    static = d2s.to_static(python_values)
    for data in DATA:
        for table in ({"a": 1, "b": 2}, {"c": 3, 2: 0}):
            want = python_values(rt.to_tensor(np.array(data, "float32")), table, ["p", "q"])
            got = static(rt.to_tensor(np.array(data, "float32")), table, ["p", "q"])
            np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
            assert got[1:] == want[1:]
