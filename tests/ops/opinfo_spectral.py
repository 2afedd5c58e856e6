"""OpInfos for complex tensors (`rt.complex`, `rt.real`, `rt.imag`) and `rt.fft` against
`numpy.fft`. Complex values enter as real and imaginary float arrays and leave as their
parts, so values, finite-difference gradients (which check the complex gradient convention
end to end) and static vs eager all run through the generic harness."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime as rt

_TOL = {"float32": 1e-4, "float64": 1e-10}


def _parts(z):
    return rt.real(z), rt.imag(z)


def _np_parts(z):
    return z.real, z.imag


def _complex_fn(transform):
    return lambda re, im, **kw: _parts(transform(rt.complex(re, im), **kw))


def _complex_ref(transform):
    return lambda re, im, **kw: _np_parts(transform(re + 1j * im, **kw))


def _pair_samples(rng):
    return [Sample((randn(rng, 8), randn(rng, 8))),
            Sample((randn(rng, 3, 5), randn(rng, 3, 5)), {"axis": 0}),
            Sample((randn(rng, 2, 7), randn(rng, 2, 7)), {"n": 5, "norm": "ortho"}),
            Sample((randn(rng, 2, 4), randn(rng, 2, 4)), {"n": 6, "norm": "forward"})]


def _real_samples(rng):
    return [Sample((randn(rng, 8),)), Sample((randn(rng, 3, 5),), {"axis": 0}),
            Sample((randn(rng, 2, 7),), {"n": 4, "norm": "ortho"}),
            Sample((randn(rng, 2, 5),), {"n": 9, "norm": "forward"})]


def _half_spectrum_samples(rng):
    return [Sample((randn(rng, 5), randn(rng, 5))),  # 8 samples
            Sample((randn(rng, 2, 4), randn(rng, 2, 4)), {"n": 7}),
            Sample((randn(rng, 4, 3), randn(rng, 4, 3)), {"axis": 0, "norm": "ortho"}),
            Sample((randn(rng, 2, 6), randn(rng, 2, 6)), {"n": 6, "norm": "forward"})]


OPINFOS = [
    OpInfo("complex", lambda re, im: _parts(rt.complex(re, im)), lambda re, im: (re, im),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4)))], covers=("real", "imag"),
           error_samples=[
               ErrorSample((np.ones(3), np.ones(4)), {}, ValueError,
                           r"complex: real is float64\[3\] but imag is float64\[4\]"),
               ErrorSample((np.ones(3, np.int64), np.ones(3, np.int64)), {}, TypeError,
                           r"complex: real has dtype int64; it must be float32 or float64")]),
    OpInfo("fft_c2c", _complex_fn(rt.fft.fft), _complex_ref(np.fft.fft), _pair_samples,
           rtol=_TOL, atol=_TOL, error_samples=[
               ErrorSample((np.ones(4), np.ones(4)), {"norm": "none"}, ValueError,
                           r"rt.fft.fft: norm must be one of \('backward', 'forward', "
                           r"'ortho'\), got 'none'")]),
    OpInfo("ifft", _complex_fn(rt.fft.ifft), _complex_ref(np.fft.ifft), _pair_samples,
           rtol=_TOL, atol=_TOL),
    OpInfo("fft_r2c", lambda x, **kw: _parts(rt.fft.rfft(x, **kw)),
           lambda x, **kw: _np_parts(np.fft.rfft(x, **kw)), _real_samples, rtol=_TOL, atol=_TOL,
           error_samples=[ErrorSample((np.ones(4),), {"n": 0}, ValueError,
                                      r"rt.fft.rfft: n must be at least 1, got 0")]),
    OpInfo("fft_c2r", lambda re, im, **kw: rt.fft.irfft(rt.complex(re, im), **kw),
           lambda re, im, **kw: np.fft.irfft(re + 1j * im, **kw), _half_spectrum_samples,
           rtol=_TOL, atol=_TOL, covers=("fft_c2r_grad",)),
]
