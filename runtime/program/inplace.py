"""Writing an elementwise result into the array of an input that dies at that op.

The generated code frees each value after its last use (`codegen.py`); when that last use is
an elementwise NumPy call of the same shape (`add`, `tanh`, `relu`, ...), the result can go
into the dying input's array (`out=`) instead of a new one: one allocation less, and one
array less alive at the peak. The compiler only picks candidates; whether the array may be
overwritten is decided when the program runs: it must own its memory (`.base is None`, so
it is no view of another array) and nothing but the generated code may reference it (its
reference count is exactly what the calling code itself holds). A feed, a parameter, a value
saved for the backward pass, a value fetched or seen by a hook all hold references, so their
arrays are never written.
"""
from __future__ import annotations

import sys

import numpy as np

ELEMENTWISE = frozenset(("add", "subtract", "multiply", "divide", "neg", "tanh", "exp",
                         "maximum", "minimum", "relu"))
MIN_ELEMENTS = 1 << 12  # below this a new array is as cheap as the test

_rc = sys.getrefcount


def _count_in_call(a):
    return _rc(a)


def _probe(f, a, c):
    return c


def _baseline() -> int:
    """The reference count an array held only by one local variable shows inside the owner
    test, called as generated code calls it (`f(v, ..., out=test(v))`: one argument already
    on the stack). Measured, not assumed: it differs between Python versions."""
    a = np.empty(1)
    return _probe(None, a, _count_in_call(a))


_BASE = _baseline()
_TESTS: dict = {}


def owner_test(count: int):
    """`test(a)`: `a` when the call that passes `a` `count` times before `out=test(a)` may
    overwrite it, else None (a new array)."""
    test = _TESTS.get(count)
    if test is None:
        want = _BASE + count - 1

        def test(a, _rc=_rc, want=want):
            return a if a.base is None and _rc(a) == want else None

        _TESTS[count] = test
    return test
