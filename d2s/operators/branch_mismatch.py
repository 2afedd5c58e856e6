"""Why a place's values after the two branches of a tensor `if` cannot be one program value,
and what to write instead (`mutation.Log.explain`'s message parts)."""
from __future__ import annotations

from .variables import Undefined, is_variable

MISSING = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()  # a place unset


def mismatch(a, b) -> str:
    """Why the values `a` and `b` of one place after the two branches of a tensor `if` cannot
    be one op output ("is set in the if branch only", ...), or ""."""
    a = MISSING if isinstance(a, Undefined) else a
    b = MISSING if isinstance(b, Undefined) else b
    if (a is MISSING) != (b is MISSING):
        side = "else" if b is MISSING else "if"
        return f"is set in the {'if' if side == 'else' else 'else'} branch only"
    if isinstance(a, list) and isinstance(b, list) and len(a) != len(b):
        return f"is a list of length {len(a)} in the if branch and {len(b)} in the else branch"
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() != b.keys():
        return (f"is a dict with keys {sorted(map(str, a))} in the if branch and "
                f"{sorted(map(str, b))} in the else branch")
    ta = is_variable(a) or isinstance(a, (int, float))
    tb = is_variable(b) or isinstance(b, (int, float))
    if ta != tb or (not ta and type(a) is not type(b)):
        return (f"is {_kind(a)} in the if branch and {_kind(b)} in the else branch")
    return ""


def _kind(v) -> str:
    return "a tensor" if is_variable(v) else "None" if v is None else type(v).__name__


def advice(slot) -> str:
    if slot.kind == "list":
        return ("Append the same number of items in both branches, or collect the values "
                "in a tensor (rt.concat / rt.where) instead of a list.")
    if slot.kind in ("dict", "attr", "global"):
        return ("Set it before the if (to a tensor of the same shape), then assign it in "
                "both branches.")
    return "Give it a tensor value of the same dtype in both branches."
