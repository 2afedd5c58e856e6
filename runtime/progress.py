"""A progress bar for loops of known (or unknown) length: redrawn in place on a terminal,
plain lines elsewhere (CI logs, pipes, files), so a log never fills with carriage returns.

`Model.fit`, `d2s demo`, `d2s bench` and the fuzz campaign (`python -m tests.fuzz`) print
through it. The text follows Paddle's and Keras's progress lines:

    step 3/10 [=========>....................] - loss: 0.4021 - acc: 0.8125 - 4ms/step

>>> import io
>>> out = io.StringIO()
>>> bar = ProgressBar(total=4, file=out, tty=False)
>>> for i in range(1, 5):
...     bar.update(i, [("loss", 1.0 / i)])
>>> print(out.getvalue().splitlines()[-1].split(" - ")[:2])
['step 4/4', 'loss: 0.2500']

This module imports nothing from the runtime: anything may use it.
"""
from __future__ import annotations

import numbers
import sys
import time
from collections.abc import Sequence
from typing import TextIO

BAR_WIDTH = 30


def format_value(value) -> str:
    """A logged value as Paddle prints it: floats to 4 decimals, lists item by item."""
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value) if len(value) != 1 \
            else format_value(value[0])
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        value = float(value)  # NumPy scalars too
        return f"{value:.4f}" if 1e-4 <= abs(value) < 1e4 or value == 0 else f"{value:.4e}"
    return str(value)


def format_step_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


class ProgressBar:
    """Progress of one pass (an epoch, a benchmark, a fuzz campaign).

    `update(current, values)` reports that `current` steps are done, with `values` a list of
    (name, value) pairs to show. On a terminal (`tty=None` asks `file.isatty()`) the line is
    redrawn in place and ends with a newline when `current == total`; elsewhere each call
    prints one plain line. `every` > 1 prints only every `every`-th step (and the last one)
    when not on a terminal, as `log_freq` does in `Model.fit`. `verbose=0` prints nothing.
    """

    def __init__(self, total: int | None = None, width: int = BAR_WIDTH, verbose: int = 1,
                 file: TextIO | None = None, tty: bool | None = None, every: int = 1,
                 prefix: str = "step"):
        self.total = total
        self.width = width
        self.verbose = verbose
        self.file = file if file is not None else sys.stdout
        self.tty = bool(getattr(self.file, "isatty", lambda: False)()) if tty is None else tty
        self.every = max(1, int(every))
        self.prefix = prefix
        self.start = time.perf_counter()
        self.last_width = 0  # the drawn line's length, while it is open (on a terminal)
        self.printed = None  # the last step printed as a plain line

    def line(self, current: int, values: Sequence = ()) -> str:
        """The text shown after `current` steps (no carriage return, no newline)."""
        if self.total:
            count = f"{self.prefix} {current}/{self.total}"
        else:
            count = f"{self.prefix} {current}"
        parts = [count]
        if self.tty and self.total:
            filled = min(self.width, self.width * current // self.total)
            arrow = ">" if filled < self.width else ""
            parts[0] += " [" + ("=" * max(0, filled - len(arrow)) + arrow).ljust(self.width,
                                                                                  ".") + "]"
        parts += [f"{name}: {format_value(value)}" for name, value in values]
        if current > 0:
            elapsed = time.perf_counter() - self.start
            parts.append(format_step_time(elapsed / current))
        return " - ".join(parts)

    def update(self, current: int, values: Sequence = ()) -> None:
        if self.verbose <= 0:
            return
        last = self.total is not None and current >= self.total
        text = self.line(current, values)
        if self.tty:
            pad = " " * max(0, self.last_width - len(text))
            self.file.write("\r" + text + pad + ("\n" if last else ""))
            self.last_width = 0 if last else len(text)
        elif last or current % self.every == 0:
            self.file.write(text + "\n")
            self.printed = current
        self.file.flush()

    def finish(self, current: int, values: Sequence = ()) -> None:
        """End a pass of unknown length, or one stopped early: the open line on a terminal
        is closed, elsewhere the last step is printed unless it already was."""
        if self.verbose <= 0:
            return
        if self.tty and self.last_width:
            self.file.write("\n")
            self.last_width = 0
        elif not self.tty and self.printed != current:
            self.file.write(self.line(current, values) + "\n")
            self.printed = current
        self.file.flush()
