"""BERT-style classifier: padding must not change the result; eager vs to_static."""
import numpy as np
import pytest
from zoo_harness import check_dynamic_batch, check_eval, check_training

import runtime as rt
from examples.models import BertClassifier
from runtime.static import InputSpec

VOCAB, T = 60, 8


def padded(n, seed):
    """Token rows with a random number of trailing pads (at least one real token)."""
    rng = np.random.RandomState(seed)
    ids = rng.randint(1, VOCAB, (n, T))
    lengths = rng.randint(1, T + 1, n)
    ids[np.arange(T)[None, :] >= lengths[:, None]] = 0
    return rt.to_tensor(ids.astype("int64"))


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_eval(pooling):
    rt.seed(0)
    check_eval(BertClassifier(VOCAB, pooling=pooling), (padded(4, 0),), (padded(4, 1),))


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_padding_is_masked(pooling):
    rt.seed(0)
    model = BertClassifier(VOCAB, pooling=pooling)
    model.eval()
    short = rt.to_tensor([[5, 6, 7, 0, 0, 0, 0, 0]])
    other_pads = rt.to_tensor([[5, 6, 7, 0, 0, 0, 0, 0, 0, 0]])
    static = check_eval(model, (short,))
    with rt.no_grad():
        np.testing.assert_allclose(static(other_pads).numpy(), model(short).numpy(), atol=1e-5)


def test_training():
    rt.seed(1)
    rng = np.random.RandomState(2)
    batches = [(padded(6, s), rt.to_tensor(rng.randint(0, 2, 6).astype("int64")))
               for s in range(5)]
    loss_fn = rt.nn.CrossEntropyLoss()
    check_training(BertClassifier(VOCAB, pooling="mean"), batches,
                   lambda m, x, y: loss_fn(m(x), y), lr=0.003)


def test_dynamic_batch():
    rt.seed(2)
    check_dynamic_batch(BertClassifier(VOCAB), [InputSpec([None, T], "int64")],
                        (padded(2, 0),), (padded(5, 1),))
