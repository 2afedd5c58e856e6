"""What d2s logs: the converted code after a chosen pass (code level) and the steps it takes
(verbosity), through the standard `logging` logger named "d2s".

- `set_code_level(level=100, also_to_stdout=False)`: log each function's code after pass number
  `level` of `d2s.converters.PASSES` (0: as parsed; 100, or anything past the last pass: the
  final code). Environment variable `D2S_CODE_LEVEL`.
- `set_verbosity(level=0, also_to_stdout=False)`: log conversion steps. 0: nothing; 1: each
  function converted and each program traced; 2: each pass run; 3: each decision taken while
  tracing (a tensor `if` became a cond op, a loop was unrolled, ...). Environment variable
  `D2S_VERBOSITY`.

A call wins over the environment variable; without either, nothing is logged. Records are
INFO records of the "d2s" logger; if nothing in the process handles them (no handler on the
logger or the root), d2s adds one that writes to stderr. Text is always passed as an argument,
never as the format string, so program text with '%' in it is logged as it is.

>>> import d2s
>>> d2s.set_code_level(100)   # log the final converted code of every function
>>> d2s.set_verbosity(1)      # and say what is converted and traced
>>> d2s.set_code_level(-1); d2s.set_verbosity(0)
"""
from __future__ import annotations

import logging
import os
import sys

from .pyct import anno
from .pyct.parser import unparse

LOGGER = logging.getLogger("d2s")
CODE_LEVEL_ENV = "D2S_CODE_LEVEL"
VERBOSITY_ENV = "D2S_VERBOSITY"
ALL_PASSES = 100

# (level, also_to_stdout) set by a call; None: read the environment variable
_SET: dict[str, tuple | None] = {"code": None, "verbosity": None}


def set_code_level(level: int = ALL_PASSES, also_to_stdout: bool = False) -> None:
    """Log converted code after pass number `level` (100: after the last pass; -1: off).

    >>> import d2s
    >>> d2s.set_code_level(3, also_to_stdout=False); d2s.set_code_level(-1)
    """
    _SET["code"] = (int(level), bool(also_to_stdout))


def set_verbosity(level: int = 0, also_to_stdout: bool = False) -> None:
    """Log conversion steps, 0 (silent) .. 3 (every decision taken while tracing).

    >>> import d2s
    >>> d2s.set_verbosity(2); d2s.set_verbosity(0)
    """
    _SET["verbosity"] = (int(level), bool(also_to_stdout))


def _setting(key: str, env: str, off: int) -> tuple[int, bool]:
    chosen = _SET[key]
    if chosen is not None:
        return chosen
    text = os.environ.get(env, "").strip()
    if not text:
        return off, False
    try:
        return int(text), False
    except ValueError:
        if (env, text) not in _WARNED:
            _WARNED.add((env, text))
            LOGGER.warning("d2s: ignoring %s=%r (expected an integer)", env, text)
        return off, False


_WARNED: set = set()


def code_level() -> int:
    """The code level in force (-1: off)."""
    return _setting("code", CODE_LEVEL_ENV, -1)[0]


def verbosity() -> int:
    """The verbosity in force (0: silent)."""
    return _setting("verbosity", VERBOSITY_ENV, 0)[0]


def _emit(text: str, to_stdout: bool) -> None:
    """Log `text`; with `to_stdout` also print it. The stderr handler d2s adds when nothing
    handles its records is skipped for a printed text, so a terminal shows it once."""
    if LOGGER.level == logging.NOTSET and not LOGGER.isEnabledFor(logging.INFO):
        LOGGER.setLevel(logging.INFO)  # asked for by set_code_level / set_verbosity / env
    own = _OWN_HANDLER[0]
    if not LOGGER.hasHandlers():
        own = logging.StreamHandler(sys.stderr)
        own.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        LOGGER.addHandler(own)
        _OWN_HANDLER[0] = own
    if to_stdout:
        sys.stdout.write(text + "\n")
    if to_stdout and own is not None and LOGGER.handlers == [own] and not \
            logging.getLogger().handlers:
        return  # only d2s's own stderr handler would get it: printed once, above
    LOGGER.info("%s", text)


_OWN_HANDLER: list = [None]  # the stderr handler d2s added, if any


def log(level: int, text: str) -> None:
    """Log `text` if the verbosity is at least `level`."""
    chosen, to_stdout = _setting("verbosity", VERBOSITY_ENV, 0)
    if chosen >= level:
        _emit(text, to_stdout)


def after_pass(node, index: int, passes: list, seconds: float | None = None) -> None:
    """Called by the transpiler with the function `node` after `index` passes (0: parsed),
    the last of which took `seconds`."""
    level, to_stdout = _setting("code", CODE_LEVEL_ENV, -1)
    logs_pass = index > 0 and verbosity() >= 2
    logs_code = level >= 0 and index == min(level, len(passes))
    if not (logs_pass or logs_code):  # the usual case: nothing to say, no text made
        return
    where = _where(node)
    if logs_pass:
        took = "" if seconds is None else f" in {seconds * 1e3:.3f} ms"
        log(2, f"pass {index}/{len(passes)} ({passes[index - 1][0]}) done on {where}{took}")
    if not logs_code:
        return
    stage = "as parsed" if index == 0 else f"after pass {index} ({passes[index - 1][0]})"
    _emit(f"code of {where} {stage}:\n{unparse(node)}", to_stdout)


def _where(node) -> str:
    src = anno.getanno(node, anno.ORIGIN, None)
    return f"{node.name} ({src.short()})" if src is not None else node.name
