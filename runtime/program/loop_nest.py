"""The plan of a fused run's C function (`native.py` makes it, `native_emit.py` writes it).

A `LoopNest` says what to compute, in which loop, and where every value lives, so that
planning and C text stay apart and each can be tested alone:

    for r in rows lo..hi (or, when `flat`, one loop over lo*W..hi*W):
        body: a `Step` computes one per-row value (`v3 = i1[r] * v2`), between the loops;
              a `Loop` runs its steps over the row's W elements (j), reductions accumulate
              over them and their results exist after the loop.

A step reads its operands from an `Operand` place: a constant, an input (read as a scalar,
a broadcast row, a wide row or a per-row value), a local `v<k>` (the result of step k), a row
buffer `tmp<t>` or an output `o<i>` a later loop reads back.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Operand:
    """Where a step reads one operand. `place`: "const" (`index` is the value), "input"
    (`index`: the input's position, `how`: "scalar", "bcast", "wide" or "row"), "local"
    (the result of step `index`), "tmp" (row buffer `index`) or "output" (output `index`)."""

    place: str
    index: object
    how: str = ""


@dataclass
class Step:
    """One op of the run: `result = type(*operands)`; a reduction ("sum", "mean", "max",
    "min") accumulates its one operand over a loop. `out`: the output it is written to,
    `tmp`: the row buffer a later loop reads it from (None: neither)."""

    type: str
    result: int
    operands: list
    out: int | None = None
    tmp: int | None = None


@dataclass
class Loop:
    """One loop over the W elements of a row: its steps, in order."""

    steps: list


@dataclass
class LoopNest:
    """A fused run as one C function `name`: `inputs` and `outputs` arrays (counts), `rows`
    rows (the caller gives each call a range lo..hi of them) of `width` elements of C type
    `ctype` ("float" or "double"), `tmps` row buffers, and the `body` (Steps between the
    loops and Loops) in order. `expand`: {input position: row shape} of the inputs the
    caller broadcasts to one whole row before the call (a conv bias [1, C, 1, 1] to
    [C, H, W]), which the C code then reads as broadcast rows."""

    name: str
    ctype: str
    inputs: int
    outputs: int
    rows: int
    width: int
    flat: bool
    tmps: int
    body: list = field(default_factory=list)
    expand: dict = field(default_factory=dict)

    def steps(self):
        """Every step, in order (inside the loops too)."""
        for item in self.body:
            if isinstance(item, Loop):
                yield from item.steps
            else:
                yield item
