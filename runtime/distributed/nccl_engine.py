"""Collectives over NCCL (through CuPy's `cupy.cuda.nccl`) for GPU arrays.

One process per GPU: rank r uses GPU `local_rank % device_count` of its node. MPI (already
running: the processes were started by `mpiexec`) hands every rank NCCL's unique id from
rank 0, and stays the side channel for timeouts: NCCL calls are queued on the current CUDA
stream, and a wait polls an event recorded after them, answering peers' pings through MPI like
the MPI engine does. A wait that times out aborts the NCCL communicator (so no kernel keeps
spinning) and raises `DistributedTimeoutError` naming the silent ranks.

The array module is the one `runtime.backend` selected for the GPU (CuPy), never imported
here by hand, so the same code runs on a CPU stand-in in tests.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from .errors import DistributedError
from .mpi_engine import Work

DTYPES = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "float16": "NCCL_FLOAT16",
          "bfloat16": "NCCL_BFLOAT16", "int32": "NCCL_INT32", "int64": "NCCL_INT64",
          "int8": "NCCL_INT8", "uint8": "NCCL_UINT8"}
OPS = {"sum": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN", "prod": "NCCL_PROD"}
UNIQUE_ID_BYTES = 128


class NCCLEngine:
    name = "nccl"

    def __init__(self, mpi, cp, timeout: float):
        self.mpi, self.cp, self.nccl = mpi, cp, cp.cuda.nccl
        self.rank, self.size, self.timeout = mpi.rank, mpi.size, timeout
        devices = cp.cuda.runtime.getDeviceCount()
        if mpi.local_size > devices:
            raise DistributedError(
                f"NCCL: {mpi.local_size} ranks on this node but {devices} GPU(s): NCCL needs one "
                "GPU per rank; start at most that many processes per node (mpiexec -ppn N)")
        backend.set_device(f"gpu:{mpi.local_rank}")
        uid = np.zeros(UNIQUE_ID_BYTES, np.int16)
        if self.rank == 0:
            uid[:] = self.nccl.get_unique_id()
        mpi.broadcast(uid, 0)
        mpi.barrier()  # every rank is alive and has the id before NCCL's blocking init
        self.comm = self.nccl.NcclCommunicator(self.size, tuple(int(v) for v in uid), self.rank)
        self.seq = 0

    # ---- collectives on contiguous device arrays --------------------------------------------
    def start_all_reduce(self, array, op: str = "sum") -> Work:
        ptr = _pointer(array)
        self.comm.allReduce(ptr, ptr, array.size, self._dtype(array), getattr(self.nccl, OPS[op]),
                            self._stream().ptr)
        return self._work(array, "all_reduce")

    def all_reduce(self, array, op: str = "sum"):
        return self.start_all_reduce(array, op).wait()

    def broadcast(self, array, root: int = 0):
        self.mpi.check_root(root)
        self.comm.bcast(_pointer(array), array.size, self._dtype(array), root,
                        self._stream().ptr)
        return self._work(array, "broadcast").wait()

    def all_gather(self, array):
        out = self.cp.empty((self.size,) + tuple(array.shape), dtype=array.dtype)
        self.comm.allGather(_pointer(array), _pointer(out), array.size, self._dtype(array),
                            self._stream().ptr)
        return self._work(out, "all_gather").wait()

    def barrier(self):
        self.all_reduce(self.cp.zeros(1, dtype=np.float32))

    def close(self):
        self.comm.destroy()

    # ---- helpers ----------------------------------------------------------------------------
    def _stream(self):
        return self.cp.cuda.get_current_stream()

    def _dtype(self, array) -> int:
        name = DTYPES.get(array.dtype.name)
        if name is None or not hasattr(self.nccl, name):
            raise DistributedError(f"NCCL cannot reduce {array.dtype.name} arrays; cast to one "
                                   f"of {sorted(DTYPES)} first")
        return getattr(self.nccl, name)

    def _work(self, array, kind: str) -> Work:
        """The queued call as a Work whose wait polls an event recorded after it."""
        self.seq += 1
        event = self.cp.cuda.Event(disable_timing=True)
        event.record(self._stream())
        return Work(_NCCLWaiter(self, event), None, array, kind, self.seq)


class _NCCLWaiter:
    """Waits on an event through the MPI engine's loop (pings answered, timeout enforced)."""

    __slots__ = ("engine", "event")

    def __init__(self, engine: NCCLEngine, event):
        self.engine, self.event = engine, event

    def wait(self, _done, kind: str, seq: int) -> None:
        self.engine.mpi.wait(lambda: self.event.done, f"{kind}", seq,
                             on_timeout=self.engine.comm.abort)


def _pointer(array) -> int:
    """The device address of a contiguous array (CuPy and CPU stand-ins both export it)."""
    return array.__cuda_array_interface__["data"][0]
