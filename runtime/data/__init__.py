"""Datasets and the `DataLoader` that batches them into Tensors; public as `rt.io` (Paddle's
`paddle.io`, see `runtime/io.py`).

>>> import runtime as rt
>>> ds = rt.io.TensorDataset([rt.ones([6, 3]), rt.zeros([6])])
>>> loader = rt.io.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)
>>> len(loader)
1
"""
from .dataloader import (  # noqa: F401
    BatchSampler,
    DataLoader,
    RandomSampler,
    Sampler,
    SequenceSampler,
    default_collate_fn,
    default_convert_fn,
)
from .dataset import (  # noqa: F401
    ChainDataset,
    ComposeDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed_sampler import DistributedBatchSampler  # noqa: F401

__all__ = ["BatchSampler", "ChainDataset", "ComposeDataset", "ConcatDataset", "DataLoader",
           "Dataset", "DistributedBatchSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequenceSampler", "Subset", "TensorDataset", "default_collate_fn",
           "default_convert_fn", "random_split"]
