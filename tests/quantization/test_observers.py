"""Observers against NumPy: abs-max, moving average with bias correction, histogram
percentile (with range growth), per-channel weights; and the quantizer protocol of the QAT
quanters."""
from __future__ import annotations

import numpy as np
import pytest

import runtime as rt

Q = rt.quantization


def _batches(seed=0, n=4, size=(8, 5)):
    rng = np.random.default_rng(seed)
    # growing ranges, so the histogram has to re-bin
    return [(rng.standard_normal(size) * (1 + 2 * i)).astype(np.float32) for i in range(n)]


def test_abs_max_and_moving_average_match_numpy():
    xs = _batches()
    absmax, moving = Q.AbsmaxObserver(), Q.MovingAverageAbsmaxObserver(moving_rate=0.5)
    assert absmax.scales() is None and moving.scales() is None
    accum = state = 0.0
    for a in xs:
        out = moving(absmax(rt.to_tensor(a)))
        np.testing.assert_array_equal(out.numpy(), a)  # observers do not touch values
        state, accum = 0.5 * state + 1, 0.5 * accum + np.abs(a).max()
    assert float(absmax.scales()) == pytest.approx(max(np.abs(a).max() for a in xs))
    assert float(moving.scales()) == pytest.approx(accum / state, rel=1e-6)


@pytest.mark.parametrize("percent", [0.9, 0.99, 1.0])
def test_histogram_percentile_matches_numpy_quantile(percent):
    xs = _batches(seed=1, size=(50, 40))
    hist = Q.HistObserver(bins_count=4096, percent=percent)
    for a in xs:
        hist(rt.to_tensor(a))
    allv = np.abs(np.concatenate([a.ravel() for a in xs]))
    want = np.quantile(allv, percent, method="inverted_cdf")  # the smallest v with cdf >= p
    # re-binning moves counts by up to an old bin: a few bins of slack
    assert abs(float(hist.scales()) - want) <= 8 * allv.max() / 4096 + 1e-6


def test_channel_wise_weight_observer():
    w = np.random.default_rng(2).standard_normal((6, 3)).astype(np.float32)
    obs = Q.AbsMaxChannelWiseWeightObserver(quant_axis=1)
    obs(rt.to_tensor(w))
    np.testing.assert_allclose(obs.scales().numpy(), np.abs(w).max(0))
    assert obs.quant_axis() == 1 and obs.bit_length() == 8


def test_qat_quanters_answer_the_same_protocol():
    q = Q.FakeQuanterMovingAverageAbsMax()
    assert q.scales() is None and q.bit_length() == 8  # never ran in training mode
    q.train()
    q(rt.to_tensor([1.0, -3.0]))
    assert float(q.scales()) == pytest.approx((0.9 * 1 + 3.0) / (0.9 * 1 + 1))
    assert Q.FakeQuanterChannelWiseAbsMax(8, 1).quant_axis() == 1


def test_observer_arguments_are_checked():
    with pytest.raises(ValueError, match="quant_bits"):
        Q.AbsmaxObserver(quant_bits=1)
    with pytest.raises(ValueError, match="percent"):
        Q.HistObserver(percent=0.0)
    with pytest.raises(ValueError, match="moving_rate"):
        Q.MovingAverageAbsmaxObserver(moving_rate=1.0)


def test_paddle_named_quanter_in_qat_config():
    q = Q.FakeQuanterWithAbsMaxObserver(moving_rate=0.5, bit_length=8)
    model = Q.QAT(Q.QuantConfig(activation=q)).quantize(rt.nn.Sequential(rt.nn.Linear(2, 2)))
    aq = model[0].activation_quanter
    assert aq is not q and aq.moving_rate == 0.5 and aq.bit_length() == 8
