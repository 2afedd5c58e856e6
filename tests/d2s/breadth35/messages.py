"""What a user sees of an error from converted code, and the internal names it must never
show."""
import re
import traceback

INTERNAL = re.compile(r"_retval|\bt\d+\b|Variable\(%|<undefined")


def shown(e: BaseException) -> str:
    """The error as Python prints it, notes (the user's file:line) included."""
    return "".join(traceback.format_exception_only(e))


def assert_at_user_line(e: BaseException, filename: str, lineno: int) -> str:
    text = shown(e)
    assert f'File "{filename}", line {lineno}' in text, text
    assert not INTERNAL.search(text), text
    return text
