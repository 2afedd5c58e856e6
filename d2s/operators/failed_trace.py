"""What a trace that failed on the user's own exception leaves in Python state
(`tracing.py`): the changes made before the raise stand, as they do eagerly, except where a
graph value (a Variable, or a list, tuple or dict of them) was stored, which is put back as it
was before the call; a traced value never leaks out of a failed call. (When d2s itself fails,
`mutation.Log.restore` undoes everything instead.)"""
from __future__ import annotations

from .mutation import MISSING, Log, retarget
from .variables import is_variable


def restore_graph_values(log: Log) -> None:
    """Undo, in the objects `log` saw, only what now holds a graph value."""
    for obj, kind, _, snap in log.seen.values():
        if kind == "list":
            if any(_holds_graph(x) for x in obj):
                obj[:] = snap
        elif kind in ("dict", "obj", "globals"):
            d = vars(obj) if kind == "obj" else obj
            for k in [k for k, v in d.items() if _holds_graph(v)]:
                if k in snap:
                    d[k] = snap[k]
                else:
                    del d[k]
        elif kind == "cls":
            for k in [k for k, v in vars(obj).items() if _holds_graph(v)]:
                if k in snap:
                    setattr(obj, k, snap[k])
                else:
                    delattr(obj, k)
        elif kind == "cell":
            if snap is not MISSING and _holds_graph(obj.cell_contents):
                obj.cell_contents = snap
        elif kind in ("var", "private"):
            retarget(obj, snap)


def _holds_graph(v) -> bool:
    if isinstance(v, (list, tuple)):
        return any(is_variable(x) for x in v)
    if isinstance(v, dict):
        return any(is_variable(x) for x in v.values())
    return is_variable(v)
