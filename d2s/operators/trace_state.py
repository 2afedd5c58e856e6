"""What the operators keep while one call is traced: one `TraceState` per trace.

The trace (`d2s/tracing.py`) makes it and installs it around the call (`with tracing():`);
the operators reach it through `current()`, the one accessor (docs/architecture.md, "Trace
state"). It holds the whole call's mutation logs (`writeback.before` adds its log) and the
per-block stacks: the graph branches and loop bodies being traced (`exceptions.branch_frame`)
and the `try` bodies open (`try_except.try_state`). Nothing here knows what a branch or a
`try` does; the constructs above (`control_flow`, `loops`, `try_except`, `held_lists`) keep
their data in it.

Outside a trace `current()` is the thread's own state: converted code run as plain Python (a
StaticFunction called eagerly with conversion on) still opens `try` bodies there.
"""
from __future__ import annotations

import threading


class TraceState:
    """The state of one trace (see the module).

    - `call_logs`: mutation logs of everything the traced call can reach; what they hold is
      d2s's, never another reference to a list (`held_lists.holder`);
    - `origins`: a place whose list became a tensor array (a slot's ident) -> (the place's
      object, the list it held), which `writeback` fills after each run;
    - `frames`: the graph branches and loop bodies being traced, innermost last;
    - `trys`: the `try` bodies (and functions converted for one) open, innermost last;
    - `undecided`: the id of a set whose items a tensor `if` decides -> (the set, its path,
      the `if`'s origin): reading it is refused (`mutation.finish`, `traced_keys`);
    - `set_flags`: the id of such a set whose items differ by Python values only -> (the
      set, {item: its presence flag}): `len()` and `in` of it follow the run (`branch_sets`);
    - `raises`: the key of a run-time raise op -> the state the call had changed where it
      raises (`state_at_raise`);
    - `flags`: (id of an eager tensor, flag name) -> (the tensor, the name, its value before
      the trace set it): flags converted code set (`tensor_flags`);
    - `handling`: id of the block of an `except` clause the program runs -> (the block, the
      exception it handles): the context of a `raise` in it (`exceptions.raise_`);
    - `watched`: (Parameter, its flags before the trace) of the Layers the call was given,
      whose flags code d2s does not convert may change (`tensor_flags.snapshot`);
    - `probe_reads`: names first bound in a graph loop that its body's probe trace read in
      a branch before binding them (`if i == 0: level = x` / `else: level = level + 1`):
      the loop carries whether each is bound (`loop_bound`).
    """

    __slots__ = ("call_logs", "flags", "frames", "handling", "origins", "probe_reads",
                 "raises", "set_flags", "trys", "undecided", "watched")

    def __init__(self):
        self.call_logs: list = []
        self.raises: dict = {}
        self.undecided: dict = {}
        self.set_flags: dict = {}
        self.origins: dict = {}
        self.frames: list = []
        self.trys: list = []
        self.flags: dict = {}
        self.watched: list = []
        self.handling: dict = {}
        self.probe_reads: set = set()

    def __repr__(self):
        return (f"TraceState({len(self.call_logs)} call logs, {len(self.origins)} origins, "
                f"{len(self.frames)} frames, {len(self.trys)} open trys)")

    def logs(self, log) -> tuple:
        """`log` (a block's) and the call logs of this trace and of the traces it runs in."""
        return (log,) + tuple(x for s in reversed(_stack()) for x in s.call_logs)


_LOCAL = threading.local()


def _stack() -> list:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = [TraceState()]  # the thread's own state, outside any trace
    return stack


def current() -> TraceState:
    """The state of the trace running on this thread (the thread's own outside a trace)."""
    return _stack()[-1]


class tracing:
    """`with tracing() as state:` around one trace: `state` is `current()` inside."""

    def __enter__(self) -> TraceState:
        self.state = TraceState()
        _stack().append(self.state)
        return self.state

    def __exit__(self, *exc):
        stack = _stack()
        del stack[stack.index(self.state):]
        return False
