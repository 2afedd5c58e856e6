"""`loss.backward()` inside a branch of a tensor `if` in a converted training step (a GAN's
generator updated only while the discriminator wins, `if rt.isfinite(loss): loss.backward()`,
a step skipped by an early `return` under a tensor condition).

Eager code runs `backward()` only on the runs that take the branch. The program computes the
gradients in the branch's block: the backward walks the branch's ops built so far, then the
ops of each enclosing block (every one of them ran before the branch), and appends its ops to
the branch, so they run, and `.grad` is written (`train_step`), only when the branch is taken.
After the `if`, each gradient the branch wrote is `.grad` as the run left it (`grad_views`).

In the body of a graph loop the trips are not unrolled: `train_step` refuses it there.
"""
from __future__ import annotations

import functools

from ..ops.creation import ones_like
from ..ops.logic import logical_or
from .backward import _accumulate, _Backward, _building, drop_unread


def gradients_in_branch(program, block, loss, names: list, seed) -> tuple:
    """(`[gradient Variable or None per name]`, `{name: 0-d bool Variable}` for names this
    run may not reach): the gradients of `loss` for `names` (trainable tensors of the global
    block, with the reads of a parameter after the program updated it counted as the
    parameter, `leaf_reads`), appended to `block`."""
    g0 = program.global_block()
    reads = [(r, n) for r, n in program.leaf_reads.items() if n in names and r in g0.vars]
    every = names + [r for r, _ in reads]
    walked = list(block.ancestors())
    first = len(block.ops)
    with _building(program, block):
        bw = _Backward(program, set(every))
        for b in reversed(walked[:-1]):  # (`_Backward` propagated through the global block)
            bw._propagate(b)
        grads: dict = {}
        _accumulate(grads, loss.name, seed[0] if seed else ones_like(loss))
        for b in walked:
            bw.run_block(b, grads)
    got = {n: grads.get(n) for n in every}
    kept = [g for g in got.values() if g is not None]
    kept += [w for g in kept if (w := getattr(g, "grad_present_when", None)) is not None]
    drop_unread(program, first, {v.name for v in kept}, block)
    sources = {n: [n] for n in names}
    for r, n in reads:
        sources[n].append(r)
    out, flags = [], {}
    for n in names:
        gs = [got[s] for s in sources[n] if got[s] is not None]
        out.append(functools.reduce(lambda a, b: a + b, gs) if gs else None)
        when = [getattr(g, "grad_present_when", None) for g in gs]
        if gs and all(w is not None for w in when):  # (reached under tensor `if`s only:
            flags[n] = functools.reduce(logical_or, when)  # those the run took)
    return out, flags
