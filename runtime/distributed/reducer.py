"""Bucketed gradient averaging for `DataParallel`, driven by parameter gradient hooks.

Parameters are grouped, last layer first (the order backward produces their gradients), into
buckets of about `comm_buffer_size` MB of one dtype. Each parameter's gradient hook copies the
gradient into its bucket's flat buffer; a full bucket starts its (non-blocking) all-reduce at
once, buckets always in the same order on every rank (a collective's order must match across
ranks). When the last gradient of the step arrives, every bucket is waited for, divided by the
world size, and each parameter's `.grad` becomes what one process would have accumulated from
the averaged gradient.

How much this overlaps with backward depends on when hooks run: the runtime's autograd calls
a parameter's hooks after the whole graph has been walked (it sums a leaf's gradient over the
walk first), so reductions overlap with the hooks of the later buckets, not with the gradient
computation itself. A converted (`@to_static`) forward is one autograd op whose static
backward hands the parameters their gradients, so the same hooks serve it.

Gradients accumulated under `DataParallel.no_sync()` stay local and are averaged, together
with the next synchronised step's, by that step.
"""
from __future__ import annotations

import functools
import weakref

from .. import backend
from ..tensor import Tensor, wrap
from .errors import DistributedError

MB = 1 << 20
# id(parameter) -> (weak reference to it, the reducer whose hook it carries): wrapping a model
# again replaces the old reducer's hooks instead of reducing every gradient twice. (Not a
# WeakKeyDictionary: it compares keys with ==, which is elementwise for tensors.)
_OWNER: dict = {}


class Bucket:
    """Parameters reduced together: slots in one flat buffer of one dtype."""

    __slots__ = ("flat", "missing", "params", "work")

    def __init__(self, params: list, dtype):
        self.params = params
        self.flat = backend.XP.zeros(sum(p.size for p in params), dtype=dtype)
        self.missing = len(params)
        self.work = None


def make_buckets(params: list, first_mb: float, rest_mb: float, widen: bool = False) -> list:
    """Buckets in launch order (last parameters first). Built from the first parameters: the
    bucket holding them, launched last, is capped at `first_mb` (Paddle's
    last_comm_buffer_size: a small final reduction leaves less to wait for)."""
    groups, current, size, cap = [], [], 0, first_mb * MB
    for p in params:
        nbytes = p.size * p._data.dtype.itemsize
        if current and (size + nbytes > cap or p._data.dtype != current[0]._data.dtype):
            groups.append(current)
            current, size, cap = [], 0, rest_mb * MB
        current.append(p)
        size += nbytes
    if current:
        groups.append(current)
    return [Bucket(list(reversed(g)), _carried(g[0]._data.dtype, widen))
            for g in reversed(groups)]


def _carried(dtype, widen: bool):
    """The bucket's dtype: MPI has no 16-bit floats, so those buckets are float32 there."""
    return "float32" if widen and dtype.name in ("float16", "bfloat16") else dtype


