"""Which process this is, and the engine that carries its collectives.

A process started by an MPI launcher (`mpiexec -n 2 python train.py`) finds the launcher's
variables in its environment (MPICH/Hydra and Slurm set `PMI_RANK`/`PMI_SIZE`, Open MPI sets
`OMPI_COMM_WORLD_SIZE`, PMIx launchers `PMIX_RANK`). Only then is `mpi4py` imported. A plain
`python train.py` is world size 1 and imports nothing beyond the runtime.

The engine is chosen by `init_parallel_env` from the device in force: CPU tensors travel over
MPI; GPU tensors over NCCL (through CuPy), with MPI used only to hand every rank NCCL's
unique id and to ask peers what they are doing when a collective times out.
"""
from __future__ import annotations

import os

from .. import backend
from .errors import DistributedError

# Variables an MPI launcher sets in each process it starts (name -> what it means).
LAUNCHER_VARIABLES = ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                      "MPI_LOCALNRANKS")
TIMEOUT_ENV = "D2S_DIST_TIMEOUT"
DEFAULT_TIMEOUT = 300.0  # seconds a collective may wait for its peers


class _State:
    engine = None  # the engine in force once init_parallel_env ran (SingleEngine before)


STATE = _State()


def launched_by_mpi() -> bool:
    """True when an MPI launcher started this process (so MPI is worth importing)."""
    return any(name in os.environ for name in LAUNCHER_VARIABLES)


def default_timeout() -> float:
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise DistributedError(f"{TIMEOUT_ENV}={text!r}: expected a number of seconds") from None
    if value <= 0:
        raise DistributedError(f"{TIMEOUT_ENV}={text!r}: the timeout must be positive")
    return value


class SingleEngine:
    """World size 1: every collective is the identity (nothing is imported, nothing sent)."""

    name = "single"
    rank, size = 0, 1

    def all_reduce(self, array, op: str = "sum"):
        return array

    def broadcast(self, array, root: int = 0):
        return array

    def all_gather(self, array):
        return array.reshape((1,) + tuple(array.shape)).copy()

    def start_all_reduce(self, array, op: str = "sum"):
        return _Done(array)

    def barrier(self):
        return None

    def close(self):
        return None


class _Done:
    def __init__(self, array):
        self.array = array

    def wait(self):
        return self.array


def engine():
    """The engine in force (a SingleEngine until init_parallel_env chooses another)."""
    if STATE.engine is None:
        STATE.engine = SingleEngine()
    return STATE.engine


def init_parallel_env(backend_name: str | None = None, timeout: float | None = None):
    """Start data-parallel training: join the other ranks (under an MPI launcher) or become a
    world of one (a plain `python train.py`). Returns the engine's `ParallelEnv`.

    `backend_name`: 'mpi' (CPU arrays), 'nccl' (GPU arrays), or None for the device in force.
    `timeout` (seconds, default `$D2S_DIST_TIMEOUT` or 300): how long a collective waits for
    its peers before raising `DistributedTimeoutError` naming the ranks that did not answer.

    >>> import runtime as rt
    >>> env = rt.distributed.init_parallel_env()   # python train.py: a world of one
    >>> env.world_size, env.rank
    (1, 0)
    """
    timeout = default_timeout() if timeout is None else float(timeout)
    if STATE.engine is not None and STATE.engine.name != "single":
        return ParallelEnv()
    if backend_name not in (None, "mpi", "nccl"):
        raise DistributedError(f"init_parallel_env: unknown backend {backend_name!r}; expected "
                               "'mpi' (CPU), 'nccl' (GPU) or None (the device in force)")
    on_gpu = backend.get_device().startswith("gpu")
    wanted = backend_name or ("nccl" if on_gpu else "mpi")
    if not launched_by_mpi():
        if wanted == "nccl" and backend_name == "nccl" and not on_gpu:
            raise DistributedError("init_parallel_env(backend_name='nccl') needs the GPU: call "
                                   "rt.set_device('gpu') first")
        STATE.engine = SingleEngine()
        return ParallelEnv()
    from .mpi_engine import MPIEngine
    mpi = MPIEngine(timeout)
    if wanted == "mpi":
        STATE.engine = mpi
        return ParallelEnv()
    if not on_gpu:
        raise DistributedError("init_parallel_env(backend_name='nccl') needs the GPU: call "
                               "rt.set_device('gpu') before it (NCCL moves device arrays)")
    from .nccl_engine import NCCLEngine
    STATE.engine = NCCLEngine(mpi, backend.xp(), timeout)
    return ParallelEnv()


def get_rank() -> int:
    """This process's rank, 0 .. world_size - 1 (0 without a launcher).

    >>> import runtime as rt
    >>> rt.distributed.get_rank()
    0
    """
    if STATE.engine is None and launched_by_mpi():
        return int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK",
                                                             os.environ.get("PMIX_RANK", "0"))))
    return engine().rank


def get_world_size() -> int:
    """The number of processes training together (1 without a launcher)."""
    if STATE.engine is None and launched_by_mpi():
        return int(os.environ.get("PMI_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
    return engine().size


def is_initialized() -> bool:
    """True once init_parallel_env has joined a world of more than one process."""
    return STATE.engine is not None and STATE.engine.name != "single"


class ParallelEnv:
    """Paddle's `ParallelEnv`: rank, world size and device of this process."""

    @property
    def rank(self) -> int:
        return get_rank()

    @property
    def world_size(self) -> int:
        return get_world_size()

    @property
    def local_rank(self) -> int:
        return int(os.environ.get("MPI_LOCALRANKID",
                                  os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", self.rank)))

    @property
    def device(self) -> str:
        return backend.get_device()

    @property
    def backend(self) -> str:
        return engine().name

    def __repr__(self):
        return (f"ParallelEnv(rank={self.rank}, world_size={self.world_size}, "
                f"backend={self.backend!r}, device={self.device!r})")
