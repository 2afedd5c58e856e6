"""`register_hook` hooks of the tensors a converted training step differentiates inside its
program (its parameters, other leaves it reads). Eager `backward()` passes a leaf's gradient
through the leaf's hooks before adding it to `.grad` (a pruning mask `w.register_hook(lambda g:
g * mask)`, a clip), so the program does too: each such tensor with hooks gets a `grad_hook`
op calling them as they are when the program runs (one removed since is not called, one
added since is). A tensor without hooks when the program was built is listed in
`program.hookless`: d2s forgets the program when one gets a hook, and traces it again."""
from __future__ import annotations

import weakref

from . import origin


class _Live:
    """The hooks of one tensor, read when the program runs."""

    def __init__(self, t):
        self.ref = weakref.ref(t)

    def __call__(self, g):
        t = self.ref()
        for h in list(t._hooks or ()) if t is not None else ():
            out = h(g)
            if out is not None:
                g = out
        return g


def live_hooks(program, names) -> None:
    """Before the gradients of `names` (trainable tensors the program reads) are built."""
    for n in names:
        t = program.tensors[n]
        if t._hooks:
            if n not in program.grad_hooks:
                program.grad_hooks[n] = [(_Live(t), origin.capture())]
        elif not any(r() is t for r in program.hookless):
            program.hookless.append(weakref.ref(t))


def watch(program, forget) -> None:
    """Call `forget()` (once) when a tensor `program` differentiates without hooks gets one."""
    for r in program.hookless:
        t = r()
        if t is not None:
            t.__dict__.setdefault("_hook_watchers", []).append(forget)
