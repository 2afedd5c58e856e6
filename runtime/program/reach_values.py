"""The graph values that tell, on a run, whether a reach condition held (`reached.py`).

`top_level(program, c, made)` gives a top-level 0-d bool Variable for the condition `c`:

- `Branch(pred, truth)`: the predicate, or its negation;
- `Case(index, cases, k)`: the index equals `cases[k]` (the default: none of them);
- `Ran(saves)`: the loop's saved iterations are not empty;
- `Trips(saves, site)`: the `while` op that saves into `saves` gains one more loop variable,
  False at entry and, after each trip, itself or whether `site`'s conditions all held on that
  trip (`trip_flag`): "some trip took this branch". Its final value is the flag;
- `Carries(saves, k, source)`: the `while` op gains a loop variable per pair `(k, source)`
  whose path a trip can cut (`loop_reach`): whether carried value `k` depends on `source`.

A value decided inside a branch (the predicate of an `if` nested in another, a loop in a tensor
`if`, a loop's flag there) leaves it as one more output of each branch op around it, False
from the branches that did not run (`lift`).
A `recompute` of the loop body (the loop's gradient) gets a constant for the new loop variable:
the flag changes nothing else the body computes.
"""
from __future__ import annotations

import contextlib
import functools

from .. import core
from ..dtypes import bool_
from ..ops.arrays import array_length
from ..ops.logic import equal, logical_and, logical_not, logical_or, not_equal
from ..ops.registry import STATE
from ..ops.shape import reshape
from .builder import Builder
from .reach_paths import loop_paths
from .reached import Branch, Carries, Case, Ran
from .variable import Variable


def top_level(program, c, made: dict) -> Variable:
    """A top-level 0-d bool Variable, True on the runs where the condition `c` held; `made`
    keeps those already made (one flag per loop and site, whatever reads there)."""
    with building(program):
        return held(program, c, made, program.global_block())


def held(program, c, made: dict, into) -> Variable:
    """A 0-d bool Variable that block `into` can read, True where `c` held: made in `into`
    when what decides `c` is a value `into` can read (a predicate computed before a loop and
    tested in its body), else in the block that decides it and lifted to `into`."""
    key = (c, into.idx)
    v = made.get(key)
    if v is None:
        if isinstance(c, Branch):
            pred = program.find_var(c.pred)
            at = into if _encloses(program, pred.block, into) else pred.block
            v = pred if c.truth else _in(program, at, lambda: logical_not(pred))
        elif isinstance(c, Case):
            index = program.find_var(c.index)
            at = into if _encloses(program, index.block, into) else index.block
            v = _in(program, at, lambda: _case_ran(index, c.cases, c.k))
        elif isinstance(c, Ran):
            saves = program.find_var(c.saves)
            at = into if _encloses(program, saves.block, into) else saves.block
            v = _in(program, at, lambda: array_length(saves) > 0)
        elif isinstance(c, Carries):  # (the loop carries them all, made at once)
            flags = made.get(("carries", c.saves))
            if flags is None:
                flags = made["carries", c.saves] = loop_reach(program, c.saves, made)
            v = flags[c.k, c.source]
        else:  # (one flag per loop and site, wherever it is read)
            v = made.get(c)
            if v is None:
                v = made[c] = trip_flag(program, c.saves, c.site, made)
        v = made[key] = lift(program, v, into)
    return v


def _case_ran(index: Variable, cases: tuple, k: int) -> Variable:
    """Whether the `switch_case` op on `index` runs its block `k` (0-d)."""
    tests = [equal(index, cases[k])] if k < len(cases) else [not_equal(index, c) for c in cases]
    ran = functools.reduce(logical_and, tests) if tests else STATE.builder.variable_of(True)
    return ran if ran._static_shape == () else reshape(ran, [])


def trip_flag(program, saves: str, site: tuple, made: dict) -> Variable:
    """The output of a new loop variable of the `while` op that saves into `saves`: whether
    on some trip the body's conditions `site` all held."""
    block = program.find_var(saves).block
    loop = next(op for op in block.ops if op.type == "while" and saves in op.outputs)
    cblk, bblk = (program.blocks[i] for i in loop.blocks)
    n = len(bblk.params)
    no = _false(program)
    param = _bool_var(program, bblk)
    _bool_var(program, cblk, param=True)
    trip = [held(program, c, made, bblk) for c in site]
    bblk.results.append(_in(program, bblk, lambda: logical_or(
        param, functools.reduce(logical_and, trip))).name)
    out = _bool_var(program, block, param=False)
    saved = block.new_var(program.fresh_name(), (), bool_, kind="array")
    loop.inputs.append(no)
    loop.outputs.insert(n, out.name)
    loop.outputs.append(saved.name)  # (saved too: every carried value is)
    for blk in program.blocks:
        for op in blk.ops:
            if op.type == "recompute" and tuple(op.blocks) == (bblk.idx,):
                op.inputs.append(no)
    program.touch()
    return out


def loop_reach(program, saves: str, made: dict) -> dict:
    """`(k, source) -> ` an output of the `while` op that saves into `saves`: whether its
    carried value `k` depends along a gradient path on `source` after the loop
    (`reach_paths.loop_paths`). The loop gains a bool loop variable per pair: its entry value
    is whether `source` is `k`'s own entry; after each trip, whether the trip's new `k`
    depends (under the body conditions that held on it) on a source that held, or on
    `source` itself."""
    block = program.find_var(saves).block
    loop = next(op for op in block.ops if op.type == "while" and saves in op.outputs)
    cblk, bblk = (program.blocks[i] for i in loop.blocks)
    deps, always, possible = loop_paths(program, loop)
    pairs = [(k, s) for k in possible for s in possible[k] if (k, s) not in always]
    # (only the sources some pair asks a flag for: a pair's update reads the same source's)
    flagged = {s for k, s in pairs if isinstance(s, int) or () not in deps[k].get(s, ())}
    pairs = [(k, s) for k, s in pairs if s in flagged]
    now = {pair: _bool_var(program, bblk) for pair in pairs}
    for _ in pairs:
        _bool_var(program, cblk)

    def start(j, s):  # (carried value j depends on s at a trip's start)
        return True if (j, s) in always else now.get((j, s), False)

    def within(sites):  # (one of the body-level sites held on this trip)
        if () in sites:
            return True
        return any_of([all_of([held(program, c, made, bblk) for c in site]) for site in sites])

    with building(program):
        results = [_in(program, bblk, lambda k=k, s=s: any_of([
            all_of([within(sites), start(j, s) if isinstance(j, int) else j == s])
            for j, sites in deps[k].items()])) for k, s in pairs]
        names = {True: bool_constant(program, True), False: _false(program)}
    n = len(bblk.params) - len(pairs)
    out = {}
    for i, (pair, res) in enumerate(zip(pairs, results, strict=True)):
        bblk.results.append(names[res] if isinstance(res, bool) else res.name)
        out[pair] = v = _bool_var(program, block, param=False)
        loop.inputs.append(names[pair[0] == pair[1]])
        loop.outputs.insert(n + i, v.name)
        loop.outputs.append(block.new_var(program.fresh_name(), (), bool_, kind="array").name)
    for blk in program.blocks:
        for op in blk.ops:
            if op.type == "recompute" and tuple(op.blocks) == (bblk.idx,):
                op.inputs.extend(names[False] for _ in pairs)
    program.touch()
    return out


def block_ran(program, idx: int) -> Variable | None:
    """A top-level 0-d bool Variable, True on the runs where block `idx` ran: its branch was
    taken, its loop ran a trip, and so for every block around it (a loop around it gains a
    loop variable: whether some trip ran it). None where an op around it is neither a
    `cond` nor a `while` op."""
    owners = {sub: (op, blk) for blk in program.blocks for op in blk.ops for sub in op.blocks}
    v, block = True, program.blocks[idx]
    with building(program):
        while block.idx != 0:
            op, parent = owners[block.idx]
            if op.type == "cond":
                v = branch_output(program, op, block, v)
            elif op.type == "while" and block.idx == op.blocks[-1]:
                v = _ran_trip(program, op, parent, v)
            elif op.type != "while" or v is not True:  # (a loop's test runs with the loop)
                return None
            block = parent
        return program.find_var(bool_constant(program, True)) if v is True else v


def branch_output(program, op, block, v) -> Variable:
    """A new output of the `cond` op `op` (in the block around it): `v` (True, or a bool
    of its branch `block`) from that branch, False from the others."""
    out = program.blocks[block.parent].new_var(program.fresh_name(), (), bool_,
                                                stop_gradient=True)
    op.outputs.append(out.name)
    with building(program):
        for sub in op.blocks:
            program.blocks[sub].results.append(
                (bool_constant(program, True) if v is True else v.name)
                if sub == block.idx else _false(program))
    return out


def _ran_trip(program, loop, block, v) -> Variable:
    """A new loop variable of `loop` (in `block`), False at entry, True after a trip on
    which `v` (True, or a bool of the body) held; its output."""
    cblk, bblk = (program.blocks[i] for i in loop.blocks)
    n = len(bblk.params)
    param = _bool_var(program, bblk)
    _bool_var(program, cblk)
    bblk.results.append(bool_constant(program, True) if v is True else _in(
        program, bblk, lambda: logical_or(param, v)).name)
    out = _bool_var(program, block, param=False)
    loop.inputs.append(_false(program))
    loop.outputs.insert(n, out.name)
    program.touch()
    return out


def all_of(values: list):
    """The logical and of bools and 0-d bool Variables, folding the Python ones."""
    if any(v is False for v in values):
        return False
    vs = [v for v in values if v is not True]
    return functools.reduce(logical_and, vs) if vs else True


def any_of(values: list):
    """The logical or of bools and 0-d bool Variables, folding the Python ones."""
    if any(v is True for v in values):
        return True
    vs = [v for v in values if v is not False]
    return functools.reduce(logical_or, vs) if vs else False


def lift(program, v: Variable, to) -> Variable:
    """`v` as a value block `to` can read: itself where it is defined in `to` or a block
    around it; else (defined in a branch below `to`, or below a block around `to`: a
    backward() in a later branch, `branch_backward`) each branch op between its block and
    the first block around both gains an output, `v` from the branch that holds it, False
    from the others."""
    if _encloses(program, v.block, to):
        return v
    owners = {sub: (op, blk) for blk in program.blocks for op in blk.ops for sub in op.blocks}
    block = v.block
    while not _encloses(program, block, to):
        op, parent = owners[block.idx]
        out = parent.new_var(program.fresh_name(), (), bool_, stop_gradient=True)
        no = _false(program)
        op.outputs.append(out.name)
        for sub in op.blocks:
            program.blocks[sub].results.append(v.name if sub == block.idx else no)
        v, block = out, parent
    program.touch()
    return v


def _encloses(program, outer, block) -> bool:
    """Whether `outer` is `block` or a block around it (whose values `block` can read)."""
    while block is not outer:
        if block.idx == 0:
            return False
        block = program.blocks[block.parent]
    return True


def _false(program) -> str:
    """The name of a constant False (a captured tensor: readable in every block)."""
    return bool_constant(program, False)


def bool_constant(program, value: bool) -> str:
    """The name of a constant bool (a captured tensor: readable in every block)."""
    return _in(program, program.global_block(),
               lambda: STATE.builder.capture(core.constant(value)))


def _bool_var(program, block, param: bool = True) -> Variable:
    v = block.new_var(program.fresh_name(), (), bool_, stop_gradient=True)
    if param:
        block.params.append(v.name)
    return v


def _in(program, block, make):
    """`make()` with the builder appending to `block`."""
    b = STATE.builder
    prev = b.block
    try:
        b.block = block
        return make()
    finally:
        b.block = prev


@contextlib.contextmanager
def building(program):
    """The builder building `program` (a new one when none is: a split's forward part)."""
    b = STATE.builder
    if b is not None and b.program is program:
        yield b
        return
    STATE.builder = Builder(program)
    STATE.builder.cross_block_reads = True
    try:
        yield STATE.builder
    finally:
        STATE.builder = b
