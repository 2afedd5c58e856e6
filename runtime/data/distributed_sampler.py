"""`DistributedBatchSampler`: each rank's share of every epoch, as in `paddle.io`.

Every rank orders the epoch the same way (shuffled by a generator seeded with the epoch
number, so no communication is needed), pads it by repeating its first indices until it
divides evenly, and takes its own `batch_size` indices out of each consecutive run of
`batch_size * num_replicas`. So step k's batches of ranks 0, 1, ... concatenated are indices
[k * B * n, (k + 1) * B * n) of the epoch's order: the batch one process would take with
batch size B * n.
"""
from __future__ import annotations

import numpy as np

from .dataloader import BatchSampler, batches


class DistributedBatchSampler(BatchSampler):
    """Batches of this rank's part of `dataset` for `rt.io.DataLoader(batch_sampler=...)`.

    `num_replicas` and `rank` default to `rt.distributed.get_world_size()` / `get_rank()`.
    With `shuffle=True` each epoch has its own order; it advances on every iteration, or set
    it with `set_epoch(n)`.

    >>> import runtime as rt
    >>> s = rt.io.DistributedBatchSampler(list(range(10)), batch_size=2, num_replicas=2,
    ...                                   rank=1)
    >>> list(s)
    [[2, 3], [6, 7], [9]]
    """

    def __init__(self, dataset, batch_size: int, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = False, drop_last: bool = False):
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DistributedBatchSampler: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if num_replicas is None or rank is None:
            from .. import distributed
            num_replicas = distributed.get_world_size() if num_replicas is None else num_replicas
            rank = distributed.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas <= 0:
            raise ValueError(f"DistributedBatchSampler: num_replicas must be a positive int, got "
                             f"{num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedBatchSampler: rank must be in [0, {num_replicas}), "
                             f"got {rank!r}")
        self.dataset, self.batch_size = dataset, batch_size
        self.nranks, self.local_rank = num_replicas, rank
        self.shuffle, self.drop_last = shuffle, drop_last
        self.epoch = 0
        self.num_samples = -(-len(dataset) // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        order = np.arange(n)
        if self.shuffle:
            np.random.default_rng(self.epoch).shuffle(order)
            self.epoch += 1
        if self.total_size > n:  # pad by wrapping around (repeating as often as needed)
            order = np.resize(order, self.total_size)
        yield from batches(self._share(order.tolist()), self.batch_size, self.drop_last)

    def _share(self, order: list) -> list:
        """This rank's indices: its `batch_size` slice of every global batch, then its equal
        part of the short last global batch."""
        step = self.batch_size * self.nranks
        full = len(order) - len(order) % step
        mine = []
        for start in range(self.local_rank * self.batch_size, full, step):
            mine.extend(order[start:start + self.batch_size])
        tail = order[full:]
        part = len(tail) // self.nranks
        mine.extend(tail[self.local_rank * part:(self.local_rank + 1) * part])
        return mine

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_samples // self.batch_size
        return (self.num_samples + self.batch_size - 1) // self.batch_size

    def set_epoch(self, epoch: int) -> None:
        """Use epoch `epoch`'s order next (the same on every rank)."""
        self.epoch = epoch


__all__ = ["DistributedBatchSampler"]
