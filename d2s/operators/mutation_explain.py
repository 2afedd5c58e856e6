"""Why the branches of a tensor `if` cannot be one program's outputs: the state whose
structure differs between them (a dict's key set, a list's length, also inside a returned
value), named as the user wrote it (`explain_names`, called by `control_flow.ifelse`)."""
from __future__ import annotations

from ..errors import ConversionError
from .branch_mismatch import not_one_array
from .mutation import StateChangeError
from .str_arrays import StrItem
from .variables import Undefined, is_return_value, where


def _difference(a, b, path):
    """The first place where two branch values differ in structure: (path, a, b) or None."""
    if type(a) in (list, tuple) and type(b) is type(a):
        if len(a) != len(b):
            return path, a, b
        for i, (x, y) in enumerate(zip(a, b)):
            d = _difference(x, y, f"{path}[{i}]")
            if d:
                return d
    elif isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return path, a, b
        for k in a:
            d = _difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
    return None


def explain_names(names, outs, src) -> None:
    """State whose structure differs between the branches: name the place (a dict key set,
    a list length, also inside a returned value)."""
    if len(outs) < 2:
        return
    for name, a, b in zip(names, outs[0], outs[1]):
        if is_return_value(name) and not (a is None or b is None):
            d = _difference(a, b, "the returned value")
            if d:
                path, x, y = d
                raise StateChangeError(
                    f"{path} has a different structure depending on an if whose condition is "
                    f"a tensor ({where(src)}): {_shape_of(x)} in the if branch, {_shape_of(y)} "
                    f"in the else branch{not_one_array(x, y)}; one static program returns one "
                    "structure. Return values of the same structure on every path (a list of "
                    "tensors of one dtype and rank may differ in length).", src)
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() != b.keys():
            only = sorted(map(repr, a.keys() ^ b.keys()))[0]
            side = "if" if only in map(repr, a) else "else"
            raise StateChangeError(
                f"key {only} of the dict '{name}' is set in the {side} branch only of an if "
                f"whose condition is a tensor ({where(src)}); one static program cannot have "
                f"both key sets. Set {name}[{only}] before the if (to a tensor of the same "
                "shape) and assign it in both branches.", src)
    for name, a, b in zip(names, outs[0], outs[1]):
        _refuse_chosen_text(name, a, b, src)


def _refuse_chosen_text(name: str, a, b, src) -> None:
    """A string (or bytes) that differs between the branches: a program's values are
    tensors of numbers, so which text eager code has would be decided when it runs."""
    found = _text_difference(a, b, "")
    if found is None:
        return
    path, x, y = found
    what = ("the returned value" + path) if is_return_value(name) else \
        "the conditional expression's value" + path if name.startswith("_ifexp") else \
        f"'{name}{path}'"
    raise ConversionError(
        f"{what} is a string chosen by a tensor condition ({where(src)}): {_shown(x)} in the "
        f"if branch, {_shown(y)} in the else branch. A program computes tensors of numbers, so it "
        "cannot pick a text when it runs. Keep a number or a bool tensor instead (an index "
        "into a tuple of the texts, read after the call: `MODES[int(mode_id)]`), or decide "
        "the `if` with a Python value.", src)


def _shown(v) -> str:
    """A branch's value as the user knows it: texts and numbers as written, a tensor by its
    dtype and shape (never a program's internal name)."""
    if isinstance(v, Undefined):
        return "unbound"
    if isinstance(v, StrItem):
        return "a str read from a list of str whose length depends on a tensor"
    if isinstance(v, (str, bytes, bool, int, float)) or v is None:
        return repr(v)
    if hasattr(v, "dtype") and hasattr(v, "shape"):
        return f"a {getattr(v.dtype, 'name', v.dtype)} tensor of shape {list(v.shape)}"
    return f"a {type(v).__name__}"


def _text_difference(a, b, path):
    """The first place where the branches hold different strings: (path, a, b) or None."""
    if isinstance(a, StrItem) or isinstance(b, StrItem):  # (a str the run decides)
        return None if a is b else (path, a, b)
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return None if type(a) is type(b) and a == b else (path, a, b)
    if type(a) in (list, tuple) and type(b) is type(a) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = _text_difference(x, y, f"{path}[{i}]")
            if d:
                return d
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            d = _text_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
    return None


def _shape_of(v) -> str:
    if type(v) in (list, tuple):
        return f"a {type(v).__name__} of length {len(v)}"
    if isinstance(v, dict):
        return f"a {type(v).__name__} with keys {sorted(map(str, v))}"
    return type(v).__name__
