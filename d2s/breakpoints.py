"""Breakpoints on the user's lines fire in converted code.

Converted code runs from a generated file (`pyct.loader`), so a breakpoint a debugger holds
for `model.py:10` never matches a frame by itself. While a `bdb`-based debugger (pdb, and
debuggers built on it) is tracing, each breakpoint on a user line is copied to the generated
lines made from that line (the first line of each generated statement), with the same
condition: when a trace starts and when a new generated file is written. The copy stops at
trace time, in the generated file, whose lines end with the user's `# model.py:10`; the
program that then runs on every call is not Python and stops nowhere (docs/debugging.md).
"""
from __future__ import annotations

import bdb
import contextlib
import os
import sys
import threading

from .pyct import loader


def _debugger():
    """The bdb debugger tracing this thread, or None (the usual case: no cost beyond this)."""
    tracer = sys.gettrace()
    dbg = getattr(tracer, "__self__", None)
    return dbg if isinstance(dbg, bdb.Bdb) else None


def mirror_all() -> None:
    """Copy user breakpoints into every generated file (called when a trace starts)."""
    dbg = _debugger()
    if dbg is None or not bdb.Breakpoint.bplist:
        return
    for line_map in loader.line_maps():
        _mirror(dbg, line_map)


def mirror_file(line_map) -> None:
    """Copy user breakpoints into a generated file just written (a helper converted while
    tracing)."""
    dbg = _debugger()
    if dbg is not None and bdb.Breakpoint.bplist:
        _mirror(dbg, line_map)


def _mirror(dbg, line_map) -> None:
    wanted = {}
    for (file, line), bps in list(bdb.Breakpoint.bplist.items()):
        live = [bp for bp in bps if bp.enabled]
        if live and not loader.is_generated(file):
            wanted[(file, line)] = live[0]
    if not wanted:
        return
    first: dict = {}  # (user file, line) -> the first generated line made from it
    for gen_line, src in sorted(line_map.mapping.items()):
        key = (dbg.canonic(src.filename), src.lineno)
        if key in wanted and key not in first:
            first[key] = gen_line
    for key, gen_line in first.items():
        if not dbg.get_breaks(line_map.filename, gen_line):
            bp = wanted[key]
            dbg.set_break(line_map.filename, gen_line, temporary=bp.temporary, cond=bp.cond)


loader.on_load(mirror_file)


# ---- breakpoint() once per trace ---------------------------------------------------------------
#
# A tensor `while` traces its body more than once (once in a scratch block to learn the types
# of names first bound in it, then for real), so a `breakpoint()` in it would stop twice in one
# trace. While a trace runs, `sys.breakpointhook` (when it is Python's default) is replaced by
# one that stops at most once per trace at each line, in the generated code's frame.

_SEEN = threading.local()  # .stack: one set of (file, line) per trace running in this thread


def _hook(*args, **kwargs):
    frame = sys._getframe(1)
    stack = getattr(_SEEN, "stack", None)
    if stack:
        where = (frame.f_code.co_filename, frame.f_lineno)
        if where in stack[-1]:
            return None
        stack[-1].add(where)
    chosen = os.environ.get("PYTHONBREAKPOINT", "").strip()
    if chosen == "0":
        return None
    if chosen not in ("", "pdb.set_trace"):
        return sys.__breakpointhook__(*args, **kwargs)
    import pdb
    pdb.Pdb().set_trace(frame)
    return None


@contextlib.contextmanager
def once_per_trace():
    """Around one trace: `breakpoint()` stops once per line (and user breakpoints set in a
    debugger are copied into the generated files)."""
    if sys.gettrace() is not None:
        mirror_all()
    stack = getattr(_SEEN, "stack", None)
    if stack is None:
        stack = _SEEN.stack = []
    stack.append(set())
    swapped = sys.breakpointhook is sys.__breakpointhook__
    if swapped:
        sys.breakpointhook = _hook
    try:
        yield
    finally:
        stack.pop()
        if swapped and not stack:
            sys.breakpointhook = sys.__breakpointhook__
