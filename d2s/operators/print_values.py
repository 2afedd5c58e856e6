"""What `print` shows of values that hold graph values: a list, tuple or dict holding tensors
(`print(x.shape)` with an unknown batch dim, `print([h, c])`) is printed when the program runs,
element by element as Python's `repr` of the container would show it; a dim, length or size
that eager code has as a Python int prints as that int. A set holding a graph value, or a
dict keyed by one, is refused: which items are equal (how many eager code prints) is known
only when the program runs."""
from __future__ import annotations

from runtime.ops.array_number_kinds import holds_tensor_items

from ..errors import ConversionError
from .variables import is_variable, user_origin, where


class FString(tuple):
    """An f-string or container argument of `print` that holds a graph value: its pieces
    (strings and graph values), printed when the program runs."""


def eager_int(v):
    """Mark `v` (a 0-d int64 graph value) as what eager code holds as a Python int (a dim, a
    length, a size): `print` shows it as that int, not as a tensor."""
    if is_variable(v):
        v.eager_int = True
        v.python_scalar = True  # (returned, it is that int; see `Variable.python_scalar`)
    return v


def holds_graph_values(x, depth: int = 0) -> bool:
    if is_variable(x):
        return True
    if depth > 8 or not _container(x):
        return False
    items = [*x.keys(), *x.values()] if type(x) is dict else x
    return any(holds_graph_values(v, depth + 1) for v in items)


def pieces(x) -> list:
    """`repr(x)` as pieces: strings, and graph values left for the program to format."""
    if is_variable(x):
        return [x]
    if not _container(x) or not holds_graph_values(x):
        return [repr(x)]
    if isinstance(x, (set, frozenset)) or type(x) is dict and holds_graph_values(list(x)):
        src = user_origin()
        kind = "set" if isinstance(x, set) else "frozenset" if isinstance(x, frozenset) else \
            "dict"
        raise ConversionError(
            f"the text ({where(src)}) of a {kind} holding a value computed by the "
            "converted code (as an item or key): which items are equal, and so what eager "
            "code shows, is known only when the program runs. Print the tensors the items "
            "are made of instead.", src)
    if type(x) is dict:
        out = ["{"]
        for i, (k, v) in enumerate(x.items()):
            out += ([", "] if i else []) + [repr(k), ": "] + pieces(v)
        return out + ["}"]
    out = ["[" if type(x) is list else "("]
    for i, v in enumerate(x):
        out += ([", "] if i else []) + pieces(v)
    return out + ([",)"] if type(x) is tuple and len(x) == 1 else ["]" if type(x) is list
                                                                   else ")"])


def as_print_arg(x):
    """A `print` argument: a container holding graph values becomes an `FString`."""
    if is_variable(x) and x.is_array and holds_tensor_items(x):  # (`tensor_items`)
        raise ConversionError(
            "print() of a list holding Python numbers and tensors whose length a tensor "
            "decides: d2s reads such a list item by item only. Print its items in a loop "
            "(`for v in out: print(v)`), or return it and print after the call.")
    if _container(x) and holds_graph_values(x):
        return FString(pieces(x))
    return x


def _container(x) -> bool:
    """A list, tuple, dict, set or frozenset (also one converted code made: `made_sets`)."""
    return type(x) in (list, tuple, dict) or isinstance(x, (set, frozenset))


class Formatted:
    """One `{value!conv:spec}` of an f-string passed to `print` (see `fstring`)."""

    __slots__ = ("conv", "spec", "value")

    def __init__(self, value, conv, spec):
        self.value, self.conv, self.spec = value, conv, spec

    def text(self) -> str:
        v = self.value
        v = repr(v) if self.conv == "r" else ascii(v) if self.conv == "a" else (
            str(v) if self.conv == "s" else v)
        return format(v, self.spec)


def formatted(value, conv, spec):
    return Formatted(value, conv, spec)


def fstring(*parts):
    """An f-string in a `print` call: the string, as Python makes it, unless a piece is a
    graph value (then an `FString` that `print_` prints when the program runs)."""
    if not any(isinstance(p, Formatted) and holds_graph_values(p.value) for p in parts):
        return "".join(p.text() if isinstance(p, Formatted) else p for p in parts)
    out = []
    for p in parts:
        if not isinstance(p, Formatted):
            out.append(p)
        elif not holds_graph_values(p.value):
            out.append(p.text())
        elif not is_variable(p.value) and not p.spec and p.conv != "a":
            out.extend(pieces(p.value))  # (a container: its repr, element by element)
        elif p.spec or p.conv == "a":
            raise TypeError(
                f"an f-string formats a tensor with {'!a' if p.conv == 'a' else ':' + p.spec}"
                " inside a converted function: the value exists only when the program runs, "
                "where it is printed as eager mode prints a tensor; drop the format spec, or "
                "format a Python number taken out of the tensor outside the function")
        else:
            out.append(p.value)  # (str and repr of a tensor print the same)
    return FString(out)
