"""C math functions of d2s's own for the generated kernels, where the C library's are slower or
missing (erf, sigmoid and GELU as one function each).

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

`d2s_erff`: float32 erf as c P(c^2) / Q(c^2) with c = x clamped to [-3.925, 3.925] (erf(3.925)
rounds to 1 in float32), P and Q of degree 5, fitted as tanh's to the relative error on
[0, 3.925]: 1.9e-8 at most in exact arithmetic; evaluated in float32, 5.98 units in the last
place at most against float64 erf (at x = 3.745, where the unit is 6e-8; the mean 0.66), the
result clamped to [-1, 1] on the bits (the rational overshoots 1 by an ulp near the end).
NaN stays NaN, -0.0 stays -0.0, +-inf give +-1. Exact GELU on [2048, 1024] float32 as one C
loop: 4.9 ms of CPU time against 89 ms for the op's NumPy kernel (Cephes' erf in float32)
and 8.9 ms for JAX's `jit`, one thread (`docs/performance.md`).

`d2s_sigmoid[f]`, `d2s_gelu[f]`, `d2s_gelu_tanh[f]`, `d2s_gelu_grad[f]`,
`d2s_gelu_tanh_grad[f]`: the ops sigmoid, gelu (exact and `approximate=True`) and gelu_grad
(dx from x and dy) as their NumPy kernels compute them (`runtime/ops/math.py`,
`runtime/ops/nn.py`): the same correctly rounded operations in the same order, with erf and
tanh from the functions above in float32 and from the C library in float64, exp from the C
library (glibc's vector `expf` where linked). The sign test of sigmoid reads the sign bit
(an integer select): a float comparison raises on NaN and keeps the branch.

The functions are deterministic (the same bits on every call and in every process with the
same compiler flags) but not NumPy's bits, so a run calling them is compiled before its
first call, as every run with exp, log, tanh, sin or cos is (`native_build.py`).
`tests/static/test_native_math.py` and `tests/static/test_native_gelu.py` check them.
"""
from __future__ import annotations

import math

import numpy as np

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


# erf(x) ~ c P(c^2) / Q(c^2), c = x clamped to [-3.925, 3.925] (erf(3.925) rounds to 1)
_ERF_P = (1.1283791457500054, 0.19059541453894907, 0.05276950986473782,
          0.0037726193265851956, 0.0002848447428768601, 2.0460099426633516e-06)
_ERF_Q = (1.0, 0.5022435184368568, 0.11418340037454684, 0.014983336518394471,
          0.0011638739264157117, 3.8047657578123284e-05)
_ERF_END = 0x407B3333  # the bits of 3.925f
_ONE = 0x3F800000  # the bits of 1.0f

ERFF = FMAF + f"""
static inline float d2s_erff(float x) {{
    uint32_t b, a, m;
    float c, y;
    memcpy(&b, &x, 4);
    a = b & 0x7fffffffu;
    m = a > {_INF:#x}u ? a : (a < {_ERF_END:#x}u ? a : {_ERF_END:#x}u);
    m |= b & 0x80000000u;
    memcpy(&c, &m, 4);
    const float s = c * c;
    y = (c * {_horner(_ERF_P, "s")}) / {_horner(_ERF_Q, "s")};
    memcpy(&b, &y, 4);
    a = b & 0x7fffffffu;
    m = a > {_INF:#x}u ? a : (a < {_ONE:#x}u ? a : {_ONE:#x}u);
    m |= b & 0x80000000u;
    memcpy(&y, &m, 4);
    return y;
}}"""


def _c(v: float, T: str) -> str:
    """`v` rounded to `T` as NumPy rounds a Python float next to an array of that dtype."""
    return f"(({T}){float(np.float32(v)).hex() if T == 'float' else float(v).hex()})"


