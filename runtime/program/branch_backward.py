"""`loss.backward()` inside a branch of a tensor `if` in a converted training step (a GAN's
generator updated only while the discriminator wins, `if rt.isfinite(loss): loss.backward()`,
a step skipped by an early `return` under a tensor condition).

Eager code runs `backward()` only on the runs that take the branch. The program computes the
gradients in the branch's block: the backward walks the branch's ops built so far, then the
ops of each enclosing block (every one of them ran before the branch), and appends its ops to
the branch, so they run, and `.grad` is written (`train_step`), only when the branch is taken.
Which tensors this run reaches is found as for a backward at the top level
(`reach_paths.gradient_sites` over the same ops, the conditions made readable in the branch
by `reach_values.held`). After the `if`, each gradient the branch wrote is `.grad` as the run
left it (`grad_views`).

In the body of a graph loop the trips are not unrolled: `train_step` refuses it there.
"""
from __future__ import annotations

import functools

from ..ops.creation import ones_like
from ..ops.logic import logical_and, logical_or
from .backward import _accumulate, _Backward, _building, apply_input_hooks, drop_unread
from .leaf_reads import gradients_and_reach
from .reach_paths import gradient_sites
from .reach_values import held


def gradients_in_branch(program, block, loss, names: list, seed) -> tuple:
    """(`[gradient Variable or None per name]`, `{name: 0-d bool Variable}` for names this
    run may not reach): the gradients of `loss` for `names` (trainable tensors of the global
    block, with the reads of a parameter after the program updated it counted as the
    parameter, `leaf_reads`), appended to `block`."""
    walked = list(block.ancestors())
    forward = [op for b in reversed(walked) for op in b.ops]  # (in the order they ran)

    def gradients(targets, inputs, target_gradients=None):
        every = [v.name for v in inputs]
        first = len(block.ops)
        with _building(program, block):
            bw = _Backward(program, set(every))
            for b in reversed(walked[:-1]):  # (`_Backward` propagated through block 0)
                bw._propagate(b)
            grads: dict = {}
            _accumulate(grads, loss.name,
                        target_gradients[0] if target_gradients else ones_like(loss))
            for b in walked:
                bw.run_block(b, grads)
            apply_input_hooks(program, grads, every, forward)
        got = [grads.get(n) for n in every]
        drop_unread(program, first, {g.name for g in got if g is not None}, block)
        return got

    def reached_of(every):
        made: dict = {}
        out = {}
        for name, sites in gradient_sites(program, every, [loss.name], forward).items():
            flags = [functools.reduce(logical_and, [held(program, c, made, block)
                                                    for c in site]) for site in sites]
            out[name] = functools.reduce(logical_or, flags)
        return out

    return gradients_and_reach(program, gradients, reached_of, loss, names, seed)
