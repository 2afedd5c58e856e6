"""Op descriptions from which `test_generated.py` builds every op test (after Thunder's OpInfos).

How to add an op
----------------
Put an `OpInfo` into the `OPINFOS` list of a module `tests/ops/opinfo_<family>.py` (any new
module matching that pattern is picked up; no registration needed):

    OpInfo("tanh", rt.tanh, np.tanh, samples=unary_samples())

- `name`: the registry op name (`runtime.ops.registry.OPS`); one OpInfo may cover more ops via
  `covers=("sum_to_like",)` when those are only reachable through this one.
- `fn`: the public function; `ref`: a NumPy reference taking NumPy arrays and the same kwargs.
- `samples(rng)`: a list of `Sample(args, kwargs)`; args are NumPy arrays or Python scalars.
  Floating arrays are cast to each dtype under test; integer and bool arrays are passed as
  they are (indices, masks). Cover broadcasting and every path the kernel has.
- `grad`: True (every floating array argument), a tuple of argument positions, or False
  (comparisons, argmax, ...). Gradients are checked in float64 against central differences
  of `ref`. A sample with `grad=False` is skipped for gradients (ties, kinks).
- `error_samples`: `ErrorSample(args, kwargs, exc, match)`; `match` is a regex the message must
  match; it should name the op, the argument and the shapes.
- Ops that need no OpInfo of their own (gradient helpers tested through other ops, control
  flow tested elsewhere) go into a dict `EXEMPT = {op_name: reason}` in the same module.

Every op is checked: eager value vs `ref` per dtype, result dtype and shape vs the op's infer
rule (every op the public function binds is checked), gradients vs finite differences, error
samples, and (once `runtime.static` exists) static vs eager values and gradients.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Sample:
    """One call: `fn(*args, **kwargs)`. `grad=False` skips it in the gradient check."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    grad: bool = True

    def __repr__(self):
        def show(a):
            if isinstance(a, np.ndarray):
                return f"{a.dtype}{list(a.shape)}"
            if isinstance(a, (list, tuple)):
                return "[" + ", ".join(show(x) for x in a) + "]"
            return repr(a)
        parts = [show(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})"


@dataclass
class ErrorSample:
    """A call that must raise `exc` with a message matching the regex `match`."""

    args: tuple
    kwargs: dict
    exc: type
    match: str


@dataclass
class OpInfo:
    name: str
    fn: Callable
    ref: Callable
    samples: Callable[[np.random.Generator], list]
    dtypes: tuple = ("float32", "float64")
    grad: bool | tuple = True
    error_samples: list = field(default_factory=list)
    rtol: dict = field(default_factory=lambda: {"float32": 1e-5, "float64": 1e-10})
    atol: dict = field(default_factory=lambda: {"float32": 1e-5, "float64": 1e-10})
    grad_tol: float = 1e-6
    covers: tuple = ()
    static: bool = True  # False for ops that static mode cannot express (e.g. data-dependent)

    def __repr__(self):
        return self.name


def grad_positions(info: OpInfo, args) -> list:
    """The argument positions whose gradients are checked for this call."""
    if info.grad is False:
        return []
    cand = range(len(args)) if info.grad is True else info.grad
    return [i for i in cand
            if isinstance(args[i], np.ndarray) and args[i].dtype.kind == "f"]


# ---- sample builders shared by opinfo modules ---------------------------------------------

def randn(rng, *shape):
    return rng.standard_normal(shape)


def positive(rng, *shape, low=0.2, high=2.0):
    return rng.uniform(low, high, size=shape)


def away_from_int(rng, *shape):
    """Values at least 0.1 from any integer or half-integer (floor, round, ... are smooth)."""
    base = rng.integers(-4, 4, size=shape) + rng.choice([0.15, 0.35, 0.65, 0.85], size=shape)
    return base.astype(np.float64)


def unary_samples(gen=randn):
    """Shapes with a scalar, a vector, a matrix and a 0-d tensor."""

    def samples(rng):
        return [Sample((gen(rng, 3, 4),)), Sample((gen(rng, 5),)), Sample((gen(rng),)),
                Sample((gen(rng, 2, 1, 3),))]

    return samples


def binary_samples(gen_x=randn, gen_y=randn, scalars=(2.0, 3)):
    """Same shapes, broadcasting both ways, 0-d operands and Python scalars on either side."""

    def samples(rng):
        out = [
            Sample((gen_x(rng, 3, 4), gen_y(rng, 3, 4))),
            Sample((gen_x(rng, 3, 4), gen_y(rng, 4))),
            Sample((gen_x(rng, 2, 1, 4), gen_y(rng, 3, 1))),
            Sample((gen_x(rng, 1), gen_y(rng, 3, 2))),
            Sample((gen_x(rng), gen_y(rng, 2, 3))),
        ]
        for s in scalars:
            out.append(Sample((gen_x(rng, 2, 3), s)))
            out.append(Sample((s, gen_y(rng, 2, 3))))
        return out

    return samples


def broadcast_error(name: str, fn_args=lambda a, b: (a, b), dtype=np.float64):
    """The standard shape-mismatch error sample for a broadcasting binary op."""
    a, b = np.ones((2, 3), dtype), np.ones((4,), dtype)
    return ErrorSample(fn_args(a, b), {}, ValueError,
                       rf"{name}: x has shape \[2, 3\] but y has shape \[4\]")


# Ops with no OpInfo of their own, and why (opinfo modules add theirs in their own EXEMPT).
EXEMPT: dict[str, str] = {}
