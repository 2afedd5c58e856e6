"""The backward of a converted training call: the compiled backward parts of a signature's
training program (`Training`, `Part`) and the backward function of one recorded call
(`Backward`), which runs them on the values the call's forward run saved (see
`running.py`)."""
from __future__ import annotations

import numpy as np

from runtime import backend
from runtime.autograd import FREED
from runtime.core import array_of, mode_state
from runtime.tensor import wrap

from . import running_grad2

_STATE = mode_state()


def holds(value, truth) -> bool:
    """Whether a reach condition holds: a predicate equal to `truth`, or (truth None) the
    saved iterations of a loop (None from a branch that did not run) not empty."""
    if truth is None:
        return value is not None and len(value) > 0
    return bool(value) is truth



class Part:
    """A compiled backward program: the slots it reads saved values from (with the index of
    each among the values the forward run saved), the seeds it is fed (each the gradient of
    the outputs at `diff`), and which inputs (then parameters) it gives a gradient."""

    def __init__(self, backward, slots, saved_index, seed_names, diff, grads):
        self.backward = backward
        self.slots = slots
        self.saved_index = saved_index
        self.seed_names = seed_names
        self.diff = diff
        self.grads = grads


class Training:
    """The compiled forward and backward parts of one signature's training program."""

    def __init__(self, forward, backward: Part, split, out_names, feed_names, order,
                 reach, make_partial):
        self.forward = forward
        self.order = order  # the forward body's arguments (`Entry.body_order`)
        self.backward = backward  # for a backward() that reached every output
        self.split = split
        self.out_names = out_names  # the floating outputs, one seed each
        self.feed_names = feed_names
        # (input index, sites) for each input read only under tensor `if`s or in graph loop
        # bodies (`_reach_flags`)
        self.reach = reach
        self._make_partial = make_partial
        # (which outputs have a gradient, which inputs need one) -> Part (or None)
        self._partial: dict = {}
        # for each recorded output, the program's ops it is computed from ((block, op)
        # positions, `freed_graph.graph_ops`): what a backward() through it frees
        self.out_ops: list = []

    def part_for(self, present: tuple, needed: tuple) -> Part:
        """The backward part for outputs `present` marks as reached and inputs (then
        parameters) `needed` marks as requiring a gradient."""
        if all(present) and all(needed[i] for i in self.backward.grads):
            return self.backward
        key = (present, needed)
        part = self._partial.get(key, False)
        if part is False:
            part = self._partial[key] = self._make_partial(present, needed)
        return self.backward if part is None else part


class Backward:
    """The backward function of one recorded call: runs the backward program on the values
    the call's forward run saved. It holds them (like an eager autograd graph holds what its
    ops saved) until the recorded node is freed. As eager autograd frees only the ops a
    backward went through, it notes the program's ops a backward() without retain_graph
    went through (`release`), and a later backward() raises only where it reaches one of
    them: through another output computed apart from them it runs."""

    __slots__ = ("freed", "saved", "training")

    def __init__(self, training: Training, saved):
        self.training = training
        self.saved = saved
        self.freed = None  # (the program's ops freed, as `Training.out_ops` holds them)

    def release(self, out_grads) -> bool:
        """Free the ops the outputs with a gradient in `out_grads` are computed from; whether
        that freed every op of the outputs' graphs (then the whole node is freed)."""
        out_ops = self.training.out_ops
        if self.freed is None and all(g is not None or not ops for g, ops in zip(
                out_grads, out_ops, strict=True)):
            return True  # (the common case: one backward() through every output)
        freed = set() if self.freed is None else self.freed
        for g, ops in zip(out_grads, out_ops, strict=True):
            if g is not None:
                freed |= ops
        self.freed = freed
        return all(ops <= freed for ops in out_ops)

    def __call__(self, node, out_grads):
        t = self.training
        if self.freed is not None and any(g is not None and not ops.isdisjoint(self.freed) for
                                          g, ops in zip(out_grads, t.out_ops, strict=True)):
            raise RuntimeError(FREED)
        inputs = node.inputs
        if _STATE.create_graph:  # differentiated again: the gradients are recorded ops
            return self._cut_unreached(running_grad2.entry_call(t.entry).backward(
                node, out_grads))
        part = t.part_for(tuple(any(out_grads[i] is not None for i in ix)
                                for ix in t.backward.diff),
                          tuple(not x.stop_gradient for x in inputs))
        feed = dict(zip(t.feed_names, map(array_of, inputs)))
        outs = node.outputs()
        for name, ix in zip(part.seed_names, part.diff, strict=True):
            gs = [array_of(out_grads[i]) for i in ix if out_grads[i] is not None]
            g = gs[0] if gs else backend.XP.zeros_like(array_of(outs[ix[0]]))
            for more in gs[1:]:
                g = g + more
            feed[name] = g
        for slot, k in zip(part.slots, part.saved_index, strict=True):
            slot._data = self.saved[k]
        fed = _fed_arrays(t.entry, inputs)  # (places' tensors: the ones this call read)
        try:
            arrays = part.backward.fn(feed)
        finally:
            for slot in part.slots:
                slot._data = None
            for private, a in fed:
                private._data = a
        in_grads = [None] * len(inputs)
        for i, a in zip(part.grads, arrays, strict=True):
            in_grads[i] = wrap(np.asarray(a) if backend.XP is np else a)
        return self._cut_unreached(in_grads)

    def _cut_unreached(self, in_grads: list) -> list:
        saved = self.saved
        for i, sites in self.training.reach:  # read on no path this call took: no gradient
            if not any(all(holds(saved[k], truth) for k, truth in site) for site in sites):
                in_grads[i] = None
        return in_grads


def _fed_arrays(entry, inputs) -> list:
    """For the captured tensors fed from places (`writeback_fed.fed_params`): each one set
    to the array of the tensor the call read there (its recorded input; a later call fed
    another), paired with the array it held, to put back after the backward run."""
    fed = entry._fed
    if not fed:
        return []
    first = len(inputs) - len(entry._params)
    out = []
    for j, place in fed:
        private = place.private
        out.append((private, private._data))
        private._data = array_of(inputs[first + j])
    return out
