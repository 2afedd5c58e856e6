"""The graph the gradients taken in a graph loop's body free, trip by trip, as eager autograd
frees it.

An `rt.grad` without `retain_graph` in a loop body frees, on each trip, the graph its targets
were computed from: that trip's values and, through the loop variables, what earlier trips
(and the code before the loop) computed. Eager code raises "backward through a graph that
was already freed" on the trip whose gradient walks into a graph an earlier trip freed:
truncated backpropagation through time without `h = h.detach()` on the second trip, a PGD
step `x_adv = x_adv + a * g.sign()` from a leaf on the third (the first trip's `x_adv` is the
leaf itself, which holds no graph to free). After the call, a `backward()` through a loop
variable whose graph holds a value some trip freed raises too.

The program traces one trip for all of them (`freed_graph.value_graph` follows each loop
variable through the body), so `follow_loop_frees` makes the loop carry what only the trips
tell: per loop variable, whether its graph holds a value a trip freed (`holds`), and whether a
trip ran before this one (from which a loop variable that entered as a leaf holds a graph).
A gradient in the body then raises eager's error, at the user's line, on a trip where it walks
a loop variable that holds a freed value (or a value from before the loop that an earlier
trip freed); the loop's results report the flags for `freed_graph.freed_conditions`. A loop
variable enters holding a freed value where its entry value's graph holds one a gradient
freed before the loop ran (earlier in its block or around it, on a branch of an earlier tensor
`if` on the runs that took it, or on the trips of an earlier loop: that loop's flags), so the
first trip raises there too.
A loop in another loop's body is followed inside the outer one's (`_Following`): its loop
variables enter holding a freed value, or a graph, where the outer loop's flags say the values
they enter with do, and the outer loop's flags take in the inner loop's results'.
"""
from __future__ import annotations

from ..dtypes import bool_
from .freed_branches import encloses, raise_before, ran_before
from .freed_graph import GradientWalk, insert_ops, value_graph, walk
from .ir import Program, defined_under
from .reach_values import all_of, any_of, bool_constant, branch_output, building
from .variable import Variable


def follow_loop_frees(program: Program, error) -> dict:
    """For each `while` op whose body (or a loop in it) took a gradient without
    `retain_graph`: the loop gains its flags and the run-time raises (`error()` gives the
    exception); returns {block index (the body, a block in it): {loop output name: top-level
    flag name, True where the output's graph holds a value a trip freed}} for the loops at
    the program's top level or in its tensor `if`s (a block in their bodies: theirs)."""
    found = {}
    if not program.gradient_walks:
        return found
    following = _Following(program, error)
    for op, block in following.loops_in(_branches_under(program, 0)):
        lifted = following.loop(op, block, {})
        top = {out: levels[-1].name for out, levels in lifted.items()}
        found.update(dict.fromkeys(_blocks_in(program, op.blocks[1]), top))
    return found


class _Following:
    """The loops of one program, each followed around the loops in its body (which read its
    flags and whose flags it reads), siblings in the order their bodies took gradients (so a
    loop's entry values see what earlier loops freed)."""

    def __init__(self, program: Program, error):
        self.program, self.error = program, error
        self.owners = _owners(program)
        # loop output -> its flag as each block up to the loop body around it reads it
        self.earlier: dict = {}

    def loops_in(self, blocks) -> list:
        """(op, block) of the graph loops in `blocks` whose bodies (or loops in them) take a
        gradient that frees, in the order they took the first."""
        walks = self.program.gradient_walks
        found = []
        for block in (self.program.blocks[i] for i in blocks):
            for op in block.ops:
                if op.type == "while" and len(op.blocks) == 2:
                    inside = _blocks_in(self.program, op.blocks[1])
                    taken = [k for k, w in enumerate(walks) if w.frees and w.block in inside]
                    if taken:
                        found.append((taken[0], op, block))
        return [(op, block) for _, op, block in sorted(found, key=lambda e: e[0])]

    def loop(self, op, block, enclosing: dict) -> dict:
        """Follow loop `op` (in `block`) and the loops in its body (`enclosing`: the flags
        of the loops around it, per body parameter: `_Loop.param_flags`); its outputs'
        flags, lifted."""
        program = self.program
        under = _branches_under(program, op.blocks[1])
        freed = {n: [b for b, why in blocks.items() if b in under and why is None]
                 for n, blocks in program.freed.items()}
        loop = _Loop(program, op, block, {n: bs for n, bs in freed.items() if bs})
        loop.prepare(self.earlier, enclosing)
        around = {**enclosing, **loop.param_flags()}
        for inner, inner_block in self.loops_in(under):
            self.loop(inner, inner_block, around)
        walks = [w for w in program.gradient_walks if w.block in under]
        flags = loop.finish(walks, self.error, self.earlier, enclosing)
        lifted = {out: self._lifted(block, flag) for out, flag in flags.items()}
        self.earlier.update(lifted)
        _raise_after(program, under, lifted, self.error)
        return lifted

    def _lifted(self, block, flag: str) -> list:
        """`flag`, a bool of `block` (a branch), as each block from there up to the top
        level, or to the loop body around it, reads it: False where a `cond` op around it
        took another branch (`reach_values.branch_output`)."""
        v = self.program.find_var(flag)
        levels = [v]
        while block.idx != 0:
            op, parent = self.owners[block.idx]
            if op.type != "cond":
                break
            v = branch_output(self.program, op, block, v)
            levels.append(v)
            block = parent
        return levels


