"""Which values a run reaches along a gradient path: `reached.py`'s sites, found from the
differentiated outputs back rather than from the reads.

A parameter read at the top level can still reach the loss only through one branch of a
tensor `if`: `feats = tanh(self.encoder(x))`, then `if feats.mean() > 0: feats =
feats.detach() * 0.5`. Eagerly, a run that takes the detaching branch leaves the encoder's
`.grad` None (no path from it to the loss); by reads alone it is read on every run.

`gradient_sites(program, names, outs)` walks the ops backward from `outs`, giving each value
the sites (tuples of `reached` conditions) under which it reaches one of them along a path
of values with a gradient (floating, not `stop_gradient`, not the output of a `nondiff` op).
A `cond` op's output reaches under its sites and its branch's `Branch` condition. A
differentiated `while` op's output reaches what one trip's body depends on along gradient
paths, through the trips (`loop_paths`): an entry value or an outer value the body reads, on
every run, after a first trip (`Ran`), or as the loop carries it (`Carries`: a trip's
`detach()` under a tensor `if` can cut it). A `switch_case` op's output reaches as a
`cond` op's does, under its block's `Case`; another op with blocks whose outputs reach
reaches what it reads as `reached._op_reads` finds.

>>> import runtime as rt
>>> from runtime.program.reach_paths import gradient_sites
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [2], 'float32')
...     w = rt.static.data('w', [2], 'float32')
...     w.stop_gradient = False
...     f = rt.tanh(x * w)
...     y = rt.static.nn.cond(f.sum() > 0, lambda: f.detach() * 0.5, lambda: f)
...     loss = (y * y).mean()
>>> gradient_sites(main, ['w'], [loss.name])
{'w': [(Branch(pred='t3', truth=False),)]}
"""
from __future__ import annotations

from ..ops import registry
from .ir import Program
from .reached import Branch, Carries, Case, Ran, _op_reads

# Sites kept per value before it counts as reached on every run (the old, read-based answer:
# a zero gradient, never a missing one).
_MAX_SITES = 32


class _Everything:
    """Wants every name (`reached._record` keeps the sites of what it wants)."""

    def __contains__(self, name) -> bool:
        return True


def gradient_sites(program: Program, names, outs, ops=None) -> dict:
    """`name -> [site, ...]` for each of `names` that reaches one of `outs` along a gradient
    path only under conditions; names that reach on every run, or never, are left out."""
    paths = _Paths(program)
    for name in outs:
        paths.live[name] = {(): None}
    paths.walk(program.global_block().ops if ops is None else ops)
    live = paths.live
    return {n: list(live[n]) for n in names if n in live and () not in live[n]}


class _Paths:
    """The backward walk: `live` maps a value's name to the sites (a dict: distinct, in
    order) under which it reaches the outputs."""

    def __init__(self, program: Program):
        self.program = program
        self.vars = {n: v for block in program.blocks for n, v in block.vars.items()}
        self.live: dict = {}

    def walk(self, ops) -> None:
        live = self.live
        for op in reversed(ops):
            if op.type == "cond" or op.type == "switch_case" and op.inputs[0].__class__ is str:
                self.cond(op)
                continue
            if op.type == "while" and len(op.outputs) > len(self.program.block(
                    op.blocks[1]).params):  # (differentiated: it saves its iterations)
                self.loop(op)
                continue
            if op.type in registry.OPS and registry.OPS[op.type].nondiff:
                continue
            sites = _merge([live[o] for o in op.outputs if o.__class__ is str and o in live
                            and self.carries(o, bool(op.blocks))])
            if not sites:
                continue
            if op.blocks:  # (a loop, a switch: what it reads, under its own conditions)
                found: dict = {}
                for site in sites:
                    _op_reads(self.program, op, site, _Everything(), found)
                for name, more in found.items():
                    _add(live, name, more)
            else:
                for name in op.input_names():
                    _add(live, name, sites)

    def cond(self, op) -> None:
        """What a `cond` op's branches (a `switch_case` op's blocks) return for its outputs
        that reach, under their branch (`Case`)."""
        live = self.live
        if op.type == "cond":
            taken_of = [Branch(op.inputs[0], truth) for truth in (True, False)]
        else:
            cases = tuple(op.attrs["cases"])
            taken_of = [Case(op.inputs[0], cases, k) for k in range(len(op.blocks))]
        for idx, taken in zip(op.blocks, taken_of, strict=True):
            block = self.program.block(idx)
            for out, result in zip(op.outputs, block.results):
                if result.__class__ is str and out in live and self.carries(out, False):
                    _add(live, result, {s + (taken,): None for s in live[out]})
            self.walk(block.ops)

    def loop(self, op) -> None:
        """What a differentiated `while` op's outputs that reach depend on along gradient
        paths through its trips (`loop_paths`): an entry value or an outer value it reads,
        under the output's sites and, unless that holds on every run, a `Carries` (or,
        for a value every trip reads on such a path, `Ran`) condition."""
        live = self.live
        n = len(self.program.block(op.blocks[1]).params)
        saves = op.outputs[n]
        deps, always, possible = loop_paths(self.program, op)
        for k in possible:
            out = op.outputs[k]
            if out not in live:
                continue
            for source in possible[k]:
                target = op.inputs[source] if isinstance(source, int) else source
                if target.__class__ is not str:
                    continue
                if (k, source) in always:
                    more = live[out]
                else:
                    c = (Ran(saves) if () in deps[k].get(source, ()) and not isinstance(source, int)
                         else Carries(saves, k, source))
                    more = {site + (c,): None for site in live[out]}
                _add(live, target, more)

    def carries(self, name: str, loosely: bool) -> bool:
        """Whether the value `name` can carry a gradient: floating, and (unless `loosely`:
        the output of a loop, whose static flag may be its entry's) not `stop_gradient`; a
        tensor array always can (its static flag is the empty array's). What `detach()` made
        passes none on to what it was made from, also with stop_gradient set False."""
        v = self.vars.get(name)
        if v is None or v.detached:
            return False
        if v.kind == "array":
            return True
        if not (v.dtype.is_floating or v.dtype.is_complex):
            return False
        return loosely or not v.stop_gradient


