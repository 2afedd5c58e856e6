"""`rt.bincount(batch, minlength=int(batch.max()) + 1)` in converted code (PyG's
global_mean_pool, corpus case wild3_data.global_mean_pool_by_batch): the length is known only
when the program runs, and the call raised `TypeError: bool() of a tensor computed by the
converted code` from inside bincount. `minlength` may now be a 0-d int tensor, eagerly too."""
import numpy as np
import pytest

import d2s
import runtime as rt


def mean_pool(x, batch, num_graphs=None):
    size = int(batch.max()) + 1 if num_graphs is None else num_graphs
    sums = rt.scatter(rt.zeros([size, x.shape[1]]), batch, x, overwrite=False)
    count = rt.bincount(batch, minlength=size).astype("float32").clip(min=1.0)
    return sums / count.unsqueeze(-1), count


def _numpy(x, batch, num_graphs=None):
    size = int(batch.max()) + 1 if num_graphs is None else num_graphs
    sums = np.zeros((size, x.shape[1]), np.float32)
    np.add.at(sums, batch, x)
    count = np.maximum(np.bincount(batch, minlength=size), 1).astype(np.float32)
    return sums / count[:, None], count


@pytest.mark.parametrize("batch, num_graphs", [([0, 0, 1, 1, 1], None), ([0, 1, 2, 2, 4], None),
                                               ([0, 0, 0, 0, 0], None), ([0, 2, 2, 2, 2], 5)])
def test_one_program_pools_every_number_of_graphs(batch, num_graphs):
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    batch = np.array(batch)
    static = d2s.to_static(mean_pool)
    for fn in (mean_pool, static):
        got = fn(rt.to_tensor(x), rt.to_tensor(batch), num_graphs)
        expected = _numpy(x, batch, num_graphs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == list(e.shape)
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-6)


def test_one_program_serves_batches_with_different_graph_counts():
    static = d2s.to_static(mean_pool)
    x = rt.to_tensor(np.ones([4, 2], np.float32))
    sizes = [static(x, rt.to_tensor(np.array(b)))[1].shape[0]
             for b in ([0, 0, 1, 1], [0, 1, 2, 3], [0, 0, 0, 0])]
    assert sizes == [2, 4, 1]
    assert len(static.program_cache) == 1


def test_a_tensor_minlength_eagerly_and_its_errors():
    x = rt.to_tensor(np.array([1, 1, 3]))
    assert rt.bincount(x, minlength=rt.to_tensor(6)).tolist() == [0, 2, 0, 1, 0, 0]
    assert rt.bincount(x, minlength=rt.to_tensor(2)).tolist() == [0, 2, 0, 1]
    with pytest.raises(ValueError, match="minlength must be >= 0, got -1"):
        rt.bincount(x, minlength=rt.to_tensor(-1))
    with pytest.raises(TypeError, match="minlength must be an int or a 0-d int tensor"):
        rt.bincount(x, minlength=rt.to_tensor([2, 3]))
