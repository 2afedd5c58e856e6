"""Datasets: what a `DataLoader` reads samples from (Paddle's `paddle.io` classes).

A map-style `Dataset` has `__getitem__(i)` and `__len__()`; an `IterableDataset` has
`__iter__()`. Samples may be Tensors, NumPy arrays, numbers, strings, or tuples / lists / dicts
of those; the loader's collate function batches them.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from ..ops.random import host_generator
from ..tensor import Tensor, wrap


class Dataset:
    """Map-style dataset: subclass and implement `__getitem__` and `__len__`.

    >>> import numpy as np, runtime as rt
    >>> class Squares(rt.io.Dataset):
    ...     def __getitem__(self, i):
    ...         return np.float32(i), np.float32(i * i)
    ...     def __len__(self):
    ...         return 10
    >>> len(Squares())
    10
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")


class IterableDataset(Dataset):
    """Stream-style dataset: subclass and implement `__iter__` (no indexing, no shuffling)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __getitem__(self, index):
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it cannot be indexed")

    def __len__(self):
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it has no len()")


class TensorDataset(Dataset):
    """Samples are rows of the given tensors: `ds[i] == [t[i] for t in tensors]`.

    >>> import runtime as rt
    >>> ds = rt.io.TensorDataset([rt.ones([4, 3]), rt.zeros([4])])
    >>> len(ds), ds[0][0].shape
    (4, [3])
    """

    def __init__(self, tensors: Sequence):
        tensors = list(tensors)
        if not tensors:
            raise ValueError("TensorDataset: needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, (Tensor, np.ndarray)):
                raise TypeError(f"TensorDataset: tensors[{i}] is a {type(t).__name__}, "
                                "expected a Tensor or NumPy array")
            if len(t.shape) == 0:
                raise ValueError(f"TensorDataset: tensors[{i}] is 0-d; each needs a first "
                                 "dimension to index samples along")
        n = tensors[0].shape[0]
        bad = [i for i, t in enumerate(tensors) if t.shape[0] != n]
        if bad:
            raise ValueError(f"TensorDataset: all tensors must have the same first dimension; "
                             f"tensors[0] has {n} rows but tensors[{bad[0]}] has "
                             f"{tensors[bad[0]].shape[0]}")
        self.tensors = tensors

    def __getitem__(self, index):
        # rows are read straight from the arrays: loading data records no autograd history
        return [wrap(t._data[index]) if isinstance(t, Tensor) else t[index]
                for t in self.tensors]

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ComposeDataset(Dataset):
    """Zip several datasets of equal length: sample i is the fields of each, concatenated."""

    def __init__(self, datasets: Sequence[Dataset]):
        self.datasets = list(datasets)
        lengths = {len(d) for d in self.datasets}
        if len(lengths) != 1:
            raise ValueError(f"ComposeDataset: datasets have different lengths {sorted(lengths)}")

    def __getitem__(self, index):
        out = []
        for d in self.datasets:
            sample = d[index]
            out.extend(sample if isinstance(sample, (list, tuple)) else [sample])
        return tuple(out)

    def __len__(self):
        return len(self.datasets[0])


class ChainDataset(IterableDataset):
    """Iterate several iterable datasets one after another."""

    def __init__(self, datasets: Sequence[IterableDataset]):
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            yield from d


class ConcatDataset(Dataset):
    """Map-style datasets one after another."""

    def __init__(self, datasets: Sequence[Dataset]):
        self.datasets = list(datasets)
        self.ends = list(np.cumsum([len(d) for d in self.datasets]))

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset: index {index} out of range for length {len(self)}")
        k = bisect.bisect_right(self.ends, index)
        start = self.ends[k - 1] if k else 0
        return self.datasets[k][index - start]

    def __len__(self):
        return int(self.ends[-1]) if self.ends else 0


def random_split(dataset: Dataset, lengths: Sequence, generator=None) -> list:
    """Split `dataset` into non-overlapping random `Subset`s of the given lengths (ints, or
    fractions summing to 1). `generator` is a `np.random.Generator` (default: the runtime's
    default generator, which `rt.seed` resets)."""
    n = len(dataset)
    if all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1.0) < 1e-6:
        sizes = [int(np.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    else:
        sizes = [int(x) for x in lengths]
    if sum(sizes) != n:
        raise ValueError(f"random_split: lengths {list(lengths)} do not add up to the dataset "
                         f"length {n}")
    perm = (generator if generator is not None else host_generator()).permutation(n)
    out, start = [], 0
    for size in sizes:
        out.append(Subset(dataset, perm[start:start + size].tolist()))
        start += size
    return out


__all__ = [
    "ChainDataset",
    "ComposeDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]
