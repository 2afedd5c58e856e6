"""Why a place's values after the two branches of a tensor `if` cannot be one program value,
and what to write instead (`mutation.Log.explain`'s message parts)."""
from __future__ import annotations

from runtime.core import is_tensor

from .variables import Undefined, is_variable, where

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


def none_against_value(a, b, path: str = ""):
    """(path, kind of a, kind of b) of the first place of one structure that is None after one
    branch of a tensor `if` and a tensor or number after the other, or None."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = none_against_value(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if (a is None) != (b is None) and not isinstance(a, Undefined) and not isinstance(
            b, Undefined):
        return path, _kind(a), _kind(b)
    return None


def set_mismatch(a: tuple, b: tuple) -> str:
    """`mismatch` for a set's items (tuples) after the two branches, which differ."""
    if len(a) != len(b):
        return f"is a set of size {len(a)} in the if branch and {len(b)} in the else branch"
    return "is a set holding other items in the if branch than in the else branch"


def _kind(v) -> str:
    return "a tensor" if is_variable(v) else "None" if v is None else type(v).__name__


def advice(slot) -> str:
    if slot.kind == "list":
        return ("Append items of one dtype and rank (or the same number of items in both "
                "branches), or collect the values in a tensor (rt.concat / rt.where).")
    if slot.kind == "set":
        return ("A set holds Python values, so a program cannot add or remove one on the "
                "inputs that take one branch only. Change the set alike in both branches, keep "
                "what it tracks in a tensor (a bool mask, rt.unique), or decide the if with a "
                "Python value (code after a `return` inside such an if is its else branch).")
    if slot.kind in ("dict", "attr", "global"):
        return ("Set it before the if (to a tensor of the same shape), then assign it in "
                "both branches.")
    return "Give it a tensor value of the same dtype in both branches."


def not_one_array(a, b) -> str:
    """Why two branch values of one place, lists of different lengths, cannot become one
    tensor array (what `branch_arrays.array_paths` found no dtype for): "; its items are
    ... (a list whose length ...)", or "" when they are not such lists."""
    if not (isinstance(a, list) and isinstance(b, list) and len(a) != len(b)):
        return ""
    kind = _items_kind(a + b)
    if kind is None:  # (items that could be one array: something else is the reason)
        return ""
    return (f"; its items are {kind}, but a list whose length depends on a "
            "tensor condition becomes a tensor array, which holds tensors of one dtype and "
            "rank or Python numbers of one type")


def _items_kind(items: list) -> str | None:
    tensors = [x for x in items if is_variable(x) or is_tensor(x)]
    numbers = [x for x in items if type(x) in (bool, int, float)]
    other = next((x for x in items if not (is_variable(x) or is_tensor(x))
                  and type(x) not in (bool, int, float)), MISSING)
    if isinstance(other, (tuple, list, dict)):  # (one structure of tensors would be arrays)
        return f"{type(other).__name__}s whose structures or item types differ"
    if other is not MISSING:
        held = "None" if other is None else f"the {type(other).__name__} {_short(other)}"
        return f"not all tensors or numbers (it holds {held})"
    if tensors and numbers:
        return f"tensors and Python {type(numbers[0]).__name__}s"
    if numbers:
        return "Python numbers of types " + " and ".join(
            sorted({type(x).__name__ for x in numbers}))
    dtypes = sorted({getattr(x.dtype, "name", str(x.dtype)) for x in tensors})
    if len(dtypes) > 1:
        return "tensors of dtypes " + " and ".join(dtypes)
    ranks = sorted({str(len(x.shape)) for x in tensors})
    return "tensors of ranks " + " and ".join(ranks) if len(ranks) > 1 else None


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def rank(t) -> int:
    return len(t.shape)


def a_dtype(dtype: str) -> str:
    """`dtype` with its article: 'a float32', 'an int64'."""
    return ("an " if dtype[:1] in "aeiou" else "a ") + dtype


def dtype_name(t) -> str:
    return getattr(t.dtype, "name", str(t.dtype))


def dtype_difference(a, b, path, prop=dtype_name):
    """(path, prop(a), prop(b)) of the first tensors of one structure where `prop` (the dtype,
    or another property) differs."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            found = dtype_difference(x, y, f"{path}[{i}]", prop)
            if found is not None:
                return found
        return None
    if not (is_tensor(a) and is_tensor(b)) or prop is rank and (
            getattr(a, "is_array", False) or getattr(b, "is_array", False)):
        return None
    if prop(a) != prop(b):
        return path, prop(a), prop(b)
    return None


def changed_deque(dq, snap: tuple, path: str = "", src=None) -> str:
    """Why a `collections.deque` that the trace of a tensor `if` branch or a graph loop body
    changed cannot be converted ("" where it did not change): the trace runs its code once,
    so its `append`/`clear` would happen once, whatever the run decides."""
    if len(dq) == len(snap) and all(a is b for a, b in zip(dq, snap)):
        return ""
    return (f"{path} is a collections.deque changed inside an if whose condition is a tensor "
            f"or a loop the program runs ({where(src)}): converted code follows lists, not "
            "deques (their append/clear would run once, when traced). Use a list there "
            "(`window.append(x); window = window[-n:]` for a deque with maxlen=n)")
