"""`rt.signal.stft` / `istft` against a frame-by-frame NumPy reference, the round trip, a
log-mel-style front-end eager vs `d2s.to_static` with gradients against finite differences,
and argument errors."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt


def stft_ref(x, n_fft, hop, window, center=True, normalized=False, onesided=True):
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode="reflect")
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., f * hop:f * hop + n_fft] * window for f in range(n_frames)], -2)
    transform = np.fft.rfft if onesided else np.fft.fft
    spec = transform(frames, axis=-1, norm="ortho" if normalized else "backward")
    return np.swapaxes(spec, -1, -2)


@pytest.mark.parametrize("kwargs", [
    {}, {"center": False}, {"normalized": True}, {"onesided": False}, {"win_length": 6}])
def test_stft_matches_numpy_frames(kwargs):
    x = np.random.default_rng(0).standard_normal((2, 40))
    n_fft, hop = 8, 3
    win_length = kwargs.pop("win_length", n_fft)
    window = np.hanning(win_length + 2)[1:-1]
    padded = np.pad(window, ((n_fft - win_length) // 2, n_fft - win_length
                             - (n_fft - win_length) // 2))
    got = rt.signal.stft(rt.to_tensor(x), n_fft, hop, win_length=win_length,
                         window=rt.to_tensor(window), **kwargs)
    want = stft_ref(x, n_fft, hop, padded, **kwargs)
    assert got.dtype == rt.complex128 and tuple(got.shape) == want.shape
    np.testing.assert_allclose(rt.real(got).numpy(), want.real, atol=1e-12)
    np.testing.assert_allclose(rt.imag(got).numpy(), want.imag, atol=1e-12)
    one = rt.signal.stft(rt.to_tensor(x[0]), n_fft, hop, win_length=win_length,
                         window=rt.to_tensor(window), **kwargs)
    np.testing.assert_allclose(rt.real(one).numpy(), want[0].real, atol=1e-12)


@pytest.mark.parametrize("center, length", [(True, 50), (True, None), (False, None)])
def test_istft_inverts_stft(center, length):
    x = np.random.default_rng(1).standard_normal((2, 50))
    window = rt.to_tensor(np.hanning(16).astype(np.float32) + 0.01)
    spec = rt.signal.stft(rt.to_tensor(x.astype(np.float32)), 16, 4, window=window,
                          center=center)
    back = rt.signal.istft(spec, 16, 4, window=window, center=center, length=length)
    n = back.shape[-1]
    assert n == (50 if length else 48)  # hop * (frames - 1) samples unless `length` says
    np.testing.assert_allclose(back.numpy(), x[:, :n], atol=1e-5)


class LogPowerFrontEnd(rt.nn.Layer):
    """A speech front-end: STFT power, a learned filterbank, log; loud clips are scaled."""

    def __init__(self):
        super().__init__()
        self.bank = rt.nn.Linear(5, 3, bias_attr=False)
        self.window = rt.to_tensor(np.hanning(8))

    def forward(self, wave):
        spec = rt.signal.stft(wave, n_fft=8, hop_length=4, window=self.window)
        power = rt.real(spec) ** 2 + rt.imag(spec) ** 2  # [B, 5, frames]
        if power.mean() > 2.0:
            power = power * 0.5
        feats = self.bank(power.transpose([0, 2, 1]))
        return rt.log(feats * feats + 1e-3)


def _front_end_ref(model, wave):
    spec = stft_ref(wave, 8, 4, np.hanning(8))
    power = np.abs(spec) ** 2
    if power.mean() > 2.0:
        power = power * 0.5
    feats = power.transpose(0, 2, 1) @ model.bank.weight.numpy()
    return np.log(feats ** 2 + 1e-3)


def test_front_end_eager_static_numpy_on_both_branches_and_gradients():
    rt.seed(0)
    model = LogPowerFrontEnd()
    model.to(dtype="float64")
    static = d2s.to_static(LogPowerFrontEnd())
    static.to(dtype="float64")
    static.bank.weight.set_value(model.bank.weight.numpy())
    rng = np.random.default_rng(2)
    for scale in (3.0, 0.3):  # loud and quiet: both branches of the converted `if`
        wave = scale * rng.standard_normal((2, 16))
        want = _front_end_ref(model, wave)
        np.testing.assert_allclose(model(rt.to_tensor(wave)).numpy(), want, rtol=1e-10)
        np.testing.assert_allclose(static(rt.to_tensor(wave)).numpy(), want, rtol=1e-10)
        x = rt.to_tensor(wave, stop_gradient=False)
        weights = rng.standard_normal(want.shape)
        (model(x) * rt.to_tensor(weights)).sum().backward()
        numeric = np.zeros_like(wave)
        for i in np.ndindex(wave.shape):
            step = np.zeros_like(wave)
            step[i] = 1e-6
            numeric[i] = ((_front_end_ref(model, wave + step) * weights).sum()
                          - (_front_end_ref(model, wave - step) * weights).sum()) / 2e-6
        np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_argument_errors_name_the_function_and_the_value():
    x = rt.ones([32])
    with pytest.raises(ValueError, match=r"stft: win_length must be in \(0, n_fft=8\], got 9"):
        rt.signal.stft(x, 8, win_length=9)
    with pytest.raises(ValueError, match=r"stft: window has shape \[5\]; it must be"):
        rt.signal.stft(x, 8, window=rt.ones([5]))
    with pytest.raises(ValueError, match="stft: x must be a real signal"):
        rt.signal.stft(rt.complex(x, x), 8)
    spec = rt.signal.stft(x, 8)
    with pytest.raises(ValueError, match=r"istft: x has 5 frequency bins; n_fft=16"):
        rt.signal.istft(spec, 16)
    with pytest.raises(ValueError, match="istft: return_complex=True is not supported"):
        rt.signal.istft(spec, 8, return_complex=True)
    unknown_length = d2s.to_static(lambda w: rt.real(rt.signal.stft(w, 8)),
                                   input_spec=[d2s.InputSpec([None, None], "float32")])
    with pytest.raises(ValueError, match=r"stft: x has shape \[-1, -1\]; the number of "
                                         r"samples must be known"):
        unknown_length(rt.ones([2, 32]))
    known_length = d2s.to_static(lambda w: rt.real(rt.signal.stft(w, 8)),
                                 input_spec=[d2s.InputSpec([None, 32], "float32")])
    for batch in (1, 3):
        wave = rt.randn([batch, 32])
        np.testing.assert_allclose(known_length(wave).numpy(),
                                   rt.real(rt.signal.stft(wave, 8)).numpy(), atol=1e-5)
