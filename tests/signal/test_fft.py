"""`rt.fft` beyond the OpInfos (tests/ops/opinfo_spectral.py): frequencies against NumPy, a
power spectrum feature eager vs `d2s.to_static` on both branches with gradients against
finite differences, and a clear error where a real-number op meets a complex gradient."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.ops.registry import OpTypeError


@pytest.mark.parametrize("n, d", [(1, 1.0), (4, 0.5), (7, 0.1), (8, 2.0)])
def test_frequencies_match_numpy(n, d):
    np.testing.assert_allclose(rt.fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(rt.fft.rfftfreq(n, d).numpy(), np.fft.rfftfreq(n, d),
                               rtol=1e-6)
    assert rt.fft.fftfreq(n, d).dtype == rt.float32
    assert rt.fft.rfftfreq(n, d, dtype="float64").dtype == rt.float64


def band_energy(signal, cutoff):
    """Energy of the spectrum below (or, for small cutoffs, above) `cutoff` Hz at 16 Hz."""
    spectrum = rt.fft.rfft(signal, norm="ortho")
    power = rt.real(spectrum) ** 2 + rt.imag(spectrum) ** 2
    freqs = rt.fft.rfftfreq(signal.shape[-1], d=1.0 / 16)
    if cutoff > 5.0:
        keep = rt.cast(freqs < cutoff, power.dtype)
    else:
        keep = rt.cast(freqs >= cutoff, power.dtype)
    return (power * keep).sum(axis=-1)


def _band_energy_ref(signal, cutoff):
    power = np.abs(np.fft.rfft(signal, norm="ortho")) ** 2
    freqs = np.fft.rfftfreq(signal.shape[-1], 1.0 / 16)
    return (power * ((freqs < cutoff) if cutoff > 5 else (freqs >= cutoff))).sum(-1)


def test_power_spectrum_feature_eager_static_numpy_and_gradients():
    static = d2s.to_static(band_energy)
    rng = np.random.default_rng(0)
    signal = rng.standard_normal((2, 8))
    for cutoff in (7.0, 3.0):
        want = _band_energy_ref(signal, cutoff)
        eager = band_energy(rt.to_tensor(signal), rt.to_tensor(cutoff))
        converted = static(rt.to_tensor(signal), rt.to_tensor(cutoff))
        np.testing.assert_allclose(eager.numpy(), want, rtol=1e-12)
        np.testing.assert_allclose(converted.numpy(), want, rtol=1e-12)
        x = rt.to_tensor(signal, stop_gradient=False)
        band_energy(x, rt.to_tensor(cutoff)).sum().backward()
        numeric = np.zeros_like(signal)
        for i in np.ndindex(signal.shape):
            step = np.zeros_like(signal)
            step[i] = 1e-6
            numeric[i] = (_band_energy_ref(signal + step, cutoff).sum()
                          - _band_energy_ref(signal - step, cutoff).sum()) / 2e-6
        np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_complex_results_of_real_number_ops_refuse_gradients_clearly():
    x = rt.to_tensor(np.ones(4), stop_gradient=False)
    spectrum = rt.fft.fft(x)
    with pytest.raises(OpTypeError, match=r"multiply: its result is complex and needs a "
                                          r"gradient, but only rt.real, rt.imag"):
        spectrum * spectrum
    with rt.no_grad():  # values alone are NumPy's
        np.testing.assert_allclose((spectrum * spectrum).numpy(), np.fft.fft(np.ones(4)) ** 2)


def test_inverse_of_forward_is_the_identity_for_every_norm():
    x = np.random.default_rng(1).standard_normal((3, 6))
    for norm in ("backward", "forward", "ortho"):
        back = rt.fft.irfft(rt.fft.rfft(rt.to_tensor(x), norm=norm), n=6, norm=norm)
        np.testing.assert_allclose(back.numpy(), x, atol=1e-12)
        z = rt.fft.ifft(rt.fft.fft(rt.to_tensor(x), norm=norm), norm=norm)
        np.testing.assert_allclose(rt.real(z).numpy(), x, atol=1e-12)
        np.testing.assert_allclose(rt.imag(z).numpy(), 0, atol=1e-12)
