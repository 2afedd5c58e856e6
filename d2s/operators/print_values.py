"""What `print` shows of values that hold graph values: a list, tuple or dict holding tensors
(`print(x.shape)` with an unknown batch dim, `print([h, c])`) is printed when the program runs,
element by element as Python's `repr` of the container would show it; a dim, length or size
that eager code has as a Python int prints as that int. A set holding a graph value, or a
dict keyed by one, is refused: which items are equal (how many eager code prints) is known
only when the program runs."""
from __future__ import annotations

import re
import string

import runtime as rt
from runtime.program.debug_ops import prints_as_number, prints_as_run_number

from ..errors import ConversionError
from . import chosen_text, key_flags
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
        _refuse_undecided_keys(x)
        out = ["{"]
        for i, (k, v) in enumerate(x.items()):
            out += ([", "] if i else []) + [repr(k), ": "] + pieces(v)
        return out + ["}"]
    out = ["[" if type(x) is list else "("]
    for i, v in enumerate(x):
        out += ([", "] if i else []) + pieces(v)
    return out + ([",)"] if type(x) is tuple and len(x) == 1 else ["]" if type(x) is list
                                                                   else ")"])


def _refuse_undecided_keys(d: dict) -> None:
    """The text of a dict with a key that exists on some paths only (`key_flags`), or keys
    in an order the run decides: refused at the user's line (which keys, in which order,
    eager code shows is decided when the program runs)."""
    key_flags.check_order(d, "the text of the dict")
    flags = key_flags.flags_of(d)
    if flags:
        src = user_origin(2)
        raise ConversionError(
            f"the text ({where(src)}) of a dict whose key {next(iter(flags))!r} exists only "
            "where a tensor `if` (or a graph loop's trip) set it: which keys eager code "
            "shows is decided when the program runs. Print the values by name "
            "(`d.get('k', default)`, `'k' in d`), or set the key on every path.", origin=src)


def as_print_arg(x):
    """A `print` argument: a container holding graph values becomes an `FString`; a str only
    the run decides (`str_arrays.StrItem`) its id, printed as the str."""
    if (shown := getattr(type(x), "shown_when_run", None)) is not None:
        return shown(x)
    if _container(x) and holds_graph_values(x):
        return FString(pieces(x))
    return x


def _container(x) -> bool:
    """A list, tuple, dict, set or frozenset (also one converted code made: `made_sets`)."""
    return type(x) in (list, tuple, dict) or isinstance(x, (set, frozenset))


class Spec:
    """A value standing for a Python number in an f-string piece with a format spec or a
    conversion (`{loss.item():.4f}`): formatted when the program runs (`print_objects`)."""

    __slots__ = ("conv", "spec", "value")

    def __init__(self, value, spec, conv):
        self.value, self.spec, self.conv = value, spec, conv


def print_objects(objects) -> tuple:
    """(the objects `py_print` prints: graph values, and strs; the (spec, conversion) of each
    `Spec` among them, else None)."""
    shown = [o.value if type(o) is Spec else o if is_variable(o) else str(o) for o in objects]
    return shown, [(o.spec, o.conv) if type(o) is Spec else None for o in objects]


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
    if not any(isinstance(p, Formatted) and (holds_graph_values(p.value) or _run_str(p))
               for p in parts):
        return "".join(p.text() if isinstance(p, Formatted) else p for p in parts)
    if _chosen_only(parts):  # (`f"mode={mode}"`: the text of each str it may be, a chosen str)
        return chosen_text.text_op(lambda *values: "".join(
            Formatted(v, p.conv, p.spec).text() if isinstance(p, Formatted) else p
            for p, v in zip(parts, values)), "an f-string", *(
                p.value if isinstance(p, Formatted) else p for p in parts))
    out = []
    for p in parts:
        if not isinstance(p, Formatted):
            out.append(p)
        elif _run_str(p):  # (`{mode}` of a str a tensor `if` chose: printed as the str)
            out.append(type(p.value).shown_when_run(p.value))
        elif not holds_graph_values(p.value):
            out.append(p.text())
        elif not is_variable(p.value) and not p.spec and p.conv != "a":
            out.extend(pieces(p.value))  # (a container: its repr, element by element)
        elif is_variable(p.value) and (p.spec or p.conv == "a") and (
                p.conv or prints_as_number(p.value) or prints_as_run_number(p.value) or
                getattr(p.value, "number_when", None) is not None):  # (`loss.item():.4f`,
            # `t!r:>9`; a number on some runs)
            out.append(Spec(p.value, p.spec, p.conv))  # (formatted when the program runs)
        elif p.spec or p.conv == "a":
            raise TypeError(
                f"an f-string formats a tensor with {'!a' if p.conv == 'a' else ':' + p.spec}"
                " inside a converted function: the value exists only when the program runs, "
                "where it is printed as eager mode prints a tensor; drop the format spec, or "
                "format a Python number taken out of the tensor outside the function")
        else:
            out.append(p.value)  # (str and repr of a tensor print the same)
    return FString(out)


