"""Calls whose result depends on state outside the program: random draws and clocks.

`random.random()`, `np.random.rand(3)`, `time.time()` in converted code run once, while the
program is built; their result would be frozen into the program, and every later call would
reuse it where eager code draws (or reads the clock) anew. A LayerDrop written the common way,
`if self.training and random.random() < self.layerdrop: continue`, would drop the same
layers on every call. So such a call is an error at the user's line (`HiddenStateError`,
raised by `operators/calls.py` while a program is being built), which says what to write
instead: the runtime's own random ops (`rt.rand`, `rt.uniform`, `rt.randn`, `rt.randint`,
`rt.bernoulli`) draw when the program runs, and a comparison with them is a tensor condition.

What stays allowed: a NumPy `Generator` / `RandomState` or a `random.Random` created in the
same call with an explicit seed (its draws are the same on every call, in eager code too), and
anything in a helper marked `@d2s.not_to_static` (documented to run once, at trace time).

Imports only `d2s.errors` (not `runtime`), so the converters can ask it which calls to wrap.

>>> import random, time
>>> describe(random.uniform), describe(time.perf_counter), describe(len)
('random.uniform', 'time.perf_counter', None)
"""
from __future__ import annotations

import datetime
import os
import random
import secrets
import time
import uuid

import numpy as np

from .errors import ConversionError

_CLOCKS = {time.time, time.time_ns, time.perf_counter, time.perf_counter_ns, time.monotonic,
           time.monotonic_ns, time.process_time, time.process_time_ns, time.thread_time,
           time.thread_time_ns, time.localtime, time.gmtime, time.ctime, time.asctime,
           datetime.datetime.now, datetime.datetime.utcnow, datetime.datetime.today,
           datetime.date.today}
_ENTROPY = {os.urandom, uuid.uuid1, uuid.uuid4, np.random.seed}
_GENERATOR_TYPES = (random.Random, np.random.RandomState, np.random.Generator)
# constructors whose instances, made with an explicit seed in the traced call, draw the same
# numbers on every call
SEEDED_CONSTRUCTORS = (np.random.default_rng, np.random.RandomState, np.random.Generator,
                       random.Random)


def describe(f) -> str | None:
    """The name of the hidden state `f` reads ("random.uniform"), or None when `f` is not such
    a call."""
    try:
        if f in _CLOCKS or f in _ENTROPY:
            return _name(f)
    except TypeError:  # unhashable callables are not among them
        return None
    owner = getattr(f, "__self__", None)
    if isinstance(owner, _GENERATOR_TYPES):
        name = getattr(f, "__name__", "?")
        if owner is getattr(random, "_inst", None):
            return f"random.{name}"
        if owner is getattr(np.random.mtrand, "_rand", None):
            return f"np.random.{name}"
        return f"{type(owner).__name__}.{name}"
    module = getattr(f, "__module__", None) or ""
    name = getattr(f, "__name__", None)  # (None itself is no `secrets` function)
    if module == "secrets" or name and getattr(secrets, name, None) is f:
        return _name(f)
    return None


def _name(f) -> str:
    owner = getattr(f, "__self__", None)
    if isinstance(owner, type):
        return f"{owner.__module__}.{owner.__name__}.{f.__name__}"
    module = getattr(f, "__module__", None) or "numpy.random"
    return f"{module.replace('numpy.', 'np.')}.{f.__name__}"


class HiddenStateError(ConversionError):
    """Converted code calls a random draw or a clock whose value would be frozen into the
    program when it is built (see `d2s.hidden_state`)."""


def refuse(name: str, fresh_generator: bool = False) -> HiddenStateError:
    """The error for a call to `name` (from `describe`) while a program is being built;
    `fresh_generator`: the generator was created in this call without a seed."""
    if name.startswith(("time.", "datetime.")):
        what = (f"`{name}()` reads the clock while the program is built: its value would be "
                "frozen into the program and every call would return the same reading.")
        fix = ("Read the clock outside the converted function and pass the value in as an "
               "argument.")
    elif name == "np.random.seed":
        what = ("`np.random.seed()` changes NumPy's global random state; in a converted "
                "function it would run once, when the program is built, not on every call.")
        fix = "Seed outside the converted function (or use `rt.seed`)."
    elif name.startswith(("os.", "uuid.", "secrets.")):
        what = (f"`{name}()` draws fresh entropy while the program is built: its value would "
                "be frozen into the program.")
        fix = "Draw it outside the converted function and pass it in as an argument."
    else:
        source = "a generator created without a seed" if fresh_generator else \
            "random state that lives across calls"
        what = (f"`{name}()` draws from {source} while the program is built: the numbers "
                "drawn would be frozen into the program, and every call would reuse them where "
                "eager code draws new ones.")
        fix = ("Draw with the runtime instead, which draws each time the program runs: "
               "`rt.rand(shape)`, `rt.uniform(shape, min=a, max=b)`, `rt.randn(shape)`, "
               "`rt.randint(low, high, shape)` (a comparison such as `rt.rand([1]) < p` is a "
               "tensor condition); or draw outside the converted function and pass the value "
               "in as an argument.")
    return HiddenStateError(f"{what} {fix}")