def _raise_after(program: Program, under: dict, lifted: dict, error) -> None:
    """Raise `error()` before each gradient after the loop that walks a loop result whose
    graph holds a value a trip freed (`lifted`: its flag, per level), on the runs where it
    does."""
    for w in sorted(program.gradient_walks, key=lambda w: -w.position):
        if w.block in under:
            continue
        flags = [_readable(program, levels, program.blocks[w.block])
                 for out, levels in lifted.items() if out in w.names]
        flags = [f for f in flags if f is not None]  # (a gradient outside the loop around)
        if flags:
            with building(program):
                raise_before(program, w.block, w.position, flags, w.origin, error)


def _owners(program: Program) -> dict:
    return {sub: (op, blk) for blk in program.blocks for op in blk.ops for sub in op.blocks}


def _readable(program: Program, levels: list, block):
    """An earlier loop's flag (`levels`: as each block up to the top reads it) as `block`
    reads it; None where no level encloses `block`."""
    return next((v for v in levels if encloses(program, v.block.idx, block.idx)), None)


def _blocks_in(program: Program, idx: int) -> set:
    """Block `idx` and every block nested in it."""
    out, todo = set(), [idx]
    while todo:
        i = todo.pop()
        out.add(i)
        todo.extend(sub for op in program.blocks[i].ops for sub in op.blocks)
    return out


def _branches_under(program: Program, idx: int) -> dict:
    """Block `idx` and the branches of the `cond` ops in it (and in those, ...): block ->
    (its `cond` op, the block around it), None for `idx`."""
    out, todo = {idx: None}, [idx]
    while todo:
        block = program.blocks[todo.pop()]
        for op in block.ops:
            if op.type == "cond":
                for sub in op.blocks:
                    out[sub] = (op, block)
                    todo.append(sub)
    return out


