"""Paddle's collectives on Tensors: `all_reduce`, `broadcast`, `all_gather`, `barrier`.

They run eagerly, between steps (inside a `@to_static` function they would have to become
program ops, which they are not: calling one while a program is being built raises). Results
are written into the given tensors, as Paddle does. MPI has no 16-bit float types, so float16
and bfloat16 tensors travel as float32 on the MPI engine.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ..ops.registry import STATE
from ..tensor import Tensor, wrap
from .env import engine
from .errors import DistributedError

_WIDENED_ON_MPI = ("float16", "bfloat16")


class ReduceOp:
    """How `all_reduce` combines the ranks' values."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"


class Task:
    """What an asynchronous (`sync_op=False`) collective returns; `wait()` finishes it."""

    def __init__(self, finish):
        self._finish, self._done = finish, False

    def wait(self) -> bool:
        if not self._done:
            self._finish()
            self._done = True
        return True

    def is_completed(self) -> bool:
        return self._done


def _array(tensor, what: str):
    """The tensor's array, contiguous and in a dtype the engine carries."""
    if STATE.builder is not None:
        raise DistributedError(
            f"rt.distributed.{what} runs eagerly: it cannot be part of a static program being "
            "built (@to_static). Call it outside the converted function; DataParallel reduces "
            "gradients after backward for you.")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"rt.distributed.{what} expects a Tensor, got {type(tensor).__name__}")
    xp = backend.XP
    a = tensor._data
    if engine().name == "mpi" and a.dtype.name in _WIDENED_ON_MPI:
        return a.astype("float32")
    if engine().name == "nccl" and not isinstance(a, xp.ndarray):
        raise DistributedError(f"rt.distributed.{what}: the NCCL engine moves GPU tensors; "
                               "this one is on the host (create it after rt.set_device('gpu'))")
    return xp.ascontiguousarray(a) if engine().name == "nccl" else np.ascontiguousarray(a)


def _write(tensor, array) -> None:
    tensor.set_value(array.astype(tensor._data.dtype, copy=False))


def all_reduce(tensor: Tensor, op: str = ReduceOp.SUM, group=None, sync_op: bool = True):
    """Combine `tensor` across ranks (sum by default) and write the result into it.

    >>> import runtime as rt
    >>> t = rt.to_tensor([1.0, 2.0])
    >>> rt.distributed.all_reduce(t)        # a world of one: unchanged
    >>> t.tolist()
    [1.0, 2.0]
    """
    _no_group(group)
    if op not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD, ReduceOp.AVG):
        raise DistributedError(f"all_reduce: unknown op {op!r}; use rt.distributed.ReduceOp")
    a = _array(tensor, "all_reduce")
    eng = engine()
    work = eng.start_all_reduce(a, "sum" if op == ReduceOp.AVG else op)

    def finish():
        out = work.wait()
        if op == ReduceOp.AVG:
            out = out / eng.size
        _write(tensor, out)

    return _run(finish, sync_op)


def broadcast(tensor: Tensor, src: int = 0, group=None, sync_op: bool = True):
    """Overwrite `tensor` on every rank with rank `src`'s value."""
    _no_group(group)
    a = _array(tensor, "broadcast")
    return _run(lambda: _write(tensor, engine().broadcast(a, src)), sync_op)


def all_gather(tensor_list: list, tensor: Tensor, group=None, sync_op: bool = True):
    """Append every rank's `tensor` (rank order) to `tensor_list`; shapes must match."""
    _no_group(group)
    if not isinstance(tensor_list, list):
        raise TypeError("all_gather(tensor_list, tensor): tensor_list must be a list to fill")
    a = _array(tensor, "all_gather")

    def finish():
        gathered = engine().all_gather(a)
        tensor_list.extend(wrap(gathered[i].astype(tensor._data.dtype, copy=False))
                           for i in range(gathered.shape[0]))

    return _run(finish, sync_op)


def barrier(group=None) -> None:
    """Wait until every rank reaches this call (or the timeout names the ones that did not)."""
    _no_group(group)
    if STATE.builder is not None:
        raise DistributedError("rt.distributed.barrier cannot be part of a static program")
    engine().barrier()


def _run(finish, sync_op: bool):
    task = Task(finish)
    if sync_op:
        task.wait()
        return None
    return task


def _no_group(group) -> None:
    if group is not None:
        raise DistributedError("rt.distributed: groups are not supported; every collective runs "
                               "over all ranks (pass group=None)")
