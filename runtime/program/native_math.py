"""C math functions of d2s's own for the generated kernels, where the C library's are slower.

`d2s_tanhf`: float32 tanh as a rational function, tanh(x) ~ c P(c^2) / Q(c^2) with c = x
clamped to [-9, 9] (tanh(9) rounds to 1 in float32), P and Q of degree 4. The coefficients
were fitted in float64 to the relative error on [0, 9] (Sanathanan-Koerner iterations of
linear least squares on Chebyshev points, then Lawson reweighting toward the minimax): 2.1e-8
at most in exact arithmetic; evaluated in float32 (Horner, with multiply-adds where the CPU has
them), 5.6 units in the last place at most against the float64 tanh (6.05 without them) (`tests/static/test_native_math.py`; NumPy's own
float32 tanh: 1.4, glibc's vector `tanhf`: 1.0).

Why: GELU (tanh form) on [2048, 1024] float32 as one fused C loop took 7.2 ms with glibc's
vector `tanhf` (libmvec, 4 lanes here) against 5.5 ms with this function, in the same run;
the tanh alone 4.8 ms against 3.4 ms (`docs/performance.md`). It has no call and no branch,
so the loop around it vectorises whole: the clamp works on the bits with integer selects, as
a float comparison would become a branch (gcc keeps comparisons that may raise a
floating-point exception out of if-conversion) and fminf is a call. It raises no
floating-point exception for a finite input but underflow for |x| below about 1e-19 (the
caller then runs the NumPy code, as for any raised flag); NaN stays NaN, -0.0 stays -0.0,
+-inf give +-1.

The functions are deterministic (the same bits on every call and in every process with the
same compiler flags) but not NumPy's bits, so a run calling them is compiled before its
first call, as every run with exp, log, tanh, sin or cos is (`native_build.py`).
"""
from __future__ import annotations

_TANH_P = (0.9999999795645337, 0.13381039285279114, 0.0034956038595384416,
           2.0609322783925015e-05, 1.3354960776146285e-08)
_TANH_Q = (1.0, 0.4671435490670559, 0.02587704326690396, 0.00032856597460943505,
           7.776687937534332e-07)
_NINE = 0x41100000  # the bits of 9.0f
_INF = 0x7F800000  # the bits of inf: above it, NaN


def _horner(coefficients, var: str) -> str:
    text = f"{coefficients[-1]!r}f"
    for c in reversed(coefficients[:-1]):
        text = f"D2S_FMAF({var}, {text}, {c!r}f)"
    return text


# a multiply-add rounded once where the CPU has it (one instruction; the bits depend on the
# build, which the cache key names), else a multiply and an add
FMAF = """#ifndef D2S_FMAF
#ifdef __FMA__
#define D2S_FMAF(a, b, c) fmaf(a, b, c)
#else
#define D2S_FMAF(a, b, c) ((a) * (b) + (c))
#endif
#endif"""

TANHF = FMAF + f"""
static inline float d2s_tanhf(float x) {{
    uint32_t b, a, m;
    float c;
    memcpy(&b, &x, 4);
    a = b & 0x7fffffffu;
    m = a > {_INF:#x}u ? a : (a < {_NINE:#x}u ? a : {_NINE:#x}u);
    m |= b & 0x80000000u;
    memcpy(&c, &m, 4);
    const float s = c * c;
    return (c * {_horner(_TANH_P, "s")}) / {_horner(_TANH_Q, "s")};
}}"""

# (op, C type) -> (the C function's name, its definition)
OWN_FUNCTIONS = {("tanh", "float"): ("d2s_tanhf", TANHF)}
