"""`Literal`: a constant op input that is not an int/float/bool/None (see `ir.py`).

Its own module because the printer and the verifier (which `Program` calls) recognise it
and sit below `ir.py`.
"""
from __future__ import annotations


class Literal:
    """A constant op input that is not an int/float/bool/None (e.g. a string)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Literal) and other.value == self.value

    def __hash__(self):
        return hash(("Literal", repr(self.value)))

    def __repr__(self):
        return repr(self.value)
