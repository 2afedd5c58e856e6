"""Which values a run reaches along a gradient path: `reached.py`'s sites, found from the
differentiated outputs back rather than from the reads.

A parameter read at the top level can still reach the loss only through one branch of a
tensor `if`: `feats = tanh(self.encoder(x))`, then `if feats.mean() > 0: feats =
feats.detach() * 0.5`. Eagerly, a run that takes the detaching branch leaves the encoder's
`.grad` None (no path from it to the loss); by reads alone it is read on every run.

`gradient_sites(program, names, outs)` walks the ops backward from `outs`, giving each value
the sites (tuples of `reached` conditions) under which it reaches one of them along a path
of values with a gradient (floating, not `stop_gradient`, not the output of a `nondiff` op).
A `cond` op's output reaches under its sites and its branch's `Branch` condition; a
`while` or `switch_case` op, or another op with blocks, whose outputs reach, reaches what it
reads as `reached._op_reads` finds (a loop's `Ran` / `Trips`, a switch's `Case`).

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
from .reached import Branch, _op_reads

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
            if op.type == "cond":
                self.cond(op)
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
        """What a `cond` op's branches return for its outputs that reach, under their
        branch."""
        live = self.live
        for idx, truth in zip(op.blocks, (True, False), strict=True):
            block = self.program.block(idx)
            taken = Branch(op.inputs[0], truth)
            for out, result in zip(op.outputs, block.results):
                if result.__class__ is str and out in live and self.carries(out, False):
                    _add(live, result, {s + (taken,): None for s in live[out]})
            self.walk(block.ops)

    def carries(self, name: str, loosely: bool) -> bool:
        """Whether the value `name` can carry a gradient: floating, and (unless `loosely`:
        the output of a loop, whose static flag may be its entry's) not `stop_gradient`; a
        tensor array always can (its static flag is the empty array's)."""
        v = self.vars.get(name)
        if v is None:
            return False
        if v.kind == "array":
            return True
        if not (v.dtype.is_floating or v.dtype.is_complex):
            return False
        return loosely or not v.stop_gradient


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
