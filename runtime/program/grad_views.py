"""What a converted training step knows about each `.grad` while it is built (`train_step`'s
view: a Variable, None, zeros not built yet, or the run's), kept per branch of a tensor `if`.

Both branches of a tensor `if` are traced, one after the other, and each may change the view
(`opt.clear_grad()` in one, `opt.step()` reading the gradients in the other: skipping a step
whose loss is not finite). Eager code runs one branch, so the second branch must be built
from the view as it was before the `if`, not as the first branch left it; after the `if` the
view is what either branch left (the run's gradient where a branch changed it).

>>> from runtime.program.grad_views import merge_entries, RUN, UNKNOWN
>>> merge_entries(["t", "slot", "g", True, None], [["t", "slot", RUN, True, None],
...                                               ["t", "slot", "g", True, None]])[2]
<.grad when run>
"""
from __future__ import annotations

from typing import Self

ZERO = type("_Zero", (), {"__repr__": lambda self: "<zeros>"})()  # zeros, built on demand
UNKNOWN = type("_Unknown", (), {"__repr__": lambda self: "<zeros or None>"})()
# (a gradient a tensor `if`'s branch wrote: `.grad` as the run leaves it, read where used)
RUN = type("_Run", (), {"__repr__": lambda self: "<.grad when run>"})()


def fresh(t, slot) -> list:
    """A view entry: tensor, slot, value, known, the grad_write op still last for it."""
    return [t, slot, UNKNOWN, False, None]


def _same(a: list, b: list) -> bool:
    return all(x is y for x, y in zip(a[2:], b[2:]))


def merge_entries(before: list, branches: list) -> list:
    """The entry after a tensor `if` whose branches left `branches` (from `before`)."""
    changed = [e for e in branches if not _same(e, before)]
    if not changed:
        return list(before)
    if len(changed) == 1:  # (the branch computed what its runs leave: `train_step`)
        return list(changed[0])
    value = RUN if all(e[2] is RUN for e in changed) else UNKNOWN
    return [before[0], before[1], value, True, None]


class Branches:
    """The view around the branches of one tensor `if` (or switch), a context: `enter()`
    before tracing each branch, `leave()` after it; merged at the end, or put back as it was
    before them when tracing failed."""

    def __init__(self, program):
        self.program = program
        st = self.st = program.__dict__.get("_train_step")
        self.grads = None if st is None else st.grads
        self.before = None if st is None else {k: list(e) for k, e in st.grads.items()}
        self.left: list = []

    def _started(self) -> bool:
        """Whether the program has a view (a branch's `backward()` may have begun it)."""
        if self.grads is None and self.program.__dict__.get("_train_step") is not None:
            self.st = self.program._train_step
            self.grads, self.before = self.st.grads, {}
            self.left = [{} for _ in self.left]  # (branches traced before it: no change)
        return self.grads is not None

    def _set(self, view: dict) -> None:
        for k in list(self.grads):
            if k not in view:
                del self.grads[k]
        for k, e in view.items():
            if k in self.grads:
                self.grads[k][:] = e
            else:
                self.grads[k] = list(e)

    def enter(self) -> None:
        if self._started():
            self._set(self.before)

    def leave(self, block=None) -> None:
        if self._started():
            if block is not None:
                self._computed_in(block)
            self.left.append({k: list(e) for k, e in self.grads.items()})

    def _computed_in(self, block) -> None:
        """Gradients the branch just traced (`block`) computed (its `backward()`) are values
        of its block: after the `if` they are `.grad` as the run leaves it; where the tensor
        may have had none before, the run decides whether it has one (`sometimes_reached`:
        read as zeros where it has none, and an optimizer step skips it there)."""
        for k, e in self.grads.items():
            made = getattr(e[2], "block", None)
            if made is None or not any(b is block for b in made.ancestors()):
                continue
            before = self.before.get(k)
            if before is None or not before[3] or before[2] is None or (
                    before[2] is UNKNOWN or k in self.st.sometimes_reached):
                self.st.sometimes_reached.add(k)
            e[2], e[3], e[4] = RUN, True, None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.merge()
        else:  # (tracing failed: traced again from the view before, or not at all)
            self.enter()

    def merge(self) -> None:
        if not self._started():
            return
        merged = {}
        for k in set().union(*self.left):
            any_e = next(v[k] for v in self.left if k in v)
            before = self.before.get(k) or fresh(any_e[0], any_e[1])
            merged[k] = merge_entries(before, [v.get(k, before) for v in self.left])
        self._set(merged)
