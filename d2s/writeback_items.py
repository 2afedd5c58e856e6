"""List places written back item by item (`writeback.py`): the items a program computes go
into the list object itself, and lists or dicts that existed before the call, which the call
stored there (`self.log.append(metrics)` where `metrics` holds a value the program computes),
go there as themselves, as eager code leaves them, never as rebuilt copies."""
from __future__ import annotations


def existing(v, log, copied=()) -> bool:
    """Whether `v` is a list or dict the call could reach before it ran (not the trace's
    copy of an argument, `copied`: ids): stored in another place, the place gets that very
    object after each call, as eager code leaves it, and its items are its own places."""
    if type(v) is not list and type(v) is not dict or id(v) in copied:
        return False
    found = log.seen.get(id(v))
    return found is not None and found[0] is v


class Items:
    """A list place whose new items the program outputs: after each run they are appended
    to the list (with `tail`: the trace only appended them, some computed) or they replace
    its items; `kept`: per item, a list or dict that existed before the call, put there as
    itself, as eager code leaves it (its own items are written back where it is), else None."""

    __slots__ = ("kept", "kind", "obj", "path", "slot", "tail")

    def __init__(self, slot, tail, kept):
        self.slot, self.tail, self.kept = slot, tail, kept
        self.kind = "append" if tail is not None else "items"
        self.obj, self.path = slot.obj, slot.path

    def get(self):
        return self.tail if self.tail is not None else self.slot.get()

    def set(self, value):
        value = [v if k is None else k for v, k in zip(value, self.kept, strict=True)]
        if self.tail is not None:
            self.obj.extend(value)
        else:
            into(self.obj, value)

    def ident(self):
        return self.slot.ident()


def kept_items(items, log, copied) -> list:
    """Per item, the item where it is a list or dict that `existing` finds, else None."""
    return [x if existing(x, log, copied) else None for x in items]


def into(old: list, new: list) -> None:
    """Write a list's new items into the list itself, keeping the identity of the lists and
    dicts in it (they are places of their own, which every alias of them sees)."""
    if len(old) != len(new):
        old[:] = new
        return
    for i, (a, b) in enumerate(zip(old, new)):
        if type(a) is type(b) and type(a) in (list, dict):
            continue
        old[i] = b
