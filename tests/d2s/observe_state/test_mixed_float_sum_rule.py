"""`sum()` of a list of Python floats with ints beside them that a graph loop grows (issue 33).
Python 3.12 compensates the rounding of each float it adds but not of an int; the program's
array holds each item's type beside it (`[value, kind]` pairs), so it gives the plain-Python
statement of the rule (`float_sum.python_float_sum`, held against the built-in `sum` of this
interpreter and of a Python 3.12) bit for bit, also where the result depends on which items
are ints (an addition rounded whose compensation an int would change: a TypeError naming the
`sum()` line while the array held the ints as floats). Never a result that differs in the last
bit."""
import inspect
import json
import os
import random
import shutil
import subprocess
import sys

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.operators import float_sum

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning",
                                        "ignore:.*has been traced:UserWarning")

TRICKY = [[1e16, 1, -1e16], [1e16, 1.0, -10**16], [0.1, 0.2, 3], [3, 0.1, 0.2], [2, 0.25, 3],
          [True, 0.5, False], [10**17, 0.5, -10**17], [-0.0, 0], [0, -0.0], [1e308, 1e308, 1],
          [float("inf"), 2, -2.5], [float("nan"), 1], [5, 7], [], [2**53, 1.0, 1]]
STARTS = [0, 0.0, -0.0, 7, 0.7, 2**60]


def _mixed_lists(count: int, seed: int = 33) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        items = []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.4:
                items.append(rng.randint(-10 ** rng.randint(0, 17), 10 ** rng.randint(0, 17)))
            else:
                items.append(rng.choice([1.0, -1.0]) * rng.random() * 10.0 ** rng.randint(-8, 8))
        out.append(items)
    return out


def _bits(v) -> str:
    return repr(float(v)) if isinstance(v, float) else repr(v)


@pytest.mark.parametrize("start", STARTS, ids=repr)
def test_the_statement_is_this_interpreters_sum_of_ints_beside_floats(start):
    for items in TRICKY + _mixed_lists(300):
        assert _bits(float_sum.python_float_sum(items, start)) == _bits(sum(items, start)), (
            items, start)


def _python_3_12() -> str | None:
    if sys.version_info >= (3, 12):
        return sys.executable
    for candidate in ("/root/.pyenv/versions/3.12.1/bin/python", shutil.which("python3.12")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


_CHECK = """
import json, math, sys
cases = json.loads(sys.stdin.read())
{source}
bad = [(items, start) for items, start in cases
       if repr(python_float_sum(items, start, True)) != repr(sum(items, start))]
print(json.dumps([len(cases), bad]))
"""


@pytest.mark.skipif(_python_3_12() is None, reason="no Python 3.12 interpreter here")
def test_the_compensated_statement_is_python_3_12s_sum():
    """The statement's compensated rule, run by a Python 3.12, against that Python's `sum`
    (the statement is plain Python: its source runs there as it is)."""
    source = inspect.getsource(float_sum.python_float_sum).replace(
        "compensated: bool = COMPENSATED", "compensated: bool = True")
    cases = [(items, start) for items in TRICKY + _mixed_lists(2000, seed=34)
             for start in STARTS]
    done = subprocess.run([_python_3_12(), "-c", _CHECK.format(source=source)],
                          input=json.dumps(cases), capture_output=True, text=True, check=True)
    count, bad = json.loads(done.stdout)
    assert count == len(cases) and bad == []


def grown_then_summed(x, n, first, pattern, start):
    items = list(first)
    i = rt.zeros([], "int64")
    while i < n:
        for m, kind in enumerate(pattern):  # (a Python loop: one append per letter)
            v = x[i * len(pattern) + m]
            items.append(int(v) if kind == "i" else float(v))
        i += 1
    return sum(items, start), len(items)


def _items(first, pattern, values) -> list:
    return list(first) + [int(v) if pattern[j % len(pattern)] == "i" else float(v)
                          for j, v in enumerate(values)]


def _run(static, first, pattern, values, start):
    x = np.zeros(64)
    x[:len(values)] = values
    return static(rt.to_tensor(x), rt.to_tensor(len(values) // len(pattern)), first, pattern,
                  start)


# (first items, pattern, values, start, whether Python 3.12's result depends on the int types)
DESIGNED = [([0.5], "if", [2, 0.25, 3, 0.5], 0.0, False),  # every addition exact
            ([0.5], "if", [2, 0.25, 3, 0.5], 0, False),
            ([0.5], "ff", [0.1, 0.2, 0.3, 0.4], 0.0, False),  # floats only
            ([0.1], "fi", [0.2, 3], 0.0, True),  # 0.30000000000000004 + 3 rounds
            ([1e16], "fi", [1.0, -1e16], 0.0, True),  # an int 1 would lose what 1.0 keeps
            ([2.5], "i", [3, 4], 7, False),
            ([0.25], "fi", [0.1, 10**16], 0, True)]


@pytest.mark.parametrize(("first", "pattern", "values", "start", "depends"), DESIGNED)
def test_python_3_12s_rule_bit_for_bit(monkeypatch, first, pattern, values, start, depends):
    monkeypatch.setattr(float_sum, "COMPENSATED", True)
    static = d2s.to_static(grown_then_summed)
    items = _items(first, pattern, values)
    got, length = _run(static, first, pattern, values, start)
    want = float_sum.python_float_sum(items, start, True)
    assert length == len(items) and type(got) is float
    assert _bits(got) == _bits(want), (items, start, got, want)


@pytest.mark.parametrize("compensated", [False, True], ids=["one_by_one", "compensated"])
@pytest.mark.parametrize(("first", "pattern"), [([0.5], "fi"), ([1.5], "iif"), ([2.5, 3], "f")])
def test_the_kernel_is_the_statement_or_refuses(monkeypatch, compensated, first, pattern):
    monkeypatch.setattr(float_sum, "COMPENSATED", compensated)
    static = d2s.to_static(grown_then_summed)
    rng = random.Random(len(pattern))
    refused = returned = 0
    for _ in range(12):
        trips = rng.randint(1, 6)
        values = [rng.randint(-50, 50) if kind == "i" else rng.choice(
            [0.25, -1.5, 0.1, 1e16, 3.0, -7.75, 1e-3]) for _ in range(trips) for kind in pattern]
        items = _items(first, pattern, values)
        for start in (0, 0.0):
            try:
                got, length = _run(static, first, pattern, values, start)
            except TypeError as e:
                assert compensated and "which items were ints" in str(e), e
                refused += 1
                continue
            returned += 1
            want = float_sum.python_float_sum(items, start, compensated)
            assert length == len(items) and _bits(got) == _bits(want), (items, start, got)
            if compensated == (sys.version_info >= (3, 12)):  # this interpreter's rule
                eager = grown_then_summed(rt.to_tensor(np.array(values + [0.0] * 64)),
                                          rt.to_tensor(trips), first, pattern, start)[0]
                assert _bits(eager) == _bits(got)
    assert returned == 24 and refused == 0  # (each item's type known: every sum is exact)
