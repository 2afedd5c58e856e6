"""Which values a run of a program reaches: the conditions under which a value (a parameter,
an input) is read.

Eager autograd gives a parameter a gradient only when the call used it: one read only on the
branch of a tensor `if` that this input did not take, or only in the body of a tensor `while`
(`for i in range(n)` with a tensor `n`) that ran zero times, keeps `.grad is None`, and an
optimizer with weight decay or momentum leaves it alone. The program's gradient has a value
for it on every run (zeros from the branch not taken, or from the loop that did not run), so
the caller needs, per run, whether the value was read.

`reach_conditions(program, names)` finds, for each name read only under such conditions, the
*sites* that read it: each site is a tuple of conditions that all hold on a run that reads it
there, and the name is reached on a run when the conditions of any one site hold. A condition
is one of

- `Branch(pred, truth)`: a `cond` op took the branch `truth` (its predicate equals `truth`);
  in a site, the conditions of the branches around it come first (`if` / `elif` chains);
- `Ran(saves)`: a `while` op ran its body at least once: the array its first carried value is
  saved into each iteration (`backward.py` adds it when the loop is differentiated) is not
  empty. A loop that saves nothing gives no gradient to what it reads, and its reads count as
  unconditional. What only the loop's test block reads is left out: that block gives one
  bool (no gradient path), and a branch inside it is decided on values that never leave it;
- `Case(index, cases, k)`: a `switch_case` op (`self.layers[i](h)` with a tensor `i`) ran
  its block `k`;
- `Carries(saves, k, source)`: after that `while` op, its carried value `k` depends along a
  gradient path on `source` (`reach_paths` follows gradient paths through loop bodies);
- `Trips(saves, site)`: on some trip of that `while` op the conditions of `site` (a site of
  the loop body: its own top-level `cond` ops, the loops inside it) all held. A parameter read
  only on a branch of a tensor `if` inside the body of a loop that ran, when no trip took that
  branch, is not reached (`reach_values.trip_flag` makes the loop carry the flag).

A name read at the top level, or where no condition applies, is reached on every run and left
out.

>>> import runtime as rt
>>> from runtime.program.reached import reach_conditions
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [2], 'float32')
...     a = rt.static.data('a', [2], 'float32')
...     b = rt.static.data('b', [2], 'float32')
...     y = rt.static.nn.cond(x.sum() > 0, lambda: x * a, lambda: x - b)
>>> reach_conditions(main, ['x', 'a', 'b'])
{'a': [(Branch(pred='t1', truth=True),)], 'b': [(Branch(pred='t1', truth=False),)]}
"""
from __future__ import annotations

from typing import NamedTuple

from .ir import Op, Program


class Branch(NamedTuple):
    """The top-level `cond` op whose predicate is `pred` took the branch `truth`."""

    pred: str
    truth: bool


class Ran(NamedTuple):
    """The `while` op that saves into the array `saves` ran its body at least once."""

    saves: str


class Case(NamedTuple):
    """The `switch_case` op on the integer `index` ran its block `k`: `index` equals
    `cases[k]`, or (`k == len(cases)`, the default) none of them."""

    index: str
    cases: tuple
    k: int


class Trips(NamedTuple):
    """On some trip of the `while` op that saves into `saves`, the body's conditions `site`
    all held."""

    saves: str
    site: tuple


class Carries(NamedTuple):
    """After the `while` op that saves into `saves`, its carried value `k` depends along a
    gradient path on `source`: the loop's entry value of carried value `source` (an int) or a
    value the body reads from outside the loop (a name). A trip's body may cut that path (a
    `detach()` a tensor `if` in the body chooses), so the loop carries the answer
    (`reach_values.loop_reach`)."""

    saves: str
    k: int
    source: object


def reach_conditions(program: Program, names, ops=None) -> dict:
    """`name -> [site, ...]` (a site: a tuple of `Branch` / `Ran` conditions) for each of
    `names` read only under conditions by `ops` (default: the program's top-level ops) and
    the blocks they run; names read unconditionally, or not at all, are left out."""
    wanted = set(names)
    sites: dict = {}  # name -> the distinct sites reading it
    for op in program.global_block().ops if ops is None else ops:
        _op_reads(program, op, (), wanted, sites)
    return {n: list(s) for n, s in sites.items() if () not in s}


def _op_reads(program: Program, op: Op, site: tuple, wanted: set, sites: dict) -> None:
    _record(op.input_names(), site, wanted, sites)
    if op.type == "cond":
        for idx, truth in zip(op.blocks, (True, False), strict=True):
            _block_reads(program, idx, (Branch(op.inputs[0], truth),), wanted, sites)
    elif op.type == "while":
        body_idx = op.blocks[1]
        n = len(program.block(body_idx).params)
        # (its test block is left out: it gives one bool, so nothing read there is on a
        # gradient path, and a condition decided there cannot leave it as a flag)
        if len(op.outputs) == n:  # (saves nothing: no gradient, reads count as unconditional)
            _record(_reads_below(program, body_idx), site, wanted, sites)
            return
        saves = op.outputs[n]
        inner: dict = {}  # name -> the sites reading it within one trip of the body
        _block_reads(program, body_idx, (), wanted, inner)
        for name, body_sites in inner.items():
            for s in [()] if () in body_sites else body_sites:
                _record((name,), site + ((Trips(saves, s),) if s else (Ran(saves),)),
                        wanted, sites)
    elif op.type == "switch_case" and op.inputs[0].__class__ is str:
        cases = tuple(op.attrs["cases"])
        for k, idx in enumerate(op.blocks):
            _block_reads(program, idx, site + (Case(op.inputs[0], cases, k),), wanted, sites)
    else:
        for idx in op.blocks:
            _block_reads(program, idx, site, wanted, sites)


def _block_reads(program: Program, idx: int, site: tuple, wanted: set, sites: dict) -> None:
    block = program.block(idx)
    for op in block.ops:
        _op_reads(program, op, site, wanted, sites)
    _record((r for r in block.results if r.__class__ is str), site, wanted, sites)


def _record(reads, site: tuple, wanted: set, sites: dict) -> None:
    for name in reads:
        if name in wanted:
            sites.setdefault(name, {})[site] = None  # (a dict: distinct sites, in order)


def _reads_below(program: Program, idx: int) -> set:
    """The names the ops of block `idx` and of the blocks below it read."""
    reads: set = set()
    stack = [idx]
    while stack:
        block = program.block(stack.pop())
        for op in block.ops:
            reads.update(op.input_names())
            stack.extend(op.blocks)
        reads.update(r for r in block.results if r.__class__ is str)
    return reads
