"""`DataLoader`: batches of Tensors from a dataset (samplers, collation), as in `paddle.io`.

Loading runs in the calling process: `num_workers` is accepted for Paddle compatibility but
samples are read in order by the loop that consumes them (the datasets this project trains on
are in memory, where worker processes would cost more than they save).
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

from .. import backend
from ..ops.random import host_generator
from ..tensor import Tensor, to_tensor, wrap
from .dataset import Dataset, IterableDataset


class Sampler:
    """Yields dataset indices."""

    def __init__(self, data_source=None):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.data_source)


class SequenceSampler(Sampler):
    """0, 1, ..., len - 1."""

    def __iter__(self):
        return iter(range(len(self.data_source)))


class RandomSampler(Sampler):
    """A random permutation of the indices each epoch, drawn from `generator` (a
    `np.random.Generator`) or else from the runtime's default generator, so `rt.seed(n)`
    makes the order reproducible."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None):
        super().__init__(data_source)
        self.replacement, self.generator = replacement, generator
        self._num_samples = num_samples
        if num_samples is not None and not replacement:
            raise ValueError("RandomSampler: num_samples is only valid with replacement=True")

    def __len__(self):
        return self._num_samples if self._num_samples is not None else len(self.data_source)

    def __iter__(self):
        n = len(self.data_source)
        rng = self.generator if self.generator is not None else host_generator()
        if self.replacement:
            return iter(rng.integers(0, n, size=len(self)).tolist())
        return iter(rng.permutation(n).tolist())


def batches(indices, batch_size: int, drop_last: bool):
    """Lists of `batch_size` consecutive indices (the last one shorter unless `drop_last`)."""
    batch = []
    for i in indices:
        batch.append(i)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


class BatchSampler(Sampler):
    """Groups indices from `sampler` (or a sequence / random sampler over `dataset`) into
    lists of `batch_size`; `drop_last` drops a final short batch."""

    def __init__(self, dataset=None, sampler: Sampler | None = None, shuffle: bool = False,
                 batch_size: int = 1, drop_last: bool = False):
        if (dataset is None) == (sampler is None):
            raise ValueError("BatchSampler: give exactly one of dataset and sampler")
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        return batches(self.sampler, self.batch_size, self.drop_last)

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate_fn(batch: list):
    """Stack a list of samples into Tensors, keeping the samples' structure: a list of
    (x, y) tuples becomes [X, Y]; dicts map key-wise; strings stay lists. Python floats give
    float32 (Paddle's default float), ints int64, NumPy arrays keep their dtype."""
    sample = batch[0]
    if isinstance(sample, Tensor):
        return wrap(backend.XP.stack([s._data for s in batch]))
    if isinstance(sample, (np.ndarray, np.generic)):
        return to_tensor(np.stack(batch))
    if isinstance(sample, (bool, numbers.Number)):
        return to_tensor(np.asarray(batch, dtype=_number_dtype(sample)))
    if isinstance(sample, (str, bytes)):
        return list(batch)
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([s[key] for s in batch]) for key in sample}
    if isinstance(sample, Sequence):
        if any(len(s) != len(sample) for s in batch):
            raise ValueError("DataLoader: samples in one batch have different numbers of fields")
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError(f"DataLoader: cannot batch samples of type {type(sample).__name__}; pass a "
                    "collate_fn")


def _number_dtype(x):
    if isinstance(x, bool):
        return np.bool_
    if isinstance(x, numbers.Integral):
        return np.int64
    return np.float32


def default_convert_fn(sample):
    """Without batching (`batch_size=None`): convert one sample's arrays and numbers to
    Tensors, keeping its structure."""
    if isinstance(sample, Tensor):
        return sample
    if isinstance(sample, (np.ndarray, np.generic)):
        return to_tensor(np.asarray(sample))
    if isinstance(sample, (bool, numbers.Number)):
        return to_tensor(np.asarray(sample, dtype=_number_dtype(sample)))
    if isinstance(sample, Mapping):
        return {k: default_convert_fn(v) for k, v in sample.items()}
    if isinstance(sample, Sequence) and not isinstance(sample, (str, bytes)):
        return [default_convert_fn(v) for v in sample]
    return sample


class DataLoader:
    """Iterate over `dataset` in batches of Tensors.

    >>> import numpy as np, runtime as rt
    >>> ds = rt.io.TensorDataset([rt.to_tensor(np.arange(10.0).reshape(5, 2)),
    ...                           rt.to_tensor(np.arange(5))])
    >>> [x.shape for x, y in rt.io.DataLoader(ds, batch_size=2)]
    [[2, 2], [2, 2], [1, 2]]
    """

    def __init__(self, dataset: Dataset, feed_list=None, places=None, return_list: bool = True,
                 batch_sampler: BatchSampler | None = None, batch_size: int | None = 1,
                 shuffle: bool = False, drop_last: bool = False,
                 collate_fn: Callable | None = None, num_workers: int = 0,
                 use_buffer_reader: bool = True, prefetch_factor: int = 2,
                 use_shared_memory: bool = True, timeout: int = 0,
                 worker_init_fn: Callable | None = None, persistent_workers: bool = False):
        self.dataset = dataset
        self.return_list = return_list
        self.iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None and (batch_size not in (1, None) or shuffle or drop_last):
            raise ValueError("DataLoader: batch_sampler excludes batch_size, shuffle and "
                             "drop_last (the sampler decides them)")
        if self.iterable and (shuffle or batch_sampler is not None):
            raise ValueError("DataLoader: an IterableDataset cannot be shuffled or sampled")
        self.batch_size, self.drop_last = batch_size, drop_last
        if batch_sampler is None and batch_size is not None and not self.iterable:
            batch_sampler = BatchSampler(dataset, shuffle=shuffle, batch_size=batch_size,
                                         drop_last=drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or (
            default_collate_fn if batch_size is not None or batch_sampler is not None
            else default_convert_fn)

    def __len__(self) -> int:
        if self.iterable:
            raise TypeError("DataLoader over an IterableDataset has no len()")
        if self.batch_sampler is None:
            return len(self.dataset)
        return len(self.batch_sampler)

    def __iter__(self):
        if self.iterable:
            return self._iter_stream()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in range(len(self.dataset)))
        return (self.collate_fn([self.dataset[i] for i in indices])
                for indices in self.batch_sampler)

    def _iter_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)


__all__ = [
    "BatchSampler",
    "DataLoader",
    "RandomSampler",
    "Sampler",
    "SequenceSampler",
    "default_collate_fn",
    "default_convert_fn",
]
