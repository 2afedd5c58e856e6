"""A `collections.deque` the caller keeps (on `self`, passed in) that the converted call
appends to on every call (`self.frames.append(obs.detach())` with `maxlen=n`): the mutation
log does not follow deques, so the trace's appends (and the items `maxlen` dropped) are
compared with the deque's items when the call started. Where the deque then holds tensors it
held before (moved, `maxlen` dropping the oldest) and tensors the program computes, it is a
`writeback_items.Window`: the program reads the tensors it holds when it runs, after each run
the deque holds eager's items (the same tensor objects, and the new ones), and it is guarded
by its length and its tensors' kind, so one program serves every call once it is full. Other
changes (a Python value appended, an item set) are refused at the call, naming the deque."""
from __future__ import annotations

from runtime.program.builder import current_builder

from . import guards
from .operators import mutation
from .operators.variables import is_variable
from .writeback_items import Window, held_elsewhere, window


class DequeSlot:
    """The items of the deque `obj` as a list place (`Window`'s): written by clearing it and
    extending it with the new items (at most its `maxlen`, which eager's appends leave)."""

    __slots__ = ("key", "kind", "obj", "path")

    def __init__(self, dq, path: str):
        self.obj, self.kind, self.key, self.path = dq, "list", None, path

    def get(self) -> list:
        return list(self.obj)

    def set(self, value) -> None:
        self.obj.clear()
        self.obj.extend(value)

    def ident(self):
        return (id(self.obj), "deque")


def deque_windows(deques, target, out, places, rebound, renewed) -> list:
    """The `Window`s of the deques the trace changed (`deques`: (deque, its items when the
    call started, its path)), each also appended to `renewed` (its guards); a change that is
    not one is `StateChangeError` (with `rebound` None, a program to save, every change)."""
    found = []
    for dq, items, path in deques:
        if len(dq) == len(items) and all(a is b for a, b in zip(dq, items)):
            continue
        slot = DequeSlot(dq, path)
        new = list(dq)
        # (not a Python value, `loss.item()`: the deque would get a Tensor there)
        held = None if rebound is None or not all(
            any(x is y for y in items) or _computed_tensor(x) for x in new) else window(
            slot, list(items), new, held_elsewhere(places, out, (dq,), slot),
            current_builder(), rebound) if items else Window(slot, [None] * len(new), {})
        if held is None:
            restore(deques)
            raise _refused(target, path)
        recorded = guards.recorded()
        if recorded is not None:  # (its length decides which items move where)
            recorded.append((("list", dq, None, path), "items", tuple(items)))
        renewed.append(held)
        found.append(held)
    return found


def _computed_tensor(x) -> bool:
    return is_variable(x) and not x.is_array and not getattr(x, "python_scalar", False)


def restore(deques) -> None:
    """The deques as the call found them: the first run writes the program's results."""
    for dq, items, _ in deques:
        if len(dq) != len(items) or any(a is not b for a, b in zip(dq, items)):
            dq.clear()
            dq.extend(items)


def _refused(target, path: str):
    code = getattr(target.function, "__code__", None)
    at = f' (File "{code.co_filename}", line {code.co_firstlineno})' if code else ""
    return mutation.StateChangeError(
        f"{target.qualname}{at} changes {path}, a collections.deque that outlives the call, "
        "other than by appending tensors the program computes (an append of a Python value or "
        "of a tensor from elsewhere, an item set, a clear): a program keeps such a deque as "
        "tensors it reads and computes. Append tensors only, or return the new values and "
        "change the deque after the call")
