"""LSTM language model: eager vs to_static, with and without carried states, tied and untied
output projections."""
import numpy as np
import pytest
from zoo_harness import check_dynamic_batch, check_eval, check_training

import runtime as rt
from examples.models import LSTMLanguageModel
from runtime.static import InputSpec

VOCAB = 40


def tokens(n, t, seed):
    return rt.to_tensor(np.random.RandomState(seed).randint(0, VOCAB, (n, t)).astype("int64"))


@pytest.mark.parametrize("tie", [True, False])
def test_eval_with_and_without_states(tie):
    rt.seed(0)
    model = LSTMLanguageModel(VOCAB, 16, 16, tie_weights=tie)
    model.eval()
    with rt.no_grad():
        _, states = model(tokens(3, 4, 5))
    check_eval(model, (tokens(3, 6, 0),), (tokens(3, 6, 1), states))


def test_training_truncated_bptt():
    rt.seed(1)
    model = LSTMLanguageModel(VOCAB, 16, 16)
    text = tokens(4, 5 * 6 + 1, 2)
    batches = [(text[:, 6 * i:6 * i + 7],) for i in range(5)]
    check_training(model, batches, lambda m, x: m.loss(x))


def test_dynamic_batch():
    rt.seed(2)
    check_dynamic_batch(LSTMLanguageModel(VOCAB, 16, 16), [InputSpec([None, 6], "int64")],
                        (tokens(2, 6, 0),), (tokens(5, 6, 1),))
