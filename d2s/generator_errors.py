"""A value the program computes driving Python logic inside a generator function.

Converted code runs generators as Python (`call_policy`: a `yield` has no program form, a
generator's body runs one `next()` at a time), so an `if` on a tensor in a generator's body is
a Python `bool()` of a value known only when the program runs. The runtime's error says to
branch on the tensor itself, which the user did: `note` rewrites it to say why it cannot work
here and what to write instead.
"""
from __future__ import annotations

from .call_policy import GENERATOR_FLAGS

_WHAT = ("bool()", "int()", "float()", "Using as a Python index")


def rewritten(e: BaseException, user_file, error_class) -> BaseException | None:
    """For a TypeError `bool()` / `int()` / `float()` / index of a traced value raised in the
    body of a user generator function (`user_file(filename)`: a user's file), the
    `error_class` (ConversionError) to show instead; else None."""
    if not isinstance(e, TypeError) or not e.args or not isinstance(e.args[0], str) or \
            not e.args[0].startswith(_WHAT) or "static Variable" not in e.args[0]:
        return None
    tb, frame = e.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_flags & GENERATOR_FLAGS and user_file(code.co_filename):
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
