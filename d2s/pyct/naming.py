"""Fresh names for generated code.

Every name the converters introduce is checked against all names used in the function being
converted (and those already generated), so generated names never shadow the user's. The module
alias that generated code uses to reach the operators is reserved: user code may not use it.

>>> n = Namer({"x", "_if_true_1"})
>>> n.new("if_true")
'_if_true_2'
"""
from __future__ import annotations

# The single name generated code uses for the d2s operators module; user code may not use it.
RESERVED = "_d2s"


class Namer:
    def __init__(self, used: set[str]):
        self.used = set(used)
        self.counters: dict[str, int] = {}
        self.generated: set[str] = set()

    @classmethod
    def for_tree(cls, tree) -> Namer:
        """A namer avoiding every name in `tree` (Name ids, function and class names)."""
        from .activity import survey
        return cls(survey(tree).names)

    def new(self, base: str) -> str:
        """'_<base>_<k>' with the smallest k >= 1 that is unused."""
        k = self.counters.get(base, 0)
        while True:
            k += 1
            name = f"_{base}_{k}"
            if name not in self.used:
                break
        self.counters[base] = k
        self.used.add(name)
        self.generated.add(name)
        return name

    def new_plain(self, base: str) -> str:
        """'_<base>' if unused (for names a function has only one of, e.g. '_retval')."""
        name = f"_{base}"
        if name in self.used:
            return self.new(base)
        self.used.add(name)
        self.generated.add(name)
        return name