class GradientReducer:
    """Averages the named parameters' gradients over the engine's ranks, once per backward."""

    def __init__(self, named_params: list, engine, comm_buffer_size: float = 25,
                 last_comm_buffer_size: float = 1):
        self.engine = engine
        self.names = {id(p): name for name, p in named_params}
        params = [p for _, p in named_params]
        self.buckets = make_buckets(params, last_comm_buffer_size, comm_buffer_size,
                                    widen=engine.name == "mpi")
        self.where = {}  # id(param) -> (bucket, offset)
        for bucket in self.buckets:
            offset = 0
            for p in bucket.params:
                self.where[id(p)] = (bucket, offset)
                offset += p.size
        self.params = [p for b in self.buckets for p in b.params]
        self.sync = True  # False inside no_sync()
        self.unsynced: set = set()  # ids of params holding gradients not yet averaged
        for p in params:
            ref, old = _OWNER.get(id(p), (None, None))
            if old is not None and ref() is p:
                old.remove()
            _OWNER[id(p)] = (weakref.ref(p, functools.partial(_forget, id(p))), self)
        self.handles = [p.register_hook(functools.partial(self.on_grad, p)) for p in params]
        self._new_round()

    def _new_round(self):
        self.before: dict = {}  # id(param) -> its .grad when this step's gradient arrived
        self.unused: set = set()  # ids of params this rank does not use this step
        self.arrived = 0
        self.next_launch = 0
        for b in self.buckets:
            b.missing, b.work = len(b.params), None

    def remove(self):
        """Unhook from every parameter (a newer DataParallel over them took over)."""
        for h in self.handles:
            h.remove()
        self.handles = []

    # ---- one step ---------------------------------------------------------------------------
    def check_previous_step(self):
        """Called before a forward: the previous backward must have reduced everything. A
        forward that no backward followed (evaluation with gradients on) only marked unused
        parameters, which launched nothing: forget it."""
        if self.before and self.arrived < len(self.params):
            missing = self._missing()
            self._new_round()
            raise DistributedError(self._missing_message(missing))
        if self.arrived:
            self._new_round()

    def mark_unused(self, outputs):
        """find_unused_parameters=True: parameters the outputs do not depend on this step
        contribute their local gradient so far (usually zero) without waiting for a hook."""
        used = reachable_leaves(outputs)
        for p in self.params:
            if id(p) in used or id(p) in self.unused:
                continue
            self.unused.add(id(p))
            local = p.grad._data if id(p) in self.unsynced and p.grad is not None else None
            self._store(p, local, launch=False)  # the first gradient's hook launches
        if self.arrived == len(self.params):  # no hook will come: this rank's part is done
            for b in self.buckets:
                b.work = self.engine.start_all_reduce(b.flat)
            self._finish(None)

    def on_grad(self, param, grad: Tensor):
        if not self.sync:
            self.unsynced.add(id(param))
            return None
        pid = id(param)
        if pid in self.before or pid in self.unused:
            missing = self._missing()
            self._new_round()
            raise DistributedError(self._missing_message(missing))
        prev = param.grad
        self.before[pid] = prev
        local = grad._data
        if pid in self.unsynced and prev is not None:
            local = prev._data + local
        self._store(param, local)
        if self.arrived == len(self.params):
            return self._finish(param)
        return None

    def _store(self, param, local, launch: bool = True):
        bucket, offset = self.where[id(param)]
        view = bucket.flat[offset:offset + param.size]
        if local is None:
            view[...] = 0
        else:
            view[...] = local.reshape(-1)
        bucket.missing -= 1
        self.arrived += 1
        while launch and self.next_launch < len(self.buckets) and \
                self.buckets[self.next_launch].missing == 0:
            b = self.buckets[self.next_launch]
            b.work = self.engine.start_all_reduce(b.flat)
            self.next_launch += 1

    def _finish(self, current):
        """Every gradient arrived: wait for the reductions and hand out the averages. Returns
        the current parameter's new gradient (its hook's result: autograd adds it to a .grad
        set to None here)."""
        scale = 1.0 / self.engine.size
        for b in self.buckets:
            b.flat = b.work.wait()
            b.flat *= scale
        result = None
        for p in self.params:
            pid = id(p)
            bucket, offset = self.where[pid]
            avg = bucket.flat[offset:offset + p.size].reshape(p._data.shape).astype(
                p._data.dtype)  # a copy: the bucket is reused next step
            prev = self.before.get(pid, p.grad)
            if pid not in self.unused and p is not current and p.grad is prev:
                self._new_round()
                raise DistributedError(
                    "DataParallel averages the gradients that loss.backward() accumulates; "
                    "rt.grad(...) of its parameters is not supported (its result would not be "
                    "averaged). Use backward(), or compute it under model.no_sync().")
            keep = prev is not None and pid not in self.unsynced
            value = wrap(prev._data + avg if keep else avg)
            if p is current:
                result = value
                p.grad = None
            else:
                p.grad = value
        self.unsynced.clear()
        self._new_round()
        return result

    def _missing(self) -> list:
        """Names (in the model's order) of the parameters still without this step's gradient."""
        return [name for pid, name in self.names.items()
                if pid not in self.before and pid not in self.unused]

    def _missing_message(self, missing: list) -> str:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8
                                         else "")
        return (f"DataParallel (rank {self.engine.rank}): the last backward gave no gradient "
                f"to {shown}, so that step's gradients were not averaged (the other ranks are "
                "left waiting for them). If some parameters are unused in some steps (branches, "
                "frozen parts), pass DataParallel(..., find_unused_parameters=True).")


def _forget(key: int, _ref) -> None:
    _OWNER.pop(key, None)


def reachable_leaves(outputs) -> set:
    """ids of the leaf tensors the autograd graph of `outputs` reaches."""
    stack = [t for t in _tensors(outputs)]
    seen_nodes, leaves = set(), set()
    while stack:
        t = stack.pop()
        node = t._node
        if node is None:
            leaves.add(id(t))
            continue
        if id(node) in seen_nodes or node.inputs is None:
            continue
        seen_nodes.add(id(node))
        stack.extend(_tensors(node.inputs))
    return leaves


def _tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


__all__ = ["GradientReducer", "make_buckets", "reachable_leaves"]
