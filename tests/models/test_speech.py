"""Speech classifier: variable-length features with lengths as a tensor; padding frames must
not change the result; eager vs to_static."""
import numpy as np
import pytest
from zoo_harness import (
    check_buffers_after_training,
    check_dynamic_batch,
    check_eval,
    check_training,
)

import runtime as rt
from examples.models import SpeechClassifier
from runtime.static import InputSpec

FEATURES, T = 8, 20


def utterances(n, seed):
    rng = np.random.RandomState(seed)
    lengths = rng.randint(4, T + 1, n)
    x = rng.randn(n, T, FEATURES).astype("float32")
    x[np.arange(T)[None, :] >= lengths[:, None]] = 0.0
    return rt.to_tensor(x), rt.to_tensor(lengths.astype("int64"))


def warmed(**kw):
    model = SpeechClassifier(FEATURES, **kw)
    with rt.no_grad():
        model(*utterances(8, 99))
    return model


@pytest.mark.parametrize("bidirectional", [False, True])
def test_eval(bidirectional):
    rt.seed(0)
    check_eval(warmed(bidirectional=bidirectional), utterances(4, 0), utterances(3, 1))


def test_lengths_are_subsampled_like_the_convolutions():
    rt.seed(0)
    model = SpeechClassifier(FEATURES)
    x = rt.zeros([3, T, FEATURES])
    for conv in model.convs:
        x = conv(rt.transpose(x, [0, 2, 1])).transpose([0, 2, 1])
    full = model.subsampled_lengths(rt.to_tensor([T, 7, 1])).numpy()
    assert full[0] == x.shape[1]
    assert full.tolist() == [5, 2, 1]


def test_padding_frames_do_not_matter():
    rt.seed(0)
    model = warmed()
    model.eval()
    x, lengths = utterances(3, 2)
    noisy = x.numpy().copy()
    noisy[np.arange(T)[None, :] >= (lengths.numpy()[:, None] + 4)] = 5.0
    static = check_eval(model, (x, lengths))
    with rt.no_grad():
        np.testing.assert_allclose(static(rt.to_tensor(noisy), lengths).numpy(),
                                   model(x, lengths).numpy(), atol=1e-5)


def training_data():
    rng = np.random.RandomState(2)
    batches = [utterances(6, s) + (rt.to_tensor(rng.randint(0, 6, 6).astype("int64")),)
               for s in range(5)]
    loss_fn = rt.nn.CrossEntropyLoss()
    return batches, lambda m, x, n, y: loss_fn(m(x, n), y)


def test_training():
    rt.seed(1)
    check_training(SpeechClassifier(FEATURES), *training_data())


def test_batchnorm_statistics_after_training(monkeypatch):
    # The convolutions' biases feed BatchNorm, so their true gradient is 0 and what eager
    # computes is rounding noise (4e-9) that Adam turns into full steps of either sign, which
    # the next BatchNorm's running mean records. Only the unfused program repeats eager's
    # roundings exactly; the fused BatchNorm + ReLU (sums in double) is compared with it in
    # tests/static/test_batch_norm_relu.py.
    monkeypatch.setenv("D2S_FUSION", "0")
    rt.seed(1)
    check_buffers_after_training(SpeechClassifier(FEATURES), *training_data())


def test_dynamic_batch():
    rt.seed(2)
    specs = [InputSpec([None, T, FEATURES], "float32"), InputSpec([None], "int64")]
    check_dynamic_batch(warmed(), specs, utterances(2, 0), utterances(5, 1))
