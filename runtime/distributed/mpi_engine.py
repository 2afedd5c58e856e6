"""Collectives over MPI (`mpi4py`) for CPU arrays, with timeouts instead of hangs.

Every collective is started non-blocking (`Iallreduce`, `Ibcast`, `Iallgather`, `Ibarrier`)
and waited for by polling, so a wait can give up: after `timeout` seconds it asks every other
rank, on a second communicator, which collective it is in. A rank that is polling answers
(its collective number and kind); one that exited, crashed or is busy elsewhere does not. The
`DistributedTimeoutError` names both kinds.

Imported only by `init_parallel_env` in a process an MPI launcher started.
"""
from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

from .errors import DistributedError, DistributedTimeoutError

OPS = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
# What a rank reports it is waiting in (the index travels in a ping's answer).
KINDS = ("nothing", "all_reduce", "broadcast", "all_gather", "barrier")
TAG_PING, TAG_ANSWER = 1, 2
SPIN_SECONDS = 1e-3  # poll without sleeping this long first (most waits end within it)
MAX_SLEEP = 1e-3
GRACE_SECONDS = 2.0  # how long a timed-out rank waits for the others' answers


class Work:
    """A started collective; `wait()` returns its result array (or raises on timeout)."""

    __slots__ = ("array", "done", "engine", "kind", "seq")

    def __init__(self, engine, done, array, kind: str, seq: int):
        self.engine, self.done, self.array, self.kind, self.seq = engine, done, array, kind, seq

    def wait(self):
        self.engine.wait(self.done, self.kind, self.seq)
        return self.array


class MPIEngine:
    name = "mpi"

    def __init__(self, timeout: float):
        world = MPI.COMM_WORLD
        self.comm = world.Dup()  # collectives
        self.control = world.Dup()  # pings and answers about who waits where
        self.rank, self.size = world.Get_rank(), world.Get_size()
        self.timeout = timeout
        self.seq = 0  # collectives this rank has started
        self.waiting = (0, 0)  # (collective number, kind index) being waited for
        self.answers_sent: list = []
        node = world.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = node.Get_rank(), node.Get_size()
        node.Free()

    # ---- collectives on contiguous arrays ---------------------------------------------------
    def start_all_reduce(self, array, op: str = "sum") -> Work:
        self.seq += 1
        req = self.comm.Iallreduce(MPI.IN_PLACE, array, OPS[op])
        return Work(self, req.Test, array, "all_reduce", self.seq)

    def all_reduce(self, array, op: str = "sum"):
        return self.start_all_reduce(array, op).wait()

    def broadcast(self, array, root: int = 0):
        self.check_root(root)
        self.seq += 1
        req = self.comm.Ibcast(array, root=root)
        return Work(self, req.Test, array, "broadcast", self.seq).wait()

    def all_gather(self, array):
        self.seq += 1
        out = np.empty((self.size,) + tuple(array.shape), dtype=array.dtype)
        req = self.comm.Iallgather(array, out)
        return Work(self, req.Test, out, "all_gather", self.seq).wait()

    def barrier(self):
        self.seq += 1
        Work(self, self.comm.Ibarrier().Test, None, "barrier", self.seq).wait()

    def close(self):
        for comm in (self.comm, self.control):
            if comm != MPI.COMM_NULL:
                comm.Free()

    def check_root(self, root: int):
        if not 0 <= root < self.size:
            raise DistributedError(f"broadcast: src={root} is not a rank of this world of "
                                   f"{self.size} (ranks 0..{self.size - 1})")

    # ---- waiting with a timeout -------------------------------------------------------------
    def wait(self, done, kind: str, seq: int, on_timeout=None) -> None:
        """Poll `done()` until it is true, answering peers' pings meanwhile; past the timeout
        call `on_timeout` (if any) and raise DistributedTimeoutError."""
        if done():
            return
        self.waiting = (seq, KINDS.index(kind) if kind in KINDS else 0)
        start = time.monotonic()
        delay = 0.0
        try:
            while not done():
                self.answer_pings()
                now = time.monotonic()
                if now - start < SPIN_SECONDS:
                    continue
                if now - start > self.timeout:
                    if on_timeout is not None:
                        on_timeout()
                    raise DistributedTimeoutError(self.diagnose(kind, seq))
                delay = min(MAX_SLEEP, delay * 2 or 1e-5)
                time.sleep(delay)
        finally:
            self.waiting = (0, 0)

    def answer_pings(self) -> None:
        status = MPI.Status()
        while self.control.Iprobe(MPI.ANY_SOURCE, TAG_PING, status):
            source = status.Get_source()
            self.control.Recv(np.empty(1, np.int64), source, TAG_PING)
            answer = np.array(self.waiting, dtype=np.int64)
            self.answers_sent.append((self.control.Isend(answer, source, TAG_ANSWER), answer))
        if len(self.answers_sent) > 16:
            self.answers_sent = [(r, a) for r, a in self.answers_sent if not r.Test()]

    def diagnose(self, kind: str, seq: int) -> str:
        """Ask every other rank where it waits; the timeout message from the answers."""
        others = [r for r in range(self.size) if r != self.rank]
        pings = [self.control.Isend(np.array([seq], np.int64), r, TAG_PING) for r in others]
        answers, status = {}, MPI.Status()
        grace = min(GRACE_SECONDS, self.timeout)
        deadline = time.monotonic() + grace
        while len(answers) < len(others) and time.monotonic() < deadline:
            self.answer_pings()
            while self.control.Iprobe(MPI.ANY_SOURCE, TAG_ANSWER, status):
                got = np.empty(2, np.int64)
                self.control.Recv(got, status.Get_source(), TAG_ANSWER)
                answers[status.Get_source()] = (int(got[0]), int(got[1]))
            time.sleep(1e-3)
        del pings  # left pending towards ranks that never answer
        silent = [r for r in others if r not in answers]
        elsewhere = {r: a for r, a in answers.items() if a != (seq, KINDS.index(kind))}
        parts = [(f"rank {self.rank}: {kind} (collective #{seq}) waited {self.timeout:g} s "
                  "for the other ranks.")]
        if silent:
            parts.append(f"{_ranks(silent)} did not answer within {grace:g} s: exited, crashed, "
                         "or busy outside rt.distributed (stuck, or skipped this collective); "
                         "its own output above says which.")
        for r, (their_seq, their_kind) in sorted(elsewhere.items()):
            what = "nothing" if their_kind == 0 else f"{KINDS[their_kind]} (collective " \
                f"#{their_seq})"
            parts.append(f"rank {r} is waiting in {what}: the ranks called different "
                         "collectives; every rank must call the same ones in the same order.")
        if not silent and not elsewhere:
            parts.append("Every rank answered from this same collective, so it is slow rather "
                         "than stuck.")
        parts.append("A rank that is only slow needs a longer timeout: "
                     "init_parallel_env(timeout=seconds) or D2S_DIST_TIMEOUT=seconds.")
        return " ".join(parts)


def _ranks(ranks: list) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))
