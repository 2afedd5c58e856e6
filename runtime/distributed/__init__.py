"""`rt.distributed`: data-parallel training over MPI (CPU) or NCCL (GPU), Paddle's names.

Launch one process per rank with an MPI launcher (`mpiexec -n 2 python train.py`); a plain
`python train.py` is a world of one and imports no MPI. See docs/distributed.md.

>>> import runtime as rt
>>> env = rt.distributed.init_parallel_env()
>>> rt.distributed.get_rank(), rt.distributed.get_world_size()
(0, 1)
"""
from .collective import ReduceOp, Task, all_gather, all_reduce, barrier, broadcast
from .env import (
    ParallelEnv,
    get_rank,
    get_world_size,
    init_parallel_env,
    is_initialized,
)
from .errors import DistributedError, DistributedTimeoutError
from .parallel import DataParallel

__all__ = [
    "DataParallel",
    "DistributedError",
    "DistributedTimeoutError",
    "ParallelEnv",
    "ReduceOp",
    "Task",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "get_rank",
    "get_world_size",
    "init_parallel_env",
    "is_initialized",
]
