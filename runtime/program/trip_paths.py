"""A gradient taken in a graph loop's body on a trip where what it differentiates has no
gradient path, as eager autograd refuses it.

A loop variable that requires a gradient when the loop starts and is detached by the body
(`xa = (xa - lr * g).detach()`, a PGD or fixed-point step) has a gradient path on the first
trip only; eager `rt.grad(loss, xa)` raises "backward() on a tensor with stop_gradient=True"
on the second. The program traces one trip for all of them, so the loop carries such a
variable's flag (`control_flow._graph_while`: a body that takes a gradient carries the flags
the trips decide, `Variable.stop_when`), and `check_trip_path` raises eager's error before the
gradient on the trips where every value its targets reach a gradient path through is
flagged as having none.
"""
from __future__ import annotations

from ..ops.logic import logical_and
from .control_flow import cond
from .debug_ops import raise_error
from .freed_graph import value_graph, walk
from .ir import Program
from .origin import short

NO_PATH = ("backward() on a tensor with stop_gradient=True: nothing it depends on needs a "
           "gradient. Set stop_gradient=False on the inputs you want gradients for.")


def check_trip_path(program: Program, targets, inputs=()) -> None:
    """Before the gradient of `targets` (built now, in a loop body or a branch in one): raise
    eager's error on the runs where none of them has a gradient path (`stop_when` of the
    values they are computed from; nothing where one of them reaches a value that requires a
    gradient on every run), then `rt.grad`'s where one of `inputs` (names; those that must
    be used: `allow_unused=False`) has none."""
    graph = value_graph(program)
    names = [t.name for t in targets]
    flags = _flags(program, walk(program, graph, names))
    walks = program.gradient_walks  # (the user's line of the gradient: `check_not_freed`)
    at = short(walks[-1].origin) if walks else ""
    reached = walk(program, graph, names, stop=set(flags)) if flags else ()
    stopped = [flags[n] for n in sorted(reached) if n in flags]
    if stopped and not any(n not in flags and graph.get(n) is None for n in reached):
        _raise_where(_all(stopped), RuntimeError(NO_PATH), at)  # (else: a leaf that
        # requires a gradient on every run)
    for i, n in enumerate(inputs):
        v = program.find_var(n)
        flag = True if v is not None and v.stop_gradient else _flags(program, [n]).get(n)
        if flag is not None:  # (True: none on every trip this block runs)
            shape = list(v.shape)
            _raise_where(flag, RuntimeError(
                f"grad: input {i} (shape {shape}) is not used to compute the outputs; pass "
                "allow_unused=True to get None for it"), at)


def _flags(program: Program, names) -> dict:
    out = {}
    for n in names:
        v = program.find_var(n)
        if v is not None and not v.stop_gradient and getattr(v, "stop_when", None) is not None:
            out[n] = v.stop_when
    return out


def _all(flags: list):
    flag = flags[0]
    for f in flags[1:]:
        flag = logical_and(flag, f)
    return flag


def _raise_where(flag, error: BaseException, at: str) -> None:
    if flag is True:
        raise_error(error, at=at)
    else:
        cond(flag, lambda: raise_error(error, at=at), lambda: None)