def _composed(T: str) -> dict:
    """sigmoid and the two GELUs of the C type `T`, as the NumPy kernels of `runtime/ops/nn.py`
    compute them: the same operations in the same order (each correctly rounded, nothing
    contracted), with erf and tanh from `erf_fn` and `tanh_fn`."""
    f, U = ("f", "uint32_t") if T == "float" else ("", "uint64_t")
    erf_fn, tanh_fn = ("d2s_erff", "d2s_tanhf") if T == "float" else ("erf", "tanh")
    half, one = _c(0.5, T), _c(1.0, T)
    # exp(-|x|) never overflows; x >= 0: 1 / (1 + e), else e / (1 + e). The sign is read from
    # the bits (an integer select: a float comparison would raise on NaN and keep the branch)
    sigmoid = f"""
static inline {T} d2s_sigmoid{f}({T} x) {{
    const {T} e = exp{f}(-fabs{f}(x)), one = {one};
    {U} b, n, i;
    {T} num;
    memcpy(&b, &x, sizeof b);
    memcpy(&n, &e, sizeof n);
    memcpy(&i, &one, sizeof i);
    n = (b >> {8 * (4 if T == "float" else 8) - 1}) ? n : i;
    memcpy(&num, &n, sizeof num);
    return num / (one + e);
}}"""
    gelu = f"""
static inline {T} d2s_gelu{f}({T} x) {{
    return ({half} * x) * ({one} + {erf_fn}(x * {_c(1 / math.sqrt(2), T)}));
}}"""
    gelu_tanh = f"""
static inline {T} d2s_gelu_tanh{f}({T} x) {{
    const {T} inner = {_c(math.sqrt(2 / math.pi), T)} * (x + (({_c(0.044715, T)} * x) * x) * x);
    return ({half} * x) * ({one} + {tanh_fn}(inner));
}}"""
    own_erf = [("erf", "float")] if T == "float" else ["erf"]
    own_tanh = [("tanh", "float")] if T == "float" else ["tanh"]
    return {("sigmoid", T): (f"d2s_sigmoid{f}", sigmoid, ("exp",)),
            ("gelu", T): (f"d2s_gelu{f}", gelu, own_erf),
            ("gelu_tanh", T): (f"d2s_gelu_tanh{f}", gelu_tanh, own_tanh),
            **_gelu_gradients(T, f, erf_fn, tanh_fn, own_erf, own_tanh)}


def _gelu_gradients(T: str, f: str, erf_fn: str, tanh_fn: str, own_erf, own_tanh) -> dict:
    """GELU's gradients dx from (x, dy), exact and tanh form, as `runtime/ops/nn.py`'s
    `_gelu_derivative` computes them: one function each, reading nothing but x and dy."""
    half, one = _c(0.5, T), _c(1.0, T)
    k = _c(math.sqrt(2 / math.pi), T)
    exact = f"""
static inline {T} d2s_gelu_grad{f}({T} x, {T} dy) {{
    const {T} cdf = {half} * ({one} + {erf_fn}(x * {_c(1 / math.sqrt(2), T)}));
    return dy * (cdf + (x * exp{f}(({_c(-0.5, T)} * x) * x)) * {_c(1 / math.sqrt(2 * math.pi), T)});
}}"""
    tanh_form = f"""
static inline {T} d2s_gelu_tanh_grad{f}({T} x, {T} dy) {{
    const {T} t = {tanh_fn}({k} * (x + (({_c(0.044715, T)} * x) * x) * x));
    return dy * ({half} * ({one} + t) + ((({half} * x) * ({one} - t * t)) * {k}) *
                 ({one} + ({_c(3 * 0.044715, T)} * x) * x));
}}"""
    return {("gelu_grad", T): (f"d2s_gelu_grad{f}", exact, [*own_erf, "exp"]),
            ("gelu_tanh_grad", T): (f"d2s_gelu_tanh_grad{f}", tanh_form, own_tanh)}


ERF_DOUBLE = """
static inline double d2s_erf(double x) { return erf(x); }"""

# (op, C type) -> (the C function's name, its definition, what it calls: other own functions
# as (op, C type), library functions by name (declared as vector functions where available))
OWN_FUNCTIONS = {("tanh", "float"): ("d2s_tanhf", TANHF, ()),
                 ("erf", "float"): ("d2s_erff", ERFF, ()),
                 ("erf", "double"): ("d2s_erf", ERF_DOUBLE, ()),
                 **_composed("float"), **_composed("double")}


def own_functions_used(types, T: str) -> tuple:
    """(definitions of the own functions that ops `types` of C type `T` need, callees first;
    the library functions they call)."""
    order, library = [], set()

    def need(key):
        if key in order:
            return
        for callee in OWN_FUNCTIONS[key][2]:
            if callee.__class__ is tuple:
                need(callee)
            else:
                library.add(callee)
        order.append(key)

    for t in sorted(types):
        if (t, T) in OWN_FUNCTIONS:
            need((t, T))
    return [OWN_FUNCTIONS[k][1] for k in order], library