class _Loop:
    """One `while` op (in `block`) and what its body's gradients free (names, one trip's)."""

    def __init__(self, program: Program, op, block, freed: dict):
        self.program, self.op, self.block = program, op, block
        self.freed = freed  # name -> the blocks (the body, branches in it) freeing it
        self.cblk, self.bblk = (program.blocks[i] for i in op.blocks)
        self.under = _branches_under(program, self.bblk.idx)
        self.taken: dict = {}
        self.params = list(self.bblk.params)
        self.index = {p: j for j, p in enumerate(self.params)}
        self.graph = graph = value_graph(program)
        self.stop = frozenset(self.params)
        inside = defined_under(program, self.bblk.idx)
        # (values from before the loop an earlier trip's gradient freed)
        self.outer = {n for n in freed if n not in inside and n in graph}
        self.carried = [j for j, p in enumerate(self.params) if walk(program, graph, [p],
                                                                     stop={p})]

    def prepare(self, earlier: dict, enclosing: dict) -> None:
        """The loop's flags (new loop variables): whether a trip ran, per loop variable
        whether its graph holds a freed value (from its entry value's on: `_entry_holds`),
        whether a trip freed a value from before the loop."""
        with building(self.program) as b:
            entry = self._entry_holds(b, earlier, enclosing)
            self.carried = sorted(set(self.carried) | set(entry))
            self.ran = self._new_flag()
            self.holds = {j: self._new_flag(entry.get(j, False)) for j in self.carried}
            self.outer_flag = self._new_flag() if self.outer else False

    def param_flags(self) -> dict:
        """{body parameter: (whether its graph holds a freed value, whether it holds a graph:
        bools of the body)} at a trip's start, for the loops inside (their ops go first)."""
        bblk = self.bblk
        with building(self.program) as b:
            mark = len(bblk.ops)
            prev, b.block = b.block, bblk
            try:
                out = {p: (self.holds.get(j, False), self._has_node(j, self.ran))
                       for j, p in enumerate(self.params)}
            finally:
                b.block = prev
            made = bblk.ops[mark:]
            del bblk.ops[mark:]
            insert_ops(self.program, bblk.idx, 0, made)
        return out

    def finish(self, walks: list, error, earlier: dict, enclosing: dict) -> dict:
        """The raises before the body's gradients, and the flags' values after a trip;
        {loop output: its flag output}."""
        program, bblk = self.program, self.bblk
        with building(program) as b:
            prev = b.block
            try:
                for w in sorted(walks, key=lambda w: -w.position):
                    self._raise_at(w, error, enclosing)
                b.block = bblk
                results = [True] + [self._holds_after(j, earlier) for j in self.carried]
                if self.outer:
                    results.append(any_of([self.outer_flag] + [self._freed_when(n)
                                                               for n in self.outer]))
                bblk.results.extend(bool_constant(program, r) if isinstance(r, bool)
                                    else r.name for r in results)
            finally:
                b.block = prev
        program.touch()
        n = len(self.params)
        return {self.op.outputs[j]: self.op.outputs[n + 1 + i]
                for i, j in enumerate(self.carried)}

    def _entry_holds(self, b, earlier: dict, enclosing: dict) -> dict:
        """{loop variable index: True or a bool of the loop's block} for the loop variables
        whose entry value's graph holds a value freed before the loop ran: by a gradient
        earlier in its block or a block around it, on a branch of an earlier tensor `if`
        (on the runs that took it), by a trip of an earlier loop (`earlier`: its flags), or
        of a loop around it (`enclosing`). The ops computing them go before the loop op."""
        program, graph, block = self.program, self.graph, self.block
        before = self._freed_before()
        mark = len(block.ops)
        prev, b.block = b.block, block
        try:
            self.entry_node = self._entry_nodes(enclosing)
            out = {}
            for j, x in enumerate(self.op.inputs[:len(self.params)]):
                if x.__class__ is not str:
                    continue
                reached = walk(program, graph, [x])
                conds = [c for n, c in before.items() if n in reached] + [
                    _readable(program, earlier[n], block) for n in reached if n in earlier] + [
                    enclosing[n][0] for n in reached if n in enclosing]
                held = any_of(list({id(c): c for c in conds if c is not None}.values()))
                if held is not False:
                    out[j] = held
        finally:
            b.block = prev
        made = block.ops[mark:]
        del block.ops[mark:]
        insert_ops(program, block.idx, block.ops.index(self.op), made)
        return out

    def _freed_before(self) -> dict:
        """{name: True or a bool of the loop's block}: the values a gradient freed before
        the loop op runs (in its block or a block around it, or on a branch of a tensor `if`
        before it on the runs that took it; a gradient in another loop's body is that
        loop's flags)."""
        program, owners = self.program, _owners(self.program)
        anchor, blk, op = {}, self.block, self.op  # block around the loop -> its op there
        while True:
            anchor[blk.idx] = blk.ops.index(op)
            if blk.idx == 0:
                break
            op, blk = owners[blk.idx]
        params = {n for bl in program.blocks for n in bl.params}
        out: dict = {}
        for w in program.gradient_walks:
            if not w.frees or w.block in self.under:
                continue
            ran = self._ran_before_loop(w, anchor, owners)
            if ran is None:
                continue
            for n in w.names:
                if (n in self.graph or n in params) and out.get(n) is not True:
                    out[n] = ran if n not in out else any_of([out[n], ran])
        return out

    def _ran_before_loop(self, w: GradientWalk, anchor: dict, owners: dict):
        """True, or a bool of a block around the loop, where gradient `w` ran before the
        loop op; None where it never does on one run before it (after it, in another loop's
        body, or on a branch the loop is in another branch of)."""
        idx, position = w.block, w.position
        while idx not in anchor:
            op, parent = owners[idx]
            if op.type != "cond":
                return None
            idx, position = parent.idx, parent.ops.index(op)
        if position >= anchor[idx]:
            return None
        return True if idx == w.block else ran_before(self.program, owners, w.block,
                                                       self.block.idx)

    def _freed_when(self, name: str):
        """True, or the bool of the body that is True on the trips that freed `name`."""
        blocks = self.freed[name]
        if self.bblk.idx in blocks:
            return True
        return any_of([self._taken_flag(b) for b in blocks])

    def _taken_flag(self, idx: int):
        """A bool of the body, True on the trips that ran branch `idx` (inside it): each
        `cond` op around the branch gains an output (`reach_values.branch_output`)."""
        v = self.taken.get(idx)
        if v is None:
            v, block = True, self.program.blocks[idx]
            while block is not self.bblk:
                op, parent = self.under[block.idx]
                v = branch_output(self.program, op, block, v)
                block = parent
            self.taken[idx] = v
        return v

    def _new_flag(self, entry=False):
        """A new bool loop variable of the loop, `entry` at entry (False, True or a bool of
        the loop's block): its body parameter."""
        program, op = self.program, self.op
        param = self.bblk.new_var(program.fresh_name(), (), bool_, stop_gradient=True)
        self.bblk.params.append(param.name)
        self.cblk.params.append(self.cblk.new_var(program.fresh_name(), (), bool_,
                                                  stop_gradient=True).name)
        out = self.block.new_var(program.fresh_name(), (), bool_, stop_gradient=True)
        op.inputs.append(entry.name if isinstance(entry, Variable) else
                         bool_constant(self.program, entry))
        op.outputs.insert(len(self.bblk.params) - 1, out.name)
        return param

    def _made_by_op(self, name: str, stop) -> tuple:
        """(whether an op computes `name` along its graph, not only branches and loops that
        pass values on, up to `stop`; the loop variables in `stop` it passes on)."""
        graph = self.graph
        reached = walk(self.program, graph, [name], stop=stop)
        return (any(graph[n][1] is not None for n in reached if n in graph and n not in stop),
                [self.index[n] for n in reached if n in stop])

    def _entry_nodes(self, enclosing: dict) -> list:
        """Per loop variable: whether its entry value holds a graph (is no leaf): a bool, or
        a bool of the loops around where only their loop variables give it one (a leaf
        argument on their first trip)."""
        stop = frozenset(enclosing)
        out = []
        for x in self.op.inputs[:len(self.params)]:
            if x.__class__ is not str:
                out.append(False)
                continue
            reached = walk(self.program, self.graph, [x], stop=stop)
            by_op = any(self.graph[n][1] is not None for n in reached
                        if n in self.graph and n not in stop)
            out.append(True if by_op else any_of([enclosing[n][1] for n in reached
                                                   if n in stop]))
        return out

    def _has_node(self, i: int, ran):
        """Whether loop variable `i` holds a graph at a trip's start (is no leaf): as it
        entered, or after a trip when an op of the body computes it."""
        entry = self.entry_node[i]
        if entry is True:
            return True
        result = self.bblk.results[i]
        if result.__class__ is not str:
            return entry
        by_op, passed = self._made_by_op(result, self.stop)
        return any_of([entry, ran] if by_op else [entry] + [self.entry_node[k] for k in passed])

    def _holds(self, names, ran, holds) -> list:
        """What tells whether a graph walking `names` holds a freed value: True, or flags."""
        out = []
        for n in names:
            i = self.index.get(n)
            if i is None:
                if n in self.freed:
                    out.append(self._freed_when(n))
                continue
            if i in holds:
                out.append(holds[i])
            if n in self.freed:
                out.append(all_of([self._has_node(i, ran), self._freed_when(n)]))
        return out

    def _holds_after(self, j: int, earlier: dict):
        """Whether loop variable `j` holds a freed value after a trip: through the loop
        variables it is computed from, values the trip freed, or loops in the body."""
        result = self.bblk.results[j]
        if result.__class__ is not str:
            return False
        reached = walk(self.program, self.graph, [result], stop=self.stop)
        inner = [_readable(self.program, earlier[n], self.bblk) for n in reached
                 if n in earlier]
        return any_of(self._holds(reached, self.ran, self.holds) +
                      [f for f in inner if f is not None])

    def _raise_at(self, walk_: GradientWalk, error, enclosing: dict) -> None:
        """Raise `error()` before the gradient `walk_` (in the body, a branch in it) on the
        trips where it meets a value an earlier trip (of this loop or one around it) freed
        (`raise_before`)."""
        names = walk_.names
        walks = [self.holds[self.index[n]] for n in names if self.index.get(n) in self.holds]
        if not self.outer.isdisjoint(names):
            walks.append(self.outer_flag)
        walks += [enclosing[n][0] for n in names if n in enclosing]
        if walks:
            raise_before(self.program, walk_.block, walk_.position, walks, walk_.origin,
                         error)

