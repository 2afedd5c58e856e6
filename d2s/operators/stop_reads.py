"""`x.stop_gradient` read by converted user code where the value has a gradient on some runs
only: a tensor `if` detached it on one path (`out = h.detach()` beside `out = h * 2`), so
eager code reads `True` on the runs that took that path and `False` on the others. The value
carries that run's flag (`Variable.stop_when`, `runtime.program.stop_flags`); the read gives
it as a bool graph value standing for the Python bool, so `if out.stop_gradient:` is a tensor
`if` and a returned flag is eager's bool. (A value whose flag changes between the trips of a
graph loop is refused: `loop_errors.refuse_varying_stop_read`.) Reads by d2s and the runtime
themselves get the Python flag of the trace."""
from __future__ import annotations

import sys

import runtime as rt
from runtime.program.origin import frame_line

from ..pyct import loader
from .loop_errors import refuse_varying_stop_read


def read_stop_gradient(value):
    """The run's `stop_gradient` of `value` for a read from converted user code, else None
    (the property then gives the trace's)."""
    if value.stop_varies:
        return refuse_varying_stop_read(value, depth=3)
    f = sys._getframe(2)  # (the code that read the property)
    if loader.lookup(f.f_code.co_filename, frame_line(f)) is None:
        return None
    return run_flag(value)


def run_flag(value):
    """The run's stop_gradient of `value` (which has a `stop_when`): a bool graph value
    standing for the Python bool."""
    flag = rt.assign(value.stop_when)
    flag.python_scalar = True
    return flag