def _chosen_only(parts) -> bool:
    """Whether the f-string pieces `parts` hold strs a tensor `if` chose, of known strs, and
    no other values only the run decides."""
    values = [p.value for p in parts if isinstance(p, Formatted)]
    return any(getattr(v, "texts", None) is not None for v in values) and not any(
        holds_graph_values(v) or chosen_text.is_run_str(v) and getattr(v, "texts", None) is
        None for v in values)


def _run_str(p) -> bool:
    """Whether the f-string piece `p` is a str only the run decides, shown as it is."""
    return getattr(type(p.value), "shown_when_run", None) is not None and not p.spec and \
        p.conv in ("", "s", None)


def format_text(template: str, *args, **kwargs):
    """`template.format(*args, **kwargs)` as a `print` argument: the str, or where a field
    holds a graph value, the pieces `fstring` makes of it (formatted when the program runs)."""
    if not holds_graph_values([*args, *kwargs.values()]):
        return template.format(*args, **kwargs)
    formatter, parts, auto = string.Formatter(), [], 0
    for literal, field, spec, conv in formatter.parse(template):
        parts.append(literal)
        if field is None:
            continue
        if field == "" or field[0] in ".[":  # (an automatic field number)
            field, auto = f"{auto}{field}", auto + 1
        value = formatter.get_field(field, args, kwargs)[0]
        parts.append(Formatted(value, conv or "", (spec or "").format(*args, **kwargs)))
    return fstring(*parts)


# `%[(key)][flags][width][.precision]type`, as the format spec it stands for
_PERCENT = re.compile(r"%(?:\((\w+)\))?([-+ 0#]*)(\d*)(?:\.(\d+))?([diouxXeEfFgGcrsa%])")


def percent_text(template: str, values):
    """`template % values` as a `print` argument (see `format_text`); `%d` of a float is its
    int, as Python's."""
    items = values if type(values) is tuple else (values,)
    if not holds_graph_values(list(items) + list(values.values() if type(values) is dict
                                                  else ())):
        return template % values
    parts, at, n = [], 0, 0
    for m in _PERCENT.finditer(template):
        key, flags, width, prec, kind = m.groups()
        parts.append(template[at:m.start()])
        at = m.end()
        if kind == "%":
            parts.append("%")
            continue
        value = values[key] if key is not None else items[n]
        n += key is None
        if kind in "diuoxXc":  # (Python's `%` takes int() / float() of the value)
            kind, value = "d" if kind in "diu" else kind, _as_number(value, "int64")
        elif kind in "eEfFgG":
            value = _as_number(value, "float64")
        spec = ("<" if "-" in flags else "") + "".join(c for c in "+ #" if c in flags) + (
            "0" if "0" in flags and "-" not in flags else "") + width + (
            f".{prec}" if prec is not None else "") + (kind if kind not in "rsa" else "")
        parts.append(Formatted(value, kind if kind in "rsa" else "", spec))
    return fstring(*parts, template[at:])


def _as_number(value, dtype: str):
    """`int(value)` (`%d`, truncated as Python does) or `float(value)` (`%f`) of a graph value,
    standing for that Python number; a Python value as it is, `%` converts it itself."""
    if not is_variable(value) or value.dtype == dtype and prints_as_number(value):
        return value
    out = rt.cast(value, dtype)
    out.python_scalar = True
    return eager_int(out) if dtype == "int64" else out
