"""`type()` and `isinstance()` inside converted code of the containers a graph loop grows
(issue 35): a tuple grown in a loop over a tensor range (a tensor array marked a tuple), a
list of tensors, of strs or of tuples (tensor arrays, a list of structures) gave `Variable`
(`StructArray`) and `isinstance(out, tuple)` False; they are eager's `tuple` and `list`, a
graph loop's counter is `int` and a tensor is `rt.Tensor`. One program for the trip counts 0,
1 and 3."""
import numpy as np

import d2s
import runtime as rt


def kinds(x, n):
    out = ()
    rows = []
    names = []
    pairs = []
    k = 0
    for i in range(n):
        out = out + (x[i],)
        rows.append(x[i] * 2.0)
        names.append("a")
        pairs.append((x[i], x[i] + 1.0))
        k = i
    return (type(out).__name__, isinstance(out, tuple), isinstance(out, list),
            type(rows) is list, isinstance(rows, (list, tuple)), isinstance(rows, dict),
            type(names).__name__, type(pairs) is list, isinstance(pairs, list),
            isinstance(pairs, tuple), type(x).__name__, isinstance(x, rt.Tensor),
            type(k).__name__, len(out))


class Collect:
    def __init__(self):
        self.seen = ()

    def __call__(self, x, n):
        for i in range(n):
            self.seen = self.seen + (x[i],)
        return "tuple" if isinstance(self.seen, tuple) else "other"


def test_types_of_containers_a_graph_loop_grows():
    static = d2s.to_static(kinds, full_graph=True)
    x = rt.to_tensor(np.array([1.0, -2.0, 3.0], "float32"))
    for k in (0, 1, 3):
        n = rt.to_tensor(k)
        want = ("tuple", True, False, True, True, False, "list", True, True, False,
                "Tensor", True, "int", k)
        assert kinds(x, n) == want
        got = static(x, n)
        assert tuple(int(v) if i == 13 else v for i, v in enumerate(got)) == want
    assert len(static.program_cache) == 1


def test_isinstance_of_a_tuple_attribute_grown_in_a_graph_loop():
    x = rt.to_tensor(np.array([1.0, -2.0, 3.0], "float32"))
    for k in (0, 2):
        assert Collect()(x, rt.to_tensor(k)) == "tuple"
        assert d2s.to_static(Collect().__call__, full_graph=True)(x, rt.to_tensor(k)) == \
            "tuple"


def number_or_tensor(x):
    b = 1
    if x.mean() > 0:
        b = x.mean() * 2
    return type(b).__name__


def test_type_of_a_number_on_some_runs_only_is_the_runs():
    x = rt.to_tensor(np.array([1.0, -2.0, 3.0], "float32"))
    assert number_or_tensor(x) == "Tensor" and number_or_tensor(-x) == "int"
    static = d2s.to_static(number_or_tensor, full_graph=True)  # (was refused: `run_types`)
    assert static(x) == "Tensor" and static(-x) == "int"
    assert len(static.program_cache) == 1