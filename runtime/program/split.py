"""Split a program made of forward ops followed by their gradient ops into two programs.

A training call of a converted function runs the forward part now and the gradient part later
(when `loss.backward()` reaches it). Running the whole program at backward time would compute
the forward twice, draw new random numbers and update running statistics twice; instead
`split_program` cuts the program after its first `n` top-level ops:

- **forward**: top-level ops `[:n]` and the sub-blocks they run. Every value the gradient part
  reads from the forward part is *saved*: the forward program can fetch it at the top level.
  A value computed inside a `cond` / `switch_case` branch is exported by that op as one more
  output (the branch that computed it yields it, the others yield `None`); the gradient op of
  a branch op runs only the branch the forward op ran, so it never reads a `None`.
- **backward**: top-level ops `[n:]` and the sub-blocks they run. Each saved value becomes a
  top-level persistable of the backward program whose tensor is a `Slot`: the caller puts the
  forward's fetched value in `slot._data` before running it. (A slot, not a feed: saved values
  need no checking, and the saved iterations of a `while` loop are lists, which a feed
  cannot carry.) The backward program drops the side-effect ops without outputs
  (`write_persistable`, `py_print`, `assert`): a `recompute` of a loop body re-runs the body
  only to get values, and must not update running statistics or print again.

A `while` op's gradient recomputes its body from the carried values the forward loop saved,
so values local to a loop body are never read across the cut; `SplitError` is raised if one
is. (A random op inside a loop body draws again in that recompute: loop gradients assume the
body is deterministic.)

>>> import runtime as rt
>>> from runtime.program.split import split_program
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [3], 'float64')
...     y = rt.tanh(x)
...     n = len(main.global_block().ops)
...     g = rt.static.data('y@GRAD', [3], 'float64')
...     dx, = rt.static.gradients([y], [x], target_gradients=[g])
>>> s = split_program(main, n)
>>> [op.type for op in s.forward.global_block().ops], s.saved
(['tanh'], ['t0'])
"""
from __future__ import annotations

import threading

from .debug_ops import SIDE_EFFECTS
from .ir import Op, Program, defined_under
from .serialize import copy_program


class SplitError(ValueError):
    """The gradient part reads a value that only exists inside a forward loop body."""


class Slot(threading.local):
    """Stands in for a persistable Tensor of the backward program: holds one saved value
    (one per thread, so two threads can run the same backward program at once)."""

    def __init__(self):
        self._data = None


class Split:
    """`forward` (fetch `fetch` from it), `backward`, and for each saved value its name in the
    backward program (`saved`) and the `Slot` to put it in (`slots`, same order as `fetch`)."""

    def __init__(self, forward: Program, backward: Program, fetch: list, saved: list,
                 slots: list):
        self.forward = forward
        self.backward = backward
        self.fetch = fetch
        self.saved = saved
        self.slots = slots


def split_program(program: Program, n: int) -> Split:
    """Split `program` after its first `n` top-level ops (see the module docstring). The
    program itself is not changed; both parts share its persistable tensors."""
    defined = _definitions(program)
    reads = _reads(program, program.global_block().ops[n:], set(), {})
    inputs = set(program.inputs)
    saved = [x for x in sorted(reads) if x in defined and x not in inputs
             and x not in program.tensors]

    fwd = copy_program(program)
    g = fwd.global_block()
    g.ops = g.ops[:n]
    _clear_dead_blocks(fwd)
    owner = _owners(fwd)
    fetch = [x if defined[x] == 0 else _export(fwd, x, defined[x], owner) for x in saved]
    fwd.touch()

    bwd = copy_program(program)
    g = bwd.global_block()
    g.ops = g.ops[n:]
    _clear_dead_blocks(bwd)
    for b in bwd.blocks:
        b.ops = [op for op in b.ops if not (op.type in SIDE_EFFECTS and not op.outputs)]
    slots = []
    for x in saved:
        v = bwd.find_var(x)
        if v.block is not g:  # computed in a forward branch: now a top-level value
            del v.block.vars[x]
            v.block = g
            g.vars[x] = v
        slot = Slot()
        bwd.tensors[x] = slot
        slots.append(slot)
    bwd.touch()
    return Split(fwd, bwd, fetch, saved, slots)


def _definitions(program: Program) -> dict:
    """name -> index of the block whose op (or parameter list) defines it."""
    out: dict = {}
    for b in program.blocks:
        for p in b.params:
            out[p] = b.idx
        for op in b.ops:
            for o in op.outputs:
                out[o] = b.idx
    return out


def _reads(program: Program, ops: list, local: set, cache: dict) -> set:
    """Names `ops` (and their sub-blocks) read that are not defined by them. A `recompute` op
    re-runs a forward loop body inline, so what that body defines is local to the ops after
    it."""
    local = set(local)
    got: set = set()
    for op in ops:
        got.update(x for x in op.input_names() if x not in local)
        for sub in op.blocks:
            got.update(x for x in _block_reads(program, sub, cache) if x not in local)
        local.update(op.outputs)
        if op.type == "recompute":
            local |= defined_under(program, op.blocks[0])
    return got


def _block_reads(program: Program, idx: int, cache: dict) -> set:
    got = cache.get(idx)
    if got is None:
        b = program.blocks[idx]
        local = set(b.params)
        got = _reads(program, b.ops, local, cache)
        defined = local | {o for op in b.ops for o in op.outputs}
        for op in b.ops:
            if op.type == "recompute":
                defined |= defined_under(program, op.blocks[0])
        got.update(r for r in b.results if r.__class__ is str and r not in defined)
        cache[idx] = got
    return got


def _clear_dead_blocks(program: Program) -> None:
    """Empty the blocks no top-level op runs, so the compiled program neither reads nor keeps
    what they refer to (block indices stay as they are)."""
    live: set = set()
    stack = [op for op in program.global_block().ops]
    while stack:
        op = stack.pop()
        for sub in op.blocks:
            if sub not in live:
                live.add(sub)
                stack.extend(program.blocks[sub].ops)
    for b in program.blocks[1:]:
        if b.idx not in live:
            b.ops, b.params, b.results = [], [], []


def _owners(program: Program) -> dict:
    """block index -> (the op that runs it, the index of the block holding that op)."""
    out: dict = {}
    for b in program.blocks:
        for op in b.ops:
            for sub in op.blocks:  # (a branch computed again is its own op's)
                if op.type != "recompute" or sub not in out:
                    out[sub] = (op, b.idx)
    return out


def _export(program: Program, name: str, idx: int, owner: dict) -> str:
    """Make the value `name` defined in block `idx` reachable at the top level, through one
    more output of each branch op around it; returns its top-level name."""
    op, parent_idx = owner[idx]
    if op.type not in ("cond", "switch_case"):
        raise SplitError(_loop_value_message(program, op))
    v = program.blocks[idx].var(name)
    parent = program.blocks[parent_idx]
    out = parent.new_var(program.fresh_name("saved"), (), v.dtype, kind=v.kind)
    out._static_shape = v._static_shape
    _add_output(program, op, out.name, idx, name)
    if parent_idx == 0:
        return out.name
    return _export(program, out.name, parent_idx, owner)


def _loop_value_message(program: Program, loop: Op) -> str:
    """Why the gradient cannot be split off: it reads a value each trip of `loop` makes (a
    gradient through the loop differentiated again), told at the loop's source line."""
    where = ""
    if loop.origin is not None and loop.origin < len(program.origins):
        file, line, source = program.origins[loop.origin][:3]
        text = f": {source.strip()}" if source else ""
        where = f' (File "{file}", line {line}{text})'
    return (f"the gradient needs values computed on each trip of a loop whose condition is a "
            f"tensor{where}, as it does when a gradient taken through that loop (rt.grad(..., "
            f"create_graph=True)) is differentiated again, which programs do not support. "
            "Run the function that takes that gradient eagerly (without to_static)")


def _add_output(program: Program, op: Op, out: str, idx: int, name: str) -> None:
    op.outputs.append(out)
    for sub in op.blocks:
        program.blocks[sub].results.append(name if sub == idx else None)
