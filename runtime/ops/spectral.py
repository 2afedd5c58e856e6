"""Complex numbers and Fourier transforms: `real`, `imag`, `complex`, and the three FFT ops
(`fft_c2c`, `fft_r2c`, `fft_c2r`) behind `rt.fft` and `rt.signal`.

Gradients of complex values follow Paddle's (and PyTorch's) convention: the gradient of a real
loss L with respect to z = a + ib is dL/da + i dL/db. With it, a linear map y = s A x (A the
DFT matrix, s the `norm` scale) has the gradient s A^H g, which is the inverse transform of g
under the dual norm ('backward' <-> 'forward', 'ortho' <-> 'ortho'). Each op transforms
`fit_n(x)` (x padded with zeros or cut to `n` along `axis`) and fits its result to `out_len`;
the transpose of a fit is the fit back, so the gradient of `fft_c2c` is `fft_c2c` again, and
the family closes under differentiation except for `fft_c2r_grad` (no second derivative).

Only these ops (and ops that only move elements: transpose, reshape, indexing, gather)
differentiate through complex tensors: any other op that makes a complex
result that needs a gradient raises (`check_complex_grad`), because its rule was written for
real numbers and would give a silently wrong gradient. Take `real` / `imag` first.
"""
from __future__ import annotations

from ..dtypes import complex64, complex128, float32, float64
from . import infer as I
from .creation import zeros_like
from .registry import Meta, OpError, OpTypeError, bind, register

NORMS = ("backward", "forward", "ortho")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_REAL_OF = {complex64: float32, complex128: float64}
_COMPLEX_OF = {float32: complex64, float64: complex128}
COMPLEX_NP = frozenset((complex64.np, complex128.np))  # what autograd records gradients of

# The ops above, and ops that only move elements of one tensor (their gradients move them
# back, which holds for complex values as for real ones).
COMPLEX_GRAD_OPS = frozenset((
    "real", "imag", "complex", "fft_c2c", "fft_r2c", "fft_c2r", "fft_c2r_grad",
    "transpose", "reshape", "reshape_as", "squeeze", "unsqueeze", "flatten", "getitem",
    "getitem_grad", "gather", "gather_grad"))


def check_complex_grad(op: str) -> bool:
    """True for ops whose gradient rules handle complex values; raises for any other op."""
    if op not in COMPLEX_GRAD_OPS:
        raise OpTypeError(
            f"{op}: its result is complex and needs a gradient, but only rt.real, rt.imag, "
            "rt.complex, the rt.fft / rt.signal transforms and ops that only move elements "
            "(reshape, transpose, indexing) differentiate through complex tensors; take "
            f"rt.real / rt.imag of the complex tensor before {op}")
    return True


# ---- real / imag / complex -------------------------------------------------------------------

def _complex_only(op):
    def rule(x):
        I.check_tensor(op, "x", x)
        if not x.dtype.is_complex:
            raise OpTypeError(f"{op}: x has dtype {x.dtype.name}; it must be complex64 or "
                              "complex128")
        return Meta(x.shape, _REAL_OF[x.dtype])
    return rule


def _complex_infer(real, imag):
    for arg, m in (("real", real), ("imag", imag)):
        I.check_tensor("complex", arg, m)
        if m.dtype not in _COMPLEX_OF:
            raise OpTypeError(f"complex: {arg} has dtype {m.dtype.name}; it must be float32 or "
                              "float64")
    if real.dtype != imag.dtype or tuple(real.shape) != tuple(imag.shape):
        raise OpError(f"complex: real is {real.dtype.name}{I.fmt(real.shape)} but imag is "
                      f"{imag.dtype.name}{I.fmt(imag.shape)}; they must match")
    return Meta(real.shape, _COMPLEX_OF[real.dtype])


REAL = register("real", kernel=lambda xp, x: xp.ascontiguousarray(x.real),
                infer=_complex_only("real"), amp="keep",
                grad=lambda ins, outs, gs, a: [complex(gs[0], zeros_like(gs[0]))],
                doc="The real part of a complex tensor.")
IMAG = register("imag", kernel=lambda xp, x: xp.ascontiguousarray(x.imag),
                infer=_complex_only("imag"), amp="keep",
                grad=lambda ins, outs, gs, a: [complex(zeros_like(gs[0]), gs[0])],
                doc="The imaginary part of a complex tensor.")
COMPLEX = register("complex", kernel=lambda xp, re, im: re + 1j * im.astype(
                       _COMPLEX_OF_NP[re.dtype]), infer=_complex_infer, amp="keep",
                   grad=lambda ins, outs, gs, a: [real(gs[0]), imag(gs[0])],
                   doc="real + i * imag.")


def real(x, name=None):
    """The real part of complex `x` (float32 for complex64, float64 for complex128)."""
    return bind(REAL, (x,), {})


def imag(x, name=None):
    """The imaginary part of complex `x`."""
    return bind(IMAG, (x,), {})


def complex(real, imag, name=None):
    """The complex tensor real + i * imag (float32 -> complex64, float64 -> complex128).

    >>> import runtime as rt
    >>> z = rt.complex(rt.to_tensor([1.0]), rt.to_tensor([2.0]))
    >>> z.dtype, rt.imag(z).tolist()
    (rt.complex64, [2.0])
    """
    return bind(COMPLEX, (real, imag), {})


# ---- Fourier transforms ----------------------------------------------------------------------

def _fit(xp, a, length, axis):
    """`a` cut to, or padded with zeros to, `length` along `axis`."""
    size = a.shape[axis]
    if length is None or length == size:
        return a
    if length < size:
        return xp.take(a, xp.arange(length), axis=axis)
    pad = [(0, 0)] * a.ndim
    pad[axis] = (0, length - size)
    return xp.pad(a, pad)


