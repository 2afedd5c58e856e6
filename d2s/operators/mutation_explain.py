"""Why the branches of a tensor `if` cannot be one program's outputs: the state whose
structure differs between them (a dict's key set, a list's length, also inside a returned
value), named as the user wrote it (`explain_names`, called by `control_flow.ifelse`)."""
from __future__ import annotations

from runtime.core import is_tensor

from ..errors import ConversionError
from .branch_mismatch import a_dtype as _a
from .branch_mismatch import dtype_difference as _dtype_difference
from .branch_mismatch import none_against_value, not_one_array
from .branch_mismatch import rank as _rank
from .mutation import StateChangeError
from .str_arrays import StrItem
from .variables import Undefined, is_return_value, is_variable, where


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
            value = next(v for v in (*a.items(), *b.items()) if repr(v[0]) == only)[1]
            advice = (  # (a str has no presence flag: the key's value would be text the
                f"Set {name}[{only}] before the if to a str (`''`), which the branch then "
                "changes (a str a tensor `if` chooses converts), or keep a bool tensor "
                "instead") if isinstance(value, (str, bytes)) else (  # run decides)
                f"Set {name}[{only}] before the if (to a tensor of the same shape) and assign "
                "it in both branches")
            raise StateChangeError(
                f"key {only} of the dict '{name}' is set in the {side} branch only of an if "
                f"whose condition is a tensor ({where(src)}); one static program cannot have "
                f"both key sets{' with a str value' if isinstance(value, (str, bytes)) else ''}"
                f". {advice}.", src)
    for name, a, b in zip(names, outs[0], outs[1]):
        _refuse_chosen_text(name, a, b, src)


def _refuse_chosen_text(name: str, a, b, src) -> None:
    """A string (or bytes) that differs between the branches: a program's values are
    tensors of numbers, so which text eager code has would be decided when it runs."""
    found = _text_difference(a, b, "")
    if found is None:
        return
    path, x, y = found
    what = _place(name, path)
    raise ConversionError(
        f"{what} is a string chosen by a tensor condition ({where(src)}): {_shown(x)} in the "
        f"if branch, {_shown(y)} in the else branch. A program computes tensors of numbers, so it "
        "cannot pick a text when it runs. Keep a number or a bool tensor instead (an index "
        "into a tuple of the texts, read after the call: `MODES[int(mode_id)]`), or decide "
        "the `if` with a Python value.", src)


def explain_mismatch(names, outs, src) -> None:
    """Name the variable when the branches of a tensor `if` left it with different structure
    (e.g. lists of different lengths): `cond` itself only knows output positions."""
    if len(outs) < 2:
        return
    for name, a, b in zip(names, outs[0], outs[1]):
        if isinstance(b, Undefined):  # (unbound on one path, a return value not yet set:
            continue  # zeros fill it, `_fill_placeholders`; the difference is elsewhere)
        if isinstance(a, (list, tuple, dict)) and (type(a) is not type(b) or len(a) != len(b)):
            other = (f"one of length {len(b)}" if isinstance(b, (list, tuple, dict)) else
                     "a tensor" if is_variable(b) or is_tensor(b) else type(b).__name__)
            kind = "list" if isinstance(a, list) else type(a).__name__  # (also an empty array)
            what = (f"a {kind} of length {len(a)} in the if branch and {other} "
                    "in the else branch")
            if is_return_value(name):
                raise StateChangeError(
                    f"the returned value has a different structure depending on an if whose "
                    f"condition is a tensor ({where(src)}): {what}; one static program "
                    "returns one structure. Return values of the same structure on every path.")
            raise StateChangeError(
                f"'{name}' is {what} of an if whose condition is a tensor ({where(src)})"
                f"{not_one_array(a, b) or '; both branches must leave it with the same length'}"
                ". Append items of one dtype and rank (cast with rt.cast, or keep other values "
                "in a separate list), or the same number of items in both branches.")
    for name, a, b in zip(names, outs[0], outs[1]):
        if type(a) is dict and type(b) is dict and a.keys() == b.keys() and list(a) != list(b):
            raise StateChangeError(
                f"the dict '{name}' gets its keys in the order {list(a)} in the if branch and "
                f"{list(b)} in the else branch of an if whose condition is a tensor "
                f"({where(src)}); one program keeps one order, which a loop over the dict "
                "would show. Set the keys in the same order in both branches (or before the "
                "if).")
    for name, a, b in zip(names, outs[0], outs[1]):
        found = _dtype_difference(a, b, "")
        if found is not None:
            path, da, db = found
            what = _place(name, path)
            raise ConversionError(
                f"{what} is {_a(da)} tensor in the if branch and {_a(db)} tensor in the else "
                f"branch of an if whose condition is a tensor ({where(src)}): eager code keeps "
                "each path's dtype, so the dtype after the if would depend on data. Cast one "
                "side (`rt.cast(v, ...)`) so both paths give one dtype.", origin=src)
    for name, a, b in zip(names, outs[0], outs[1]):
        found = _dtype_difference(a, b, "", _rank)
        if found is not None:
            path, ra, rb = found
            what = _place(name, path)
            raise ConversionError(
                f"{what} is a tensor of rank {ra} in the if branch and of rank {rb} in the else "
                f"branch of an if whose condition is a tensor ({where(src)}): one static "
                "program gives one rank on every path. Reshape one side (`x.reshape([-1])`, "
                "`x.sum()`) so both paths give one rank.", origin=src)


def explain_none(names, outs, src) -> None:
    """Name the value that is None after one branch and a tensor after the other (a local
    name or the returned value; `mutation.explain` names changed objects' places)."""
    if len(outs) < 2:
        return
    for name, a, b in zip(names, outs[0], outs[1]):
        found = none_against_value(a, b)
        if found is not None:
            path, ka, kb = found
            what = _place(name, path)
            raise ConversionError(
                f"{what} is {ka} in the if branch and {kb} in the else branch of an if whose "
                f"condition is a tensor ({where(src)}): one program value cannot be None for "
                "some inputs only. Give it a tensor on both paths (an empty one, "
                "`rt.zeros([0])`, or a flag beside it), or decide the if with a Python value.",
                origin=src)


def _place(name: str, path: str) -> str:
    """The state a branch difference is in, as the user wrote it (never `_retval`)."""
    if is_return_value(name):
        return "the returned value" + path
    if name.startswith("_ifexp"):
        return "the conditional expression's value" + path
    return f"'{name}{path}'"


def _shown(v) -> str:
    """A branch's value as the user knows it: texts and numbers as written, a tensor by its
    dtype and shape (never a program's internal name)."""
    if isinstance(v, Undefined):
        return "unbound"
    if isinstance(v, StrItem) and hasattr(v, "sep"):  # (a `JoinedStr`)
        return f"the text {v.sep!r}.join() makes of a list of str whose length depends on a tensor"
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