def loop_paths(program: Program, loop) -> tuple:
    """One trip of the differentiated `while` op `loop`, for its carried values `k` that can
    carry a gradient: `(deps, always, possible)`. `deps[k]` maps each source (an int `j`:
    carried value `j` at the trip's start; a name: a value from outside the loop) to the
    body-level sites under which the trip's new value `k` depends on it along a gradient path;
    `possible[k]`: the sources value `k` can depend on after some number of trips (its own
    entry value `k` from the start); `always`: the pairs `(k, source)` that hold after every
    number of trips (a body that keeps `k`'s path from its entry on every trip)."""
    body = program.block(loop.blocks[1])
    index = {name: j for j, name in enumerate(body.params)}
    paths = _Paths(program)
    carried = zip(loop.outputs[:len(body.results)], body.results, strict=True)
    grads = [k for k, (out, res) in enumerate(carried)
             if res.__class__ is str and paths.carries(out, True)]
    inside = _defined_below(program, body.idx)
    deps: dict = {}
    for k in grads:
        paths = _Paths(program)
        paths.live[body.results[k]] = {(): None}
        paths.walk(body.ops)
        deps[k] = {}
        for name, sites in paths.live.items():
            j = index.get(name)
            if j in grads or (j is None and name not in inside and paths.carries(name, True)):
                deps[k][name if j is None else j] = sites
    possible = {k: {k} for k in grads}
    changed = True
    while changed:
        changed = False
        for k in grads:
            more = set().union(*[possible[j] if isinstance(j, int) else {j} for j in deps[k]])
            if not more <= possible[k]:
                possible[k] |= more
                changed = True
    always = {(k, k) for k in grads}
    while True:
        kept = {(k, s) for k, s in always
                if any(() in sites and (j, s) in always for j, sites in deps[k].items())}
        if kept == always:
            break
        always = kept
    return deps, always, {k: sorted(possible[k], key=str) for k in grads}


def _defined_below(program: Program, idx: int) -> set:
    """The names of the variables of block `idx` and of the blocks below it."""
    names: set = set()
    for block in program.blocks:
        if any(b.idx == idx for b in block.ancestors()):
            names.update(block.vars)
    return names


def _add(live: dict, name: str, sites) -> None:
    live[name] = _merge([live.get(name, {}), sites])


def _merge(site_sets) -> dict:
    """The union of `site_sets`, simplified: `()` (every run) absorbs the rest; two sites that
    differ only in the truth of one `Branch` become one without it; too many become `()`."""
    sets = [s for s in site_sets if s]
    if len(sets) == 1 or all(s == sets[0] for s in sets[1:]):
        return sets[0] if sets else {}  # (shared: a site set is never changed in place)
    sites: dict = {}
    for s in sets:
        sites.update(s)
    changed = True
    while changed and () not in sites:
        changed = False
        for site in sites:
            for i, c in enumerate(site):
                if isinstance(c, Branch):
                    other = site[:i] + (Branch(c.pred, not c.truth),) + site[i + 1:]
                    if other in sites:
                        del sites[site], sites[other]
                        sites[site[:i] + site[i + 1:]] = None
                        changed = True
                        break
            if changed:
                break
    if () in sites or len(sites) > _MAX_SITES:
        return {(): None}
    return sites
