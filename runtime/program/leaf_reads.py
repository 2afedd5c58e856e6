"""Reads of a trainable tensor after the program being built wrote it (`opt.step()`, then a
second forward and `backward()` in one converted step: a GAN's critic steps, inner loops).

Eager code updates a Parameter in place: it stays one leaf, and a later `backward()` adds the
gradient of every use into its `.grad`. A program writes the new value with
`write_persistable` and later ops read that value (`Program._latest`); the value was computed
by the update (under `no_grad`), so no gradient path leads from it back to the parameter.
Each such read is therefore a copy of the value that backward treats as the parameter itself
(`Program.leaf_reads`): its gradient is added to the parameter's, and the copy is cut from how
the value was computed, so an update or a `p.set_value(p * mask)` is no gradient path.
"""
from __future__ import annotations

import functools

from ..ops.logic import logical_or
from ..ops.math import assign


def leaf_read(builder, name: str, value: str) -> str:
    """The name later ops of the global block read for trainable persistable `name`, which
    the program overwrote with `value`."""
    cut = assign(builder.block.var(value))
    cut.stop_gradient, cut.detached = True, True
    leaf = assign(cut)
    leaf.stop_gradient, leaf.detached = False, True  # (blocked from `cut`, not from the loss)
    builder.program.leaf_reads[leaf.name] = name
    builder.program._latest[(0, name)] = leaf.name
    return leaf.name


def gradients_and_reach(program, gradients, reached_of, loss, names: list, seed) -> tuple:
    """`gradients([loss], names)` and `reached_of(names)` (name -> the flag of the runs that
    reach it, for names reached only under conditions), with each leaf read of a name counted
    as that name."""
    g0 = program.global_block()
    reads = [(r, n) for r, n in program.leaf_reads.items() if n in names and r in g0.vars]
    if not reads:
        return gradients([loss], [g0.var(n) for n in names], target_gradients=seed), (
            reached_of(names))
    every = names + [r for r, _ in reads]
    grads = dict(zip(every, gradients([loss], [g0.var(n) for n in every],
                                      target_gradients=seed)))
    reached = reached_of(every)
    sources = {n: [n] for n in names}
    for r, n in reads:
        sources[n].append(r)
    out, flags = [], {}
    for n in names:
        got = [s for s in sources[n] if grads[s] is not None]
        out.append(functools.reduce(lambda a, b: a + b, [grads[s] for s in got]) if got
                   else None)
        if got and all(s in reached for s in got):  # (reached on some runs only)
            flags[n] = functools.reduce(logical_or, [reached[s] for s in got])
    return out, flags
