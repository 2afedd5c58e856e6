"""rt.io: datasets, samplers and DataLoader batching / shuffling / drop_last / collation."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt


class Squares(rt.io.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.array([i, i + 0.5], np.float32), i * i

    def __len__(self):
        return self.n


def test_batches_in_order_with_short_last_batch():
    batches = list(rt.io.DataLoader(Squares(7), batch_size=3))
    assert [b[0].shape for b in batches] == [[3, 2], [3, 2], [1, 2]]
    x, y = batches[1]
    assert isinstance(x, rt.Tensor) and x.dtype == "float32" and y.dtype == "int64"
    np.testing.assert_array_equal(x.numpy(), [[3, 3.5], [4, 4.5], [5, 5.5]])
    np.testing.assert_array_equal(y.numpy(), [9, 16, 25])
    assert len(rt.io.DataLoader(Squares(7), batch_size=3)) == 3


def test_drop_last():
    loader = rt.io.DataLoader(Squares(7), batch_size=3, drop_last=True)
    assert len(loader) == 2
    assert [b[1].numpy().tolist() for b in loader] == [[0, 1, 4], [9, 16, 25]]


def test_shuffle_is_a_seeded_permutation():
    def epoch():
        return np.concatenate([y.numpy() for _, y in
                               rt.io.DataLoader(Squares(10), batch_size=4, shuffle=True)])

    rt.seed(3)
    a, b = epoch(), epoch()
    rt.seed(3)
    a2 = epoch()
    assert sorted(a.tolist()) == [i * i for i in range(10)]
    assert a.tolist() != [i * i for i in range(10)]  # actually shuffled
    assert a.tolist() != b.tolist()  # a new order each epoch
    np.testing.assert_array_equal(a, a2)  # reproducible from the seed


def test_tensor_dataset_and_explicit_generator():
    x = rt.to_tensor(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = rt.to_tensor(np.arange(6))
    ds = rt.io.TensorDataset([x, y])
    assert len(ds) == 6
    sampler = rt.io.BatchSampler(sampler=rt.io.RandomSampler(
        ds, generator=np.random.default_rng(0)), batch_size=4)
    rows = []
    for xb, yb in rt.io.DataLoader(ds, batch_sampler=sampler):
        np.testing.assert_array_equal(xb.numpy(), x.numpy()[yb.numpy()])
        rows.extend(yb.numpy().tolist())
    assert sorted(rows) == list(range(6))
    assert rows == np.random.default_rng(0).permutation(6).tolist()


def test_tensor_dataset_errors():
    with pytest.raises(ValueError, match=r"tensors\[0\] has 3 rows but tensors\[1\] has 4"):
        rt.io.TensorDataset([rt.ones([3, 2]), rt.ones([4])])


def test_dict_samples_and_custom_collate():
    class D(rt.io.Dataset):
        def __getitem__(self, i):
            return {"x": np.full(3, i, np.float64), "label": float(i), "name": f"s{i}"}

        def __len__(self):
            return 5

    batch = next(iter(rt.io.DataLoader(D(), batch_size=2)))
    assert batch["x"].dtype == "float64" and batch["x"].shape == [2, 3]
    assert batch["label"].dtype == "float32" and batch["name"] == ["s0", "s1"]
    sizes = [b for b in rt.io.DataLoader(D(), batch_size=2, collate_fn=len)]
    assert sizes == [2, 2, 1]


def test_batch_size_none_yields_single_samples():
    items = list(rt.io.DataLoader(Squares(3), batch_size=None))
    assert len(items) == 3 and items[2][0].shape == [2] and int(items[2][1]) == 4


def test_iterable_dataset():
    class Stream(rt.io.IterableDataset):
        def __iter__(self):
            for i in range(5):
                yield np.float32(i)

    got = [b.numpy().tolist() for b in rt.io.DataLoader(Stream(), batch_size=2)]
    assert got == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="IterableDataset"):
        rt.io.DataLoader(Stream(), shuffle=True)


def test_subset_concat_random_split():
    ds = Squares(10)
    rt.seed(0)
    a, b = rt.io.random_split(ds, [7, 3])
    ids = sorted([a[i][1] for i in range(7)] + [b[i][1] for i in range(3)])
    assert ids == [i * i for i in range(10)]
    cat = rt.io.ConcatDataset([Squares(2), Squares(3)])
    assert len(cat) == 5 and cat[3][1] == 1 and cat[-1][1] == 4
    with pytest.raises(ValueError, match="add up"):
        rt.io.random_split(ds, [5, 3])
