"""`json.dumps(obj)` in converted code where `obj` holds Python numbers the program computes
(`json.dumps({"loss": loss.item(), "acc": correct / n})`, a metrics line a training step
logs or returns): eager code gives the text of the numbers; the trace has graph values. The
text is made when the program runs, as an f-string's is (`text.text`: a `py_format` op, a
`MadeText`): the structure's text is what `json.dumps` makes of it now (keys, nesting,
`indent`, `separators`, `sort_keys`), each number written as `json.dumps` writes it (`NaN`,
`true`, `0.30000000000000004`) when the program runs.

What eager `json.dumps` refuses, the trace refuses alike (a Tensor: `TypeError: Object of
type Tensor is not JSON serializable`); what only the run decides is refused at the user's
line with a clear error (a value that is a number on some runs and a tensor on others, a
NumPy value, a key computed by the program, `allow_nan=False`, `default=` / `cls=`).

    json.dumps(d)   ->   _d2s.call(json.dumps)(d)   ->   `dumps(d)`   (`operators.calls`)
"""
from __future__ import annotations

import json
import re

import runtime as rt
from runtime.program.debug_ops import prints_as_number, prints_as_run_number

from ..errors import ConversionError
from .print_values import Spec, holds_graph_values, print_objects
from .str_arrays import MadeText
from .variables import is_variable, user_origin, where

_AS_JSON = "j"  # (the conversion `py_format` writes a number with, as `json.dumps` does)
_MARK = "\x00d2s-json-{}\x00"  # (a stand-in for the k-th number; json writes \x00 escaped)
_MARKED = re.compile(r'"\\u0000d2s-json-(\d+)\\u0000"')
_RUN_ONLY = ("allow_nan", "default", "cls")


def dumps(obj, *args, **kwargs):
    """`json.dumps(obj, ...)`, its numbers written when the program runs (see the module)."""
    if not holds_graph_values(obj):
        return json.dumps(obj, *args, **kwargs)
    src = user_origin()
    if args or any(k in kwargs for k in _RUN_ONLY):
        _refuse("with positional options, `allow_nan`, `default` or `cls`", src)
    numbers: list = []
    pieces = _MARKED.split(json.dumps(_stand_ins(obj, numbers, src), **kwargs))
    objects = [Spec(numbers[int(p)], "", _AS_JSON) if k % 2 else p  # (`sort_keys`: in the
               for k, p in enumerate(pieces)]  # text's order)
    return MadeText(rt.static.py_format(*print_objects(objects)))


def _stand_ins(x, numbers: list, src, depth: int = 0):
    """`x` with each graph value standing for a Python number as a marker str (`numbers`
    gets the values, in the order `json.dumps` writes them)."""
    if is_variable(x):
        if x.numpy_array or getattr(x, "number_when", None) is not None or getattr(
                x, "str_item", False):
            _refuse("of a value whose type only the run decides (a NumPy value, a number "
                    "on some runs and a tensor on others, a str a tensor chose)", src)
        if not (prints_as_number(x) or prints_as_run_number(x)):  # (a tensor: as eager)
            raise TypeError("Object of type Tensor is not JSON serializable")
        numbers.append(x)
        return _MARK.format(len(numbers) - 1)
    if depth > 64:
        return x
    if type(x) is dict:
        if holds_graph_values(list(x)):
            _refuse("of a dict keyed by values the converted code computes", src)
        return {k: _stand_ins(v, numbers, src, depth + 1) for k, v in x.items()}
    if type(x) in (list, tuple):
        return [_stand_ins(v, numbers, src, depth + 1) for v in x]
    if holds_graph_values(x):
        _refuse(f"of a {type(x).__name__} holding values the converted code computes", src)
    return x


def _refuse(what: str, src) -> None:
    raise ConversionError(
        f"json.dumps() {what} ({where(src)}): converted code writes the text of Python "
        "numbers it computes when the program runs, and this cannot be written that way. "
        "Return the values and call json.dumps after the converted function.", origin=src)