def _c2c_kernel(xp, x, n=None, axis=-1, norm="backward", forward=True, out_len=None):
    transform = xp.fft.fft if forward else xp.fft.ifft
    y = transform(x, n=n, axis=axis, norm=norm)
    return _fit(xp, y, out_len, axis).astype(x.dtype, copy=False)


def _r2c_kernel(xp, x, n=None, axis=-1, norm="backward"):
    return xp.fft.rfft(x, n=n, axis=axis, norm=norm).astype(_COMPLEX_OF_NP[x.dtype], copy=False)


def _c2r_kernel(xp, x, n=None, axis=-1, norm="backward"):
    return xp.fft.irfft(x, n=n, axis=axis, norm=norm).astype(_REAL_OF_NP[x.dtype], copy=False)


def _c2r_grad_kernel(xp, g, x, n=None, axis=-1, norm="backward"):
    """d/dx of sum(g * irfft(x, n)): t * c_k * rfft(g)_k, with t the inverse's scale and c_k 2
    for the bins that stand for two (conjugate) bins of the full spectrum, 1 for the others."""
    size = g.shape[axis]
    scale = {"backward": 1.0 / size, "forward": 1.0, "ortho": size ** -0.5}[norm]
    twice = xp.full(size // 2 + 1, 2.0)
    twice[0] = 1.0
    if size % 2 == 0:
        twice[-1] = 1.0
    shape = [1] * g.ndim
    shape[axis] = -1
    spectrum = xp.fft.rfft(g, axis=axis) * (scale * twice).reshape(shape)
    return _fit(xp, spectrum, x.shape[axis], axis).astype(x.dtype, copy=False)


def _fft_infer(op, want_complex, out_dtype):
    def rule(x, n=None, axis=-1, norm="backward", forward=True, out_len=None):
        I.check_tensor(op, "x", x)
        if want_complex and not x.dtype.is_complex:
            raise OpTypeError(f"{op}: x has dtype {x.dtype.name}; it must be complex")
        if not want_complex and x.dtype not in _COMPLEX_OF:
            raise OpTypeError(f"{op}: x has dtype {x.dtype.name}; it must be float32 or "
                              "float64")
        if norm not in NORMS:
            raise OpError(f"{op}: norm must be one of {NORMS}, got {norm!r}")
        ax = I.norm_axis(op, axis, len(x.shape))
        if n is not None and n < 1:
            raise OpError(f"{op}: n must be at least 1, got {n}")
        shape = list(x.shape)
        size = n if n is not None else shape[ax]
        if op == "fft_r2c":
            size = size // 2 + 1 if size >= 0 else -1
        elif op == "fft_c2r" and n is None:
            size = 2 * (shape[ax] - 1) if shape[ax] >= 0 else -1
        shape[ax] = out_len if out_len is not None else size
        return Meta(tuple(shape), out_dtype(x.dtype))
    return rule


def _c2c_grad(ins, outs, gs, a):
    x = ins[0]
    size = a.get("n") or x.shape[a.get("axis", -1)]
    return [bind(FFT_C2C, (gs[0],), {
        "n": size, "axis": a.get("axis", -1), "norm": _DUAL[a.get("norm", "backward")],
        "forward": not a.get("forward", True), "out_len": x.shape[a.get("axis", -1)]})]


def _r2c_grad(ins, outs, gs, a):
    x = ins[0]
    axis = a.get("axis", -1)
    size = a.get("n") or x.shape[axis]
    return [real(bind(FFT_C2C, (gs[0],), {
        "n": size, "axis": axis, "norm": _DUAL[a.get("norm", "backward")], "forward": False,
        "out_len": x.shape[axis]}))]


FFT_C2C = register("fft_c2c", kernel=_c2c_kernel,
                   infer=_fft_infer("fft_c2c", True, lambda d: d), grad=_c2c_grad, amp="keep",
                   doc="fft (forward) or ifft of complex x along axis (see module).")
FFT_R2C = register("fft_r2c", kernel=_r2c_kernel,
                   infer=_fft_infer("fft_r2c", False, lambda d: _COMPLEX_OF[d]),
                   grad=_r2c_grad, amp="keep", doc="rfft of real x: the n // 2 + 1 bins.")
FFT_C2R_GRAD = register(
    "fft_c2r_grad", kernel=_c2r_grad_kernel,
    infer=lambda g, x, **a: Meta(x.shape, x.dtype), amp="keep",
    doc="The gradient of fft_c2r with respect to its complex input (no gradient of its own).")
FFT_C2R = register("fft_c2r", kernel=_c2r_kernel,
                   infer=_fft_infer("fft_c2r", True, lambda d: _REAL_OF[d]), amp="keep",
                   grad=lambda ins, outs, gs, a: [bind(FFT_C2R_GRAD, (gs[0], ins[0]), a)],
                   doc="irfft of a half spectrum: a real signal of n samples.")

_COMPLEX_OF_NP = {d.np: c.np for d, c in _COMPLEX_OF.items()}
_REAL_OF_NP = {c.np: d.np for c, d in _REAL_OF.items()}


def fft_c2c(x, n=None, axis: int = -1, norm: str = "backward", forward: bool = True):
    return bind(FFT_C2C, (x,), {"n": n, "axis": axis, "norm": norm, "forward": forward})


def fft_r2c(x, n=None, axis: int = -1, norm: str = "backward"):
    return bind(FFT_R2C, (x,), {"n": n, "axis": axis, "norm": norm})


def fft_c2r(x, n=None, axis: int = -1, norm: str = "backward"):
    return bind(FFT_C2R, (x,), {"n": n, "axis": axis, "norm": norm})

