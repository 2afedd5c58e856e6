"""The converters, one language feature each, and THE order they run in.

Code level N (`d2s code --level N`, `set_code_level(N)`) is the code after the N-th pass.
Each pass is a module with `transform(node, ctx)`, `NEEDS_ANALYSIS` (whether the name
analysis must be refreshed on the current code before it runs), `HANDLES` (node types it
rewrites: without any of them in the function the pass is skipped) and `CREATES` (node types
its output may add, so a later pass is not skipped wrongly).
"""
from __future__ import annotations

from . import (  # noqa: F401  (plain_runs, receivers: `transpile` uses them between passes)
               asserts,
               break_continue,
               builtin_calls,
               builtins_then_calls,
               call_trees,
               deletes,
               early_return,
               ifelse,
               lists,
               logical,
               loops,
               plain_runs,
               receivers,
               return_statements,
               try_except,
)

PASSES = [
    # Moves code after `if c: return` into the else branch, so most returns end up in tail
    # position and the return pass can use plain assignments instead of flags.
    ("early_return", early_return),
    # A `try` whose body raises: raises become error codes dispatched to the `except`
    # clauses when the program runs; before the passes that convert what it writes
    # (`if`, `break`).
    ("try_except", try_except),
    # break/continue become flags (and loop tests / extra tests); must precede `loops`, whose
    # bodies become functions from which a Python `break` could not escape.
    ("break_continue", break_continue),
    # Returns become `_retval` assignments (flags where they sit inside loops); after
    # break_continue so a `return` inside a loop stops the loop by the same mechanism.
    ("return_statements", return_statements),
    # and/or/not and chained comparisons become lazy operator calls; after the flag passes,
    # which write `not flag and test` that this pass must convert too.
    ("logical", logical),
    # assert -> _d2s.assert_ (anywhere; before call_trees so the assert is not a user call).
    ("asserts", asserts),
    # `del name` inside if/for/while becomes an assignment of "unbound"; before loops and
    # ifelse, whose body functions then carry the name as state.
    ("deletes", deletes),
    # list.append/pop become assignments; before loops and ifelse, which then see the list
    # name as bound in the body and carry it as state.
    ("lists", lists),
    # while/for -> local functions + _d2s.while_loop/for_loop; before ifelse, so an `if`
    # inside a loop body is analysed within the body function, whose parameters are the
    # loop state (names defined on entry).
    ("loops", loops),
    # if/elif/else and conditional expressions -> local functions + _d2s.ifelse/ifexp.
    ("ifelse", ifelse),
    # print/len/range/bool/int/float/isinstance -> operators deciding on the value's type.
    ("builtin_calls", builtin_calls),
    # Last: wraps user calls in _d2s.call; runs after every pass that generates code, so it
    # never wraps the operator calls they wrote and sees every user call exactly once.
    ("call_trees", call_trees),
]

NAMES = [name for name, _ in PASSES]

# pass name -> the pass that runs it and the next one in one walk, where both run (the code
# is the same; not while code levels or passes are logged)
FUSED = {builtins_then_calls.FUSES[0]: builtins_then_calls}
assert all(NAMES[NAMES.index(m.FUSES[0]) + 1] == m.FUSES[1] for m in FUSED.values())
