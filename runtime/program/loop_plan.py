"""The plan of a tensor loop's C function (`native_loops.py` makes it, `native_loops_emit.py`
writes it).

A `WhilePlan` says everything the C text of one `while` op needs, so that deciding and
writing stay apart and each can be tested alone:

    carried values  s<k>: (dtype, elements), in the caller's state buffer, first filled from
                    an array argument or a literal (unless the call resumes a paused loop)
    arguments       a<k>: arrays read by the loop; n<k>: int64 loop bounds
    buffers         b<k>: (dtype, elements) on the C stack, each the result of one step
    for (;;) {      the condition's steps; stop when `cond` is zero; the body's steps;
                    the copies to the next iteration }
    outputs         o<k>: carried values read after the loop, copied out

A loop may come with a prologue (`pre_steps`: the ops before it in its block, run once
before the carried values' first values, when the call does not resume a paused loop):
elementwise steps, means over all elements (`Reduce`) and tensor `if`s whose branches are
elementwise (`Branch`), so that a function's `if` and the loop after it are one C call.

A step reads each operand from a `Ref` (with its element count: equal to the result's, one,
or the trailing dimensions of the result, read modulo its size) or a Python literal.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ref:
    """A value the C function reads: `place` "state" (carried value `index`), "array" (array
    argument `index`), "int" (int64 argument `index`) or "buffer" (buffer `index`)."""

    place: str
    index: int


@dataclass
class Carried:
    """A carried value: its `dtype`, `shape`, `size` (elements, at least one), `offset` (bytes
    into the state buffer) and `init` (a `Ref` to an array argument, or a literal)."""

    dtype: str
    shape: tuple
    size: int
    offset: int
    init: object


@dataclass
class Buffer:
    """A buffer on the C stack: `dtype` and `size` (elements, at least one)."""

    dtype: str
    size: int


@dataclass
class LoopStep:
    """One elementwise op: `result = type(*operands)` over `size` elements, into buffer
    `result`. `operands`: a `Ref` or a Python literal each; `sizes`: each operand's element
    count (None for a literal); `dtypes`: each operand's dtype (None for a literal); `dtype`:
    the result's."""

    type: str
    dtype: str
    size: int
    result: int
    operands: list
    sizes: list
    dtypes: list


@dataclass
class MatmulStep:
    """A matrix product `a @ b` of 2-D float values into buffer `result` ([m, n]): `a` is
    [m, k] ([k, m] read transposed when `trans_a`), `b` [k, n] ([n, k] when `trans_b`). Each
    element sums its k products in order in `dtype` (BLAS sums in another order: the result
    is NumPy's within a rounding)."""

    dtype: str
    m: int
    k: int
    n: int
    result: int
    a: Ref
    b: Ref
    trans_a: bool
    trans_b: bool


@dataclass
class Reduce:
    """A mean over all `size` elements of `operand` (a `Ref`) of `dtype` into buffer
    `result`, summed as NumPy's `add.reduce` sums a contiguous array (pairwise, blocks of 8)
    and divided as `numpy.mean` divides (in double, then rounded to `dtype`)."""

    dtype: str
    size: int
    result: int
    operand: Ref


@dataclass
class Branch:
    """A tensor `if`: when `pred` (a `Ref` to one bool) is nonzero, `then_steps` then
    `then_copies`, else `else_steps` then `else_copies` (the copies write the `if`'s results
    into the buffers its readers read)."""

    pred: Ref
    then_steps: list
    then_copies: list
    else_steps: list
    else_copies: list


@dataclass
class Copy:
    """A copy to the next iteration: `target` (a `Ref`) gets `source` (a `Ref`, or a literal
    filling it) over `size` elements of `dtype`."""

    target: Ref
    source: object
    dtype: str
    size: int


@dataclass
class LoopOutput:
    """A carried value read after the loop: the program's `name` for it, its `dtype`,
    `shape` and `state` (the carried value's index)."""

    name: str
    dtype: str
    shape: tuple
    state: int


@dataclass
class WhilePlan:
    """The C function `name` of one `while` op: see the module doc. `arrays`: (Python
    expression, dtype, shape) of each array argument; `ints`: the Python expression of each
    int64 argument; `state_bytes`: the bytes the carried values take; `trips_per_call`: the
    iterations after which a call pauses (the caller resumes it: Python sees Ctrl-C);
    `contiguous`: the indices of the array arguments that must come C-contiguous (NumPy sums
    another layout in another order)."""

    name: str
    trips_per_call: int
    carried: list = field(default_factory=list)
    arrays: list = field(default_factory=list)
    ints: list = field(default_factory=list)
    buffers: list = field(default_factory=list)
    cond_steps: list = field(default_factory=list)
    cond: Ref | None = None
    body_steps: list = field(default_factory=list)
    copies: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    state_bytes: int = 0
    pre_steps: list = field(default_factory=list)
    contiguous: set = field(default_factory=set)  # array arguments a reduction reads
