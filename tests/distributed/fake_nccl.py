"""`cupy.cuda.nccl` (and the bits of `cupy.cuda` the NCCL engine touches) for `fake_cupy`,
for tests on machines without GPUs.

The communicator is NCCL's interface (raw device pointers, element counts, NCCL's dtype and
op codes, a stream) carried by MPI between processes: each call reads and writes the memory
behind the pointers it is given, so a wrong pointer, count or dtype code gives wrong numbers
in the test, as it would with NCCL. It also checks that every rank was given the same unique
id (what the engine's bootstrap over MPI must achieve) and records every call.
"""
from __future__ import annotations

import ctypes
import types

import numpy as np
from mpi4py import MPI

# nccl.h's enums
CODES = {"NCCL_INT8": 0, "NCCL_UINT8": 1, "NCCL_INT32": 2, "NCCL_UINT32": 3, "NCCL_INT64": 4,
         "NCCL_UINT64": 5, "NCCL_FLOAT16": 6, "NCCL_FLOAT32": 7, "NCCL_FLOAT64": 8,
         "NCCL_BFLOAT16": 9, "NCCL_SUM": 0, "NCCL_PROD": 1, "NCCL_MAX": 2, "NCCL_MIN": 3}
NP_DTYPES = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64, 5: np.uint64,
             6: np.float16, 7: np.float32, 8: np.float64}
MPI_OPS = {0: MPI.SUM, 1: MPI.PROD, 2: MPI.MAX, 3: MPI.MIN}
CALLS: list = []


def _view(ptr: int, count: int, dtype_code: int) -> np.ndarray:
    dtype = np.dtype(NP_DTYPES[dtype_code])
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype, count=count)


def get_unique_id() -> tuple:
    return tuple(int(v) for v in np.random.default_rng().integers(-128, 128, size=128))


class NcclCommunicator:
    def __init__(self, ndev: int, commId: tuple, rank: int):
        self.comm = MPI.COMM_WORLD.Dup()
        assert (ndev, rank) == (self.comm.Get_size(), self.comm.Get_rank())
        ids = self.comm.allgather(list(commId))
        if any(i != ids[0] for i in ids) or len(commId) != 128:
            raise RuntimeError("fake NCCL: ranks were given different unique ids")
        self.aborted = False

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
        CALLS.append(("allReduce", count, datatype, op))
        out = _view(recvbuf, count, datatype)
        send = MPI.IN_PLACE if sendbuf == recvbuf else _view(sendbuf, count, datatype).copy()
        self.comm.Allreduce(send, out, MPI_OPS[op])

    def bcast(self, buff, count, datatype, root, stream):
        CALLS.append(("bcast", count, datatype, root))
        self.comm.Bcast(_view(buff, count, datatype), root=root)

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):
        CALLS.append(("allGather", count, datatype))
        send = _view(sendbuf, count, datatype).copy()
        self.comm.Allgather(send, _view(recvbuf, count * self.comm.Get_size(), datatype))

    def abort(self):
        self.aborted = True

    def destroy(self):
        self.comm.Free()


class _Stream:
    ptr = 0


class _Event:
    done = True  # calls above complete before they return

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        pass

    def record(self, stream=None):
        pass


def install(fake_cupy_module, devices: int = 2) -> None:
    """Give fake_cupy's `cuda` namespace NCCL, a stream, events and a device count."""
    cuda = fake_cupy_module.cuda
    nccl = types.SimpleNamespace(get_unique_id=get_unique_id, NcclCommunicator=NcclCommunicator,
                                 **CODES)
    cuda.nccl = nccl
    cuda.get_current_stream = lambda: _Stream()
    cuda.Event = _Event
    cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: devices)
