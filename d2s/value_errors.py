"""Errors of a value the program computes used where Python needs its value, as the user
should see them (`errors.for_user` asks each; `error_class` is `errors.ConversionError`).

- `container_index`: a Python list, tuple or dict indexed by such a value whose items no
  program picks among (`CONFIGS[int(t)]` of dicts; `LABELS[int(t)]` of strs converts:
  `operators.python_picks`).
- `in_generator`: a `bool()` / `int()` / `float()` / index of such a value in the body of a
  user generator function. Converted code runs generators as Python (a `yield` has no
  program form, a generator's body runs one `next()` at a time), so an `if` on a tensor
  there is a Python `bool()` of a value known only when the program runs; the runtime's
  error says to branch on the tensor itself, which the user did.
- `computed_number`: an op's argument that the program fixes when it is built (an axis, a
  count, a size) given a number the program computes (`int(t)`): the op's message names
  the argument and says to pass a Python int.
- `in_ordering`: a `bool()` Python asks for inside an ordering comparison (`key < best` of
  two tuples holding such values, compared item by item) that the converter did not see as
  one of lists or tuples (`operators.sequence_order` converts those it sees).
"""
from __future__ import annotations

import dis
import inspect
import os

from runtime.ops.infer import ComputedNumberError
from runtime.program.variable import Variable

_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(inspect.getfile(Variable))))
_NO_INDEX = "Using as a Python index of static Variable"
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_WHAT = ("bool()", "int()", "float()", "Using as a Python index")


def container_index(e: BaseException, error_class):
    """A Python list, tuple or dict indexed by a value the converted program computes
    (`LABELS[int(t)]`): the list's `__index__` refuses it, a dict looks it up as a key it
    never has. Either way the error the user should see is the same one, at the line."""
    key = e.args[0] if len(e.args) == 1 else None
    if not ((isinstance(e, KeyError) and isinstance(key, Variable))
            or (isinstance(e, TypeError) and isinstance(key, str)
                and key.startswith(_NO_INDEX))):
        return None
    error = error_class(
        "a value computed by the converted program indexes a Python container (a list, "
        "tuple or dict) whose items are not one kind a program can pick among: its value is "
        "known only when the program runs, and a program picks strs (and None), Python "
        "numbers of one type or tensors of one dtype and shape, not other objects. Keep the "
        "table a tensor and index it with the tensor: `rt.to_tensor(TABLE)[i]` (a dict of "
        "numbers keyed 0..n-1: its values as a list), or one table per field of the objects. "
        "See docs/errors.md, \"A tensor's value used as a Python value\".")
    return error.with_traceback(e.__traceback__)


def computed_number(e: BaseException, user_file, error_class):
    """The runtime's `ComputedNumberError` as the error the user sees; else, for an op of the
    runtime called by the user's code with a number the program computes (`int(t)`) as an
    argument the op needs as a Python number (its `int()` / `bool()` of the value, or a
    check that printed it, failed), an error naming the argument; else None."""
    if isinstance(e, ComputedNumberError):
        return error_class(str(e)).with_traceback(e.__traceback__)
    text = e.args[0] if isinstance(e, (TypeError, ValueError)) and e.args else None
    if not isinstance(text, str) or ("static Variable" not in text and "Variable(%" not in text):
        return None
    tb, entry = e.__traceback__, None
    while tb is not None:  # (the first runtime frame after the user's last one)
        name = tb.tb_frame.f_code.co_filename
        if user_file(name):
            entry = None
        elif entry is None and name.startswith(_RUNTIME_DIR):
            entry = tb.tb_frame
        tb = tb.tb_next
    if entry is None or entry.f_code.co_name.startswith("_"):
        return None
    code = entry.f_code
    names = [n for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
             if getattr(entry.f_locals.get(n), "python_scalar", False)]
    if not names:
        return None
    args = " and ".join(f"`{n}`" for n in names)
    error = error_class(
        f"{code.co_name}(): {args} {'is a number' if len(names) == 1 else 'are numbers'} the "
        "converted code computes from a tensor (`int(t)`, `float(t)`, `t.item()`), known only "
        f"when the program runs, and {code.co_name} needs it as a Python number while the "
        "program is built (an axis, a count, a size, or a number it checks). Pass a Python "
        "number (a constant, a shape, or a number computed from Python values).")
    return error.with_traceback(e.__traceback__)


def in_generator(e: BaseException, user_file, error_class):
    """For a TypeError `bool()` / `int()` / `float()` / index of a traced value raised in the
    body of a user generator function (`user_file(filename)`: a user's file), the error to
    show instead; else None."""
    if not isinstance(e, TypeError) or not e.args or not isinstance(e.args[0], str) or \
            not e.args[0].startswith(_WHAT) or "static Variable" not in e.args[0]:
        return None
    tb, frame = e.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_flags & _GENERATOR_FLAGS and user_file(code.co_filename):
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return None
    what = e.args[0].split(" of ", 1)[0]
    error = error_class(
        f"{what} of a tensor computed by the converted code, inside the generator function "
        f"'{frame.f_code.co_name}': converted code runs a generator as Python (a `yield` has "
        "no program form), so a value known only when the program runs cannot decide what "
        "it yields. Write the loop in the calling function (append to a list under the "
        "tensor `if`, or select with a mask: `x[mask]`), or run the generator's caller "
        "eagerly (@d2s.not_to_static). See docs/d2s.md, Known limitations.")
    return error.with_traceback(e.__traceback__)


_ORDERS = ("<", "<=", ">", ">=")


def in_ordering(e: BaseException, error_class):
    """For a TypeError `bool()` of a traced value that Python asked for while running an
    ordering comparison (the frame that called `Variable.__bool__` is at a `<` / `<=` / `>`
    / `>=`: a comparison of tensors gives a tensor and asks for no truth, one of lists or
    tuples asks for each item's `==`), the error to show instead; else None."""
    if not isinstance(e, TypeError) or not e.args or not isinstance(e.args[0], str) or \
            not e.args[0].startswith("bool() of static Variable"):
        return None
    tb, caller = e.__traceback__, None
    while tb is not None and tb.tb_next is not None:
        nxt = tb.tb_next.tb_frame.f_code
        if nxt.co_name == "__bool__" and nxt.co_filename.endswith("variable.py"):
            caller = tb
        tb = tb.tb_next
    op = None if caller is None else next(
        (i.argrepr for i in dis.get_instructions(caller.tb_frame.f_code)
         if i.offset == caller.tb_lasti and i.opname == "COMPARE_OP"), None)
    if op not in _ORDERS:
        return None
    error = error_class(
        f"`{op}` of lists or tuples holding values computed by the converted code: Python "
        "compares them item by item, asking for the truth of each item's `==`, which is "
        "known only when the program runs. Converted code computes such a comparison where "
        f"a side is written as a list or tuple (a display, `tuple(...)`, `list(...)`, "
        f"`sorted(...)`, `.tolist()`, or a local name bound to one): write `tuple(a) {op} "
        f"tuple(b)`, or compare tensors (`rt.to_tensor(a) {op} rt.to_tensor(b)`).")
    return error.with_traceback(e.__traceback__)
