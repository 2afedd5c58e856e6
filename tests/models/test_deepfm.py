"""DeepFM: eager vs to_static with and without dense features; the FM term against NumPy."""
import numpy as np
import pytest
from zoo_harness import check_dynamic_batch, check_eval, check_training

import runtime as rt
from examples.models import DeepFM
from runtime.static import InputSpec

FIELDS = (10, 8, 6, 4)


def sparse(n, seed):
    rng = np.random.RandomState(seed)
    return rt.to_tensor(np.stack([rng.randint(0, s, n) for s in FIELDS], 1).astype("int64"))


def dense(n, seed):
    return rt.to_tensor(np.random.RandomState(seed).randn(n, 3).astype("float32"))


def test_eval_with_dense_features():
    rt.seed(0)
    check_eval(DeepFM(FIELDS, num_dense=3), (sparse(5, 0), dense(5, 0)),
               (sparse(3, 1), dense(3, 1)))


def test_eval_sparse_only_and_fm_term():
    rt.seed(0)
    model = DeepFM(FIELDS, num_dense=0, hidden=())
    check_eval(model, (sparse(5, 0),))
    x = sparse(5, 0).numpy() + np.array(model.offsets)
    e = model.embedding.weight.numpy()[x]
    fm = 0.5 * ((e.sum(1) ** 2) - (e ** 2).sum(1)).sum(1)
    first = model.first_order.weight.numpy()[x].sum((1, 2)) + model.bias.numpy()
    deep = e.reshape(5, -1) @ model.out.weight.numpy() + model.out.bias.numpy()
    with rt.no_grad():
        np.testing.assert_allclose(model(sparse(5, 0)).numpy(), first + fm + deep[:, 0],
                                   rtol=1e-5, atol=1e-5)


def test_training():
    rt.seed(1)
    rng = np.random.RandomState(2)
    batches = [(sparse(8, s), dense(8, s), rt.to_tensor(rng.randint(0, 2, 8).astype("float32")))
               for s in range(5)]
    loss_fn = rt.nn.BCEWithLogitsLoss()
    check_training(DeepFM(FIELDS), batches, lambda m, s, d, y: loss_fn(m(s, d), y))


@pytest.mark.parametrize("with_dense", [True, False])
def test_dynamic_batch(with_dense):
    rt.seed(2)
    specs = [InputSpec([None, len(FIELDS)], "int64")]
    if with_dense:
        specs.append(InputSpec([None, 3], "float32"))
    model = DeepFM(FIELDS, num_dense=3 if with_dense else 0)
    a = (sparse(2, 0),) + ((dense(2, 0),) if with_dense else ())
    b = (sparse(5, 1),) + ((dense(5, 1),) if with_dense else ())
    check_dynamic_batch(model, specs, a, b)
