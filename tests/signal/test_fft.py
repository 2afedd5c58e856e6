"""`rt.fft.fftfreq` / `rfftfreq` against NumPy, eager and inside converted code; the complex
transforms (`rt.fft.fft/ifft/rfft/irfft`, `rt.signal.stft/istft`) refuse clearly, also at the
user's line inside `d2s.to_static`, because the runtime has no complex dtype."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.fft import ComplexUnsupported


@pytest.mark.parametrize("n, d", [(1, 1.0), (4, 0.5), (7, 0.1), (8, 2.0)])
def test_frequencies_match_numpy(n, d):
    np.testing.assert_allclose(rt.fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(rt.fft.rfftfreq(n, d).numpy(), np.fft.rfftfreq(n, d),
                               rtol=1e-6)
    assert rt.fft.fftfreq(n, d).dtype == rt.float32
    assert rt.fft.rfftfreq(n, d, dtype="float64").dtype == rt.float64


def test_frequencies_inside_converted_code_pick_bins_by_value():
    @d2s.to_static
    def band_energy(power, cutoff):
        freqs = rt.fft.rfftfreq(8, d=1.0 / 16)  # 0, 2, 4, ..., 16 Hz
        if cutoff > 5.0:
            keep = rt.cast(freqs < cutoff, power.dtype)
        else:
            keep = rt.cast(freqs >= cutoff, power.dtype)
        return (power * keep).sum(axis=-1)

    power = np.random.default_rng(0).random((2, 5)).astype(np.float32)
    freqs = np.fft.rfftfreq(8, 1.0 / 16)
    for cutoff in (7.0, 3.0):
        want = (power * ((freqs < cutoff) if cutoff > 5 else (freqs >= cutoff))).sum(-1)
        got = band_energy(rt.to_tensor(power), rt.to_tensor(cutoff))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("function, args", [
    (rt.fft.fft, ()), (rt.fft.ifft, ()), (rt.fft.rfft, ()), (rt.fft.irfft, ()),
    (rt.signal.stft, (4,)), (rt.signal.istft, (4,))])
def test_complex_transforms_refuse_with_the_reason(function, args):
    with pytest.raises(ComplexUnsupported, match=r"no complex dtype \(complex64/complex128\)"):
        function(rt.ones([8]), *args)


def test_refusal_inside_converted_code_names_the_users_line():
    @d2s.to_static
    def spectrum(x):
        return rt.fft.rfft(x)

    with pytest.raises(ComplexUnsupported) as info:
        spectrum(rt.ones([8]))
    assert "rt.fft.rfft: Paddle's result (or input) is a complex tensor" in str(info.value)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "test_fft.py" in notes and "return rt.fft.rfft(x)" in notes
