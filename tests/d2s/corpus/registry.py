"""The case registry of the differential corpus, and the small data helpers cases use.

A case is a plain eager function (or a `rt.nn.Layer` class) registered with `@case(...)`:

    @case(args=[(f32([1, 2]),), (f32([-1, -2]),)], batch=lambda b: (signed(b, 4),))
    def if_else_assign(x):
        if rt.mean(x) > 0:
            y = x * 2
        else:
            y = x - 1
        return y

`args` are argument sets: NumPy arrays become fresh `rt.Tensor`s on every call (so in-place
updates never leak between calls); every other value is passed as it is. The sets must take
different paths through the function; the eager test checks that by tracing the lines run.
`batch(b)` returns an argument set with batch size `b` for the dynamic-batch check under
`InputSpec([None, ...])`; `ref` is an optional NumPy reference taking the same arguments as
NumPy arrays; `stdout` lists strings that every call's printed output must contain whenever the
eager call prints them (print of tensors has no fixed text format, labels and separators do);
`raises` names exceptions that some argument sets raise on purpose (an assert that fails for
some inputs): the converted call must raise the same type for exactly those sets.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np


@dataclasses.dataclass
class Case:
    name: str
    category: str
    fn: Callable  # a function, or a Layer class (is_layer) constructed with no arguments
    args: list
    batch: Callable | None = None
    ref: Callable | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    stdout: tuple = ()
    is_layer: bool = False
    raises: tuple = ()  # exception types some argument sets raise on purpose (failing asserts)

    def __repr__(self):
        return f"<case {self.category}/{self.name}>"


CASES: list[Case] = []


def case(args: list, *, batch: Callable | None = None, ref: Callable | None = None,
         rtol: float = 1e-5, atol: float = 1e-6, stdout: tuple = (),
         raises: tuple = ()) -> Callable:
    """Register the decorated function or Layer class as a corpus case."""
    if not args:
        raise ValueError("a corpus case needs at least one argument set")

    def register(fn):
        category = fn.__module__.rsplit(".", 1)[-1].removeprefix("cases_")
        name = f"{category}.{fn.__name__}"
        if any(c.name == name for c in CASES):
            raise ValueError(f"corpus case {name} is defined twice")
        CASES.append(Case(name, category, fn, [tuple(a) for a in args], batch, ref, rtol,
                          atol, tuple(stdout), isinstance(fn, type), tuple(raises)))
        return fn

    return register


_RNG = np.random.default_rng(20240)


def f32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def f64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def rand(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """Uniform float32 data in [lo, hi)."""
    return _RNG.uniform(lo, hi, size=shape).astype(np.float32)


def pos(*shape: int) -> np.ndarray:
    """float32 data in [0.5, 1.5): every sum, mean, min and max is positive."""
    return rand(*shape, lo=0.5, hi=1.5)


def neg(*shape: int) -> np.ndarray:
    """float32 data in [-1.5, -0.5): every sum, mean, min and max is negative."""
    return rand(*shape, lo=-1.5, hi=-0.5)


def signed(b: int, *rest: int) -> np.ndarray:
    """A batch of `b` rows whose sign alternates with the batch size, so that batch sizes
    1, 3 and 7 take different paths through sign-dependent control flow."""
    data = pos(b, *rest)
    return data if b % 4 == 1 else -data
