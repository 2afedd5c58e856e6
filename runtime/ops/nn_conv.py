"""2-D convolution (NCHW) as im2col + one batched matmul, and its transpose.

Three ops are the three faces of one bilinear map, each the gradient of the others, so any
order of derivative is available:

- `conv2d(x, w)`                       forward convolution
- `conv2d_grad_input(g, w, x)`         its adjoint in x (col2im); x only gives the shape
- `conv2d_grad_filter(x, g, w)`        its adjoint in w; w only gives the shape

`conv2d_transpose(x, w)` is the same col2im as `conv2d_grad_input`, with the output size
computed from attrs instead of taken from a tensor. Attrs: `stride` and `dilation` are pairs,
`padding` is [top, bottom, left, right] or 'SAME'/'VALID' (resolved when the kernel runs, when
the spatial size is known), `groups` an int (groups == channels is depthwise).
"""
from __future__ import annotations

from .. import backend, core
from . import conv_cudnn
from . import infer as I
from .nn import check_dtypes_match, check_float
from .registry import Meta, OpError, OpTypeError, bind, register

# ---- geometry -------------------------------------------------------------------------------


def resolve_padding(padding, size, kernel, stride, dilation):
    """((top, bottom), (left, right)) for explicit, 'SAME' or 'VALID' padding."""
    if padding == "VALID":
        return (0, 0), (0, 0)
    if padding == "SAME":
        pads = []
        for n, k, s, d in zip(size, kernel, stride, dilation):
            out = -(-n // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    return (padding[0], padding[1]), (padding[2], padding[3])


def out_size(n, k, s, p, d, ceil_mode=False):
    """Output length of a sliding window over n (padded by p = (before, after)); -1 stays -1."""
    if n == -1:
        return -1
    span = n + p[0] + p[1] - d * (k - 1) - 1
    return max((-(-span // s) if ceil_mode else span // s) + 1, 0)  # 0: the kernel won't fit


def windows(xp, x, kernel, stride, dilation, pads, out_hw, fill=0):
    """A [N, C, Ho, Wo, kh, kw] strided view of every window of x padded by `pads`."""
    if any(p for pair in pads for p in pair):
        x = xp.pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=fill)
    sn, sc, sh, sw = x.strides
    shape = x.shape[:2] + tuple(out_hw) + tuple(kernel)
    strides = (sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1])
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def col2im(xp, piece, shape, kernel, stride, dilation, pads, out_hw):
    """Scatter-add windows back onto an [A, B, H, W] image (the adjoint of `windows`; the two
    leading dims are N, C or C, N alike).

    `piece(i, j)` is the [A, B, Ho, Wo] contribution of kernel position (i, j)."""
    (pt, pb), (pl, pr) = pads
    n, c, h, w = shape
    out = None
    for i, j in _taps(kernel):
        p = piece(i, j)
        if out is None:
            out = xp.zeros((n, c, h + pt + pb, w + pl + pr), dtype=p.dtype)
        r, q = i * dilation[0], j * dilation[1]
        out[:, :, r:r + stride[0] * (out_hw[0] - 1) + 1:stride[0],
            q:q + stride[1] * (out_hw[1] - 1) + 1:stride[1]] += p
    return out[:, :, pt:pt + h, pl:pl + w]


def _check_padding(op, padding):
    """Checked by the kernels too: eager calls skip shape inference."""
    if padding not in ("SAME", "VALID") and any(p < 0 for p in padding):
        raise OpError(f"{op}: padding must not be negative, got {list(padding)}")


def _geometry(x_shape, w_shape, stride, padding, dilation):
    _check_padding("conv2d", padding)
    kernel = tuple(w_shape[2:])
    pads = resolve_padding(padding, x_shape[2:], kernel, stride, dilation)
    hw = tuple(out_size(n, k, s, p, d)
               for n, k, s, p, d in zip(x_shape[2:], kernel, stride, pads, dilation))
    return kernel, pads, hw


# ---- kernels --------------------------------------------------------------------------------

# C kernels, filled in by runtime/program/conv_native.py ("conv2d", "conv2d_grad_filter",
# "conv2d_grad_input") and conv_depthwise_native.py ("depthwise_conv2d",
# "depthwise_grad_input", "depthwise_grad_filter"; this package may not import the program
# package), each returning None where it does not apply or is not compiled yet, and the
# NumPy code runs.
NATIVE_KERNELS: dict = {}
# the same names, called with `Meta`s (shape, dtype) for the arrays while a program is traced:
# they note which C kernels its first run will ask for, so that they compile together
NATIVE_PLANS: dict = {}


def _native(name, *args):
    """What the C kernel `name` returns (None where it does not apply), or None if none is
    installed."""
    kernel = NATIVE_KERNELS.get(name)
    return None if kernel is None else kernel(*args)


def _padded(xp, x, pads):
    """x inside zero borders: one zeroed buffer and one interior copy (`xp.pad` is slower)."""
    (pt, pb), (pl, pr) = pads
    if not (pt or pb or pl or pr):
        return x
    n, c, h, w = x.shape
    out = xp.zeros((n, c, h + pt + pb, w + pl + pr), dtype=x.dtype)
    out[:, :, pt:pt + h, pl:pl + w] = x
    return out


def _cols(xp, x, kernel, stride, dilation, pads, hw, groups):
    """im2col: [N, G, C/G*kh*kw, Ho*Wo], one strided copy of the padded input.

    Rows are ordered (channel, tap) like the weight's [O, C/G, kh, kw], and each row is one
    image's output pixels, so the copy's inner run is a row of x (contiguous at stride 1) and
    the matmuls against it need no transposes on either side."""
    n, c = x.shape[:2]
    xpad = _padded(xp, x, pads)
    sn, sc, sh, sw = xpad.strides
    shape = (n, c) + tuple(kernel) + tuple(hw)
    strides = (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1])
    cols = xp.ascontiguousarray(xp.lib.stride_tricks.as_strided(xpad, shape, strides))
    return cols.reshape(n, groups, -1, hw[0] * hw[1])


def _depthwise(w, groups):
    """One input channel per group (MobileNet): a loop over kernel taps beats im2col, whose
    matmuls would have an inner dimension of kh*kw."""
    return groups > 1 and w.shape[1] == 1


def _taps(kernel):
    return ((i, j) for i in range(kernel[0]) for j in range(kernel[1]))


def _depthwise_forward(xp, x, w, kernel, stride, dilation, pads, hw, groups):
    n, c = x.shape[:2]
    win = windows(xp, x, kernel, stride, dilation, pads, hw)
    w4 = w.reshape((c, w.shape[0] // groups) + kernel)
    out = xp.zeros((n,) + w4.shape[:2] + tuple(hw), dtype=x.dtype)
    for i, j in _taps(kernel):
        out += win[:, :, None, :, :, i, j] * w4[None, :, :, None, None, i, j]
    return out.reshape((n, w.shape[0]) + tuple(hw))


def _conv2d_kernel(xp, x, w, stride, padding, dilation, groups):
    check_dtypes_match(x, w)
    kernel, pads, hw = _geometry(x.shape, w.shape, stride, padding, dilation)
    out = conv_cudnn.forward(xp, x, w, stride, pads, dilation, groups, hw)  # (GPU: cuDNN)
    if out is not None:
        return out
    if _depthwise(w, groups):
        out = _native("depthwise_conv2d", xp, x, w, stride, pads, dilation, groups)
        return out if out is not None else _depthwise_forward(
            xp, x, w, kernel, stride, dilation, pads, hw, groups)
    return _conv_gemm(xp, x, w, kernel, stride, dilation, pads, hw, groups)


def _conv_gemm(xp, x, w, kernel, stride, dilation, pads, hw, groups):
    """Not depthwise: the C kernel where it applies, else im2col and one GEMM."""
    out = _native("conv2d", xp, x, w, stride, pads, dilation, groups)
    if out is not None:
        return out
    cols = _cols(xp, x, kernel, stride, dilation, pads, hw, groups)
    o = w.shape[0]
    # [G, O/G, C/G*kh*kw] @ [N, G, C/G*kh*kw, Ho*Wo]: one GEMM per image and group whose
    # result is already NCHW; bfloat16 comes back float32
    out = xp.matmul(w.reshape(groups, o // groups, -1), cols).astype(x.dtype, copy=False)
    return out.reshape((x.shape[0], o) + tuple(hw))


def _full_padding(x_hw, out_hw, kernel, dilation, pads):
    """The padding of a stride-1 convolution's output gradient for the flipped-kernel
    convolution that gives its input gradient (negative where the forward padding exceeded
    the dilated kernel)."""
    full = []
    for n, m, k, d, (before, _) in zip(x_hw, out_hw, kernel, dilation, pads):
        top = d * (k - 1) - before
        full.append((top, n - m + d * (k - 1) - top))
    return tuple(full)


def _flipped_padding(x_shape, w_shape, out_hw, stride, pads, dilation):
    """The padding of the flipped-kernel convolution that is the input gradient of a
    stride-1 convolution, or None where that does not apply (a stride, or padding wider
    than the dilated kernel)."""
    full = _full_padding(x_shape[2:], out_hw, tuple(w_shape[2:]), dilation, pads)
    return full if tuple(stride) == (1, 1) and min(min(p) for p in full) >= 0 else None


def _plan_native(kind, x, w, g, stride, padding, dilation, groups):
    """Name to `NATIVE_PLANS` the C kernels that the `kind` op ("forward", "grad_input",
    "grad_filter") of a traced program will call, given the `Meta`s of its input `x`,
    weight `w` and output gradient `g` (None for the forward)."""
    if not NATIVE_PLANS or any(d == -1 for m in (x, w, g) if m is not None for d in m.shape):
        return
    kernel = tuple(w.shape[2:])
    pads = resolve_padding(padding, x.shape[2:], kernel, stride, dilation)
    xp = backend.XP
    if _depthwise(w, groups):
        name, args = {"forward": ("depthwise_conv2d", (x, w)),
                      "grad_input": ("depthwise_grad_input", (g, w, x.shape)),
                      "grad_filter": ("depthwise_grad_filter", (x, g, w.shape))}[kind]
        NATIVE_PLANS[name](xp, *args, stride, pads, dilation, groups)
    elif kind == "forward":
        NATIVE_PLANS["conv2d"](xp, x, w, stride, pads, dilation, groups)
    elif kind == "grad_filter":
        NATIVE_PLANS["conv2d_grad_filter"](xp, x, g, w.shape, stride, pads, dilation, groups)
    else:
        full = _flipped_padding(x.shape, w.shape, g.shape[2:], stride, pads, dilation)
        if full is not None:
            og = w.shape[0] // groups
            flipped = Meta((x.shape[1], og) + kernel, w.dtype)
            NATIVE_PLANS["conv2d"](xp, g, flipped, (1, 1), full, dilation, groups)
        else:
            NATIVE_PLANS["conv2d_grad_input"](xp, g, w, x.shape, stride, pads, dilation,
                                              groups)


def _col2im_conv(xp, g, w, x_shape, stride, padding, dilation, groups):
    """The adjoint of conv2d in x: [N, O, Ho, Wo] grads -> [N, C, H, W]."""
    kernel = tuple(w.shape[2:])
    pads = resolve_padding(padding, x_shape[2:], kernel, stride, dilation)
    n, c = x_shape[:2]
    o, hw = w.shape[0], g.shape[2:]
    if _depthwise(w, groups):
        gx = _native("depthwise_grad_input", xp, g, w, x_shape, stride, pads, dilation, groups)
        if gx is not None:
            return gx
        g5 = g.reshape((n, c, o // c) + tuple(hw))
        w4 = w.reshape((c, o // c) + kernel)
        return col2im(xp, lambda i, j: (g5 * w4[None, :, :, None, None, i, j]).sum(2),
                      x_shape, kernel, stride, dilation, pads, hw)
    og = o // groups
    full = _flipped_padding(x_shape, w.shape, hw, stride, pads, dilation)
    if full is not None:
        # at stride 1 the adjoint is a convolution of g, padded to the "full" size, with the
        # flipped weight whose in/out channels are swapped in each group: im2col + a GEMM
        # with inner dimension O/G*kh*kw, instead of col2im's k*k strided adds
        cg = c // groups
        flipped = w.reshape((groups, og, cg) + kernel).transpose(0, 2, 1, 3, 4)
        flipped = flipped.reshape((c, og) + kernel)[:, :, ::-1, ::-1]
        return _conv_gemm(xp, g, flipped, kernel, (1, 1), dilation, full, x_shape[2:], groups)
    gx = _native("conv2d_grad_input", xp, g, w, x_shape, stride, pads, dilation, groups)
    if gx is not None:
        return gx
    # [G, C/G*kh*kw, O/G] @ [N, G, O/G, Ho*Wo] = the columns' gradient, [N, C, kh, kw, Ho, Wo]
    # (the weight's transpose is a view BLAS reads as is); col2im adds each tap's
    # [N, C, Ho, Wo] block into the padded image
    wt = w.reshape(groups, og, -1).transpose(0, 2, 1)
    d = xp.matmul(wt, g.reshape(n, groups, og, -1)).astype(g.dtype, copy=False)
    d = d.reshape((n, c) + kernel + tuple(hw))
    img = col2im(xp, lambda i, j: d[:, :, i, j], x_shape, kernel, stride, dilation, pads, hw)
    return xp.ascontiguousarray(img)


def _grad_input_kernel(xp, g, w, x, stride, padding, dilation, groups):
    pads = resolve_padding(padding, x.shape[2:], tuple(w.shape[2:]), stride, dilation)
    gx = conv_cudnn.grad_input(xp, g, w, x.shape, stride, pads, dilation, groups)
    if gx is not None:
        return gx
    return _col2im_conv(xp, g, w, x.shape, stride, padding, dilation, groups)


def _grad_filter_kernel(xp, x, g, w, stride, padding, dilation, groups):
    kernel, pads, hw = _geometry(x.shape, w.shape, stride, padding, dilation)
    dw = conv_cudnn.grad_filter(xp, x, g, w.shape, stride, pads, dilation, groups)
    if dw is not None:
        return dw
    if _depthwise(w, groups):
        dw = _native("depthwise_grad_filter", xp, x, g, w.shape, stride, pads, dilation, groups)
        if dw is not None:
            return dw
        n, c = x.shape[:2]
        win = windows(xp, x, kernel, stride, dilation, pads, hw)
        g5 = g.reshape((n, c, w.shape[0] // c) + tuple(hw))
        dw = xp.empty((c, w.shape[0] // c) + kernel, dtype=g.dtype)
        for i, j in _taps(kernel):
            dw[:, :, i, j] = xp.einsum("nckhw,nchw->ck", g5, win[:, :, :, :, i, j])
        return dw.reshape(w.shape)
    dw = _native("conv2d_grad_filter", xp, x, g, w.shape, stride, pads, dilation, groups)
    if dw is not None:
        return dw
    cols = _cols(xp, x, kernel, stride, dilation, pads, hw, groups)
    n, o = g.shape[:2]
    # [N, G, C/G*kh*kw, Ho*Wo] @ [N, G, Ho*Wo, O/G] (a transposed view), summed over images:
    # the transpose of dw, because OpenBLAS runs this shape twice as fast as [O/G, Ho*Wo] @
    # [Ho*Wo, C/G*kh*kw] (16 -> 16 channels, 3x3, 32x32: 12 ms against 23 ms)
    gt = g.reshape(n, groups, o // groups, -1).transpose(0, 1, 3, 2)
    dw = xp.matmul(cols, gt).sum(axis=0).astype(x.dtype, copy=False)  # [G, C/G*kh*kw, O/G]
    return xp.ascontiguousarray(dw.transpose(0, 2, 1)).reshape(w.shape)


# ---- inference ------------------------------------------------------------------------------

def _check_pair(op, x, w, groups, x_arg="x", w_arg="weight", transpose=False):
    check_float(op, x_arg, x)
    check_float(op, w_arg, w)
    if len(x.shape) != 4:
        raise OpError(f"{op}: {x_arg} must be 4-D [N, C, H, W], got shape {I.fmt(x.shape)}")
    if len(w.shape) != 4:
        raise OpError(f"{op}: {w_arg} must be 4-D, got shape {I.fmt(w.shape)}")
    if x.dtype is not w.dtype:
        raise OpTypeError(f"{op}: {x_arg} has dtype {x.dtype.name} but {w_arg} has dtype "
                          f"{w.dtype.name}")
    if not isinstance(groups, int) or groups < 1:
        raise OpError(f"{op}: groups must be a positive int, got {groups!r}")
    c = x.shape[1]
    expect = w.shape[0] if transpose else w.shape[1] * groups
    if c != -1 and w.shape[1 - transpose] != -1 and c != expect:
        want = "weight.shape[0]" if transpose else f"weight.shape[1] * groups ({groups})"
        raise OpError(f"{op}: {x_arg} has shape {I.fmt(x.shape)} ({c} channels) but "
                      f"{w_arg} has shape {I.fmt(w.shape)}; channels must equal {want} = "
                      f"{expect}")
    lead = w.shape[1] if transpose else w.shape[0]
    if not transpose and lead != -1 and lead % groups:
        raise OpError(f"{op}: {w_arg} has {lead} output channels, not divisible by "
                      f"groups={groups}")
    if transpose and c != -1 and c % groups:
        raise OpError(f"{op}: {x_arg} has {c} channels, not divisible by groups={groups}")


def _spatial(op, x_hw, kernel, stride, padding, dilation):
    _check_padding(op, padding)
    if padding in ("SAME", "VALID"):
        if padding == "SAME":
            return tuple(-1 if n == -1 else -(-n // s) for n, s in zip(x_hw, stride))
        pads = ((0, 0), (0, 0))
    else:
        pads = resolve_padding(padding, x_hw, kernel, stride, dilation)
    hw = tuple(out_size(n, k, s, p, d)
               for n, k, s, p, d in zip(x_hw, kernel, stride, pads, dilation))
    if any(d == 0 or d < -1 for d in hw):
        raise OpError(f"{op}: the output would be empty: input spatial size {I.fmt(x_hw)} "
                      f"with padding {list(pads)} is smaller than the (dilated) kernel "
                      f"{I.fmt(kernel)}")
    return hw


def _conv2d_infer(x, w, stride, padding, dilation, groups):
    _check_pair("conv2d", x, w, groups)
    hw = _spatial("conv2d", x.shape[2:], w.shape[2:], stride, padding, dilation)
    _plan_native("forward", x, w, None, stride, padding, dilation, groups)
    return Meta((x.shape[0], w.shape[0]) + hw, x.dtype)


def _grad_input_infer(g, w, x, stride, padding, dilation, groups):
    _plan_native("grad_input", x, w, g, stride, padding, dilation, groups)
    return Meta(x.shape, g.dtype)


def _grad_filter_infer(x, g, w, stride, padding, dilation, groups):
    _plan_native("grad_filter", x, w, g, stride, padding, dilation, groups)
    return Meta(w.shape, x.dtype)


# ---- registration ---------------------------------------------------------------------------

def _conv2d_grad(ins, outs, gs, a):
    x, w = ins
    # an eager input that needs no gradient (a model's image) gets none: autograd would drop
    # it (a static program drops its op when nothing reads it)
    skip = x.stop_gradient and core.is_eager_tensor(x)
    return [None if skip else bind(CONV2D_GRAD_INPUT, (gs[0], w, x), a),
            bind(CONV2D_GRAD_FILTER, (x, gs[0], w), a)]


def _grad_input_grad(ins, outs, gs, a):
    g, w, _ = ins
    return [bind(CONV2D, (gs[0], w), a), bind(CONV2D_GRAD_FILTER, (gs[0], g, w), a), None]


def _grad_filter_grad(ins, outs, gs, a):
    x, g, _w = ins
    return [bind(CONV2D_GRAD_INPUT, (g, gs[0], x), a), bind(CONV2D, (x, gs[0]), a), None]


CONV2D = register("conv2d", kernel=_conv2d_kernel, infer=_conv2d_infer, grad=_conv2d_grad,
                  amp="white", doc="2-D convolution, NCHW, weight [O, C/groups, kh, kw].")
CONV2D_GRAD_INPUT = register(
    "conv2d_grad_input", kernel=_grad_input_kernel, grad=_grad_input_grad, amp="white",
    infer=_grad_input_infer,
    doc="The adjoint of conv2d in its input (col2im); the third input gives the shape.")
CONV2D_GRAD_FILTER = register(
    "conv2d_grad_filter", kernel=_grad_filter_kernel, grad=_grad_filter_grad, amp="white",
    infer=_grad_filter_infer,
    doc="The adjoint of conv2d in its weight; the third input gives the shape.")


def conv2d(x, weight, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Convolution with normalised attrs; see `runtime.nn.functional.conv2d`."""
    return bind(CONV2D, (x, weight), {
        "stride": list(stride), "padding": padding if isinstance(padding, str) else
        list(padding), "dilation": list(dilation), "groups": int(groups)})


# ---- transposed convolution -----------------------------------------------------------------

def _transpose_geometry(x_hw, w_shape, stride, padding, output_padding, dilation):
    """(pads, output size) of conv2d_transpose; 'SAME' gives out = in * stride."""
    if any(p >= s for p, s in zip(output_padding, stride)):
        raise OpError(f"conv2d_transpose: output_padding {list(output_padding)} must be "
                      f"smaller than stride {list(stride)}")
    kernel = tuple(w_shape[2:])
    eff = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if padding == "SAME":
        pads = tuple((max(e - s, 0) // 2, max(e - s, 0) - max(e - s, 0) // 2)
                     for e, s in zip(eff, stride))
        extra = tuple(max(s - e, 0) for e, s in zip(eff, stride))
    else:
        pads = resolve_padding(padding, None, kernel, stride, dilation)
        extra = tuple(output_padding)
    hw = tuple(-1 if n == -1 else (n - 1) * s - p[0] - p[1] + e + op
               for n, s, p, e, op in zip(x_hw, stride, pads, eff, extra))
    return pads, hw


def _transpose_kernel(xp, x, w, stride, padding, output_padding, dilation, groups):
    check_dtypes_match(x, w)
    _check_padding("conv2d_transpose", padding)
    pads, hw = _transpose_geometry(x.shape[2:], w.shape, stride, padding, output_padding,
                                   dilation)
    shape = (x.shape[0], w.shape[1] * groups) + hw
    return _col2im_conv(xp, x, w, shape, stride, [*pads[0], *pads[1]], dilation, groups)


def _transpose_infer(x, w, stride, padding, output_padding, dilation, groups):
    _check_pair("conv2d_transpose", x, w, groups, transpose=True)
    _check_padding("conv2d_transpose", padding)
    _, hw = _transpose_geometry(x.shape[2:], w.shape, stride, padding, output_padding,
                                dilation)
    if any(d == 0 or d < -1 for d in hw):
        raise OpError(f"conv2d_transpose: the output would be empty for input "
                      f"{I.fmt(x.shape)}, weight {I.fmt(w.shape)} and padding {padding}")
    cout = -1 if w.shape[1] == -1 else w.shape[1] * groups
    return Meta((x.shape[0], cout) + hw, x.dtype)


def _transpose_grad(ins, outs, gs, a):
    x, w = ins
    # conv2d_transpose(x, w) is the adjoint of conv2d(., w), so its gradients are conv2d and
    # conv2d_grad_filter with the same (explicit) padding
    pads, _ = _transpose_geometry((1, 1), (0, 0) + tuple(w.shape[2:]), a["stride"],
                                  a["padding"], a["output_padding"], a["dilation"])
    conv = {"stride": a["stride"], "padding": [*pads[0], *pads[1]],
            "dilation": a["dilation"], "groups": a["groups"]}
    return [bind(CONV2D, (gs[0], w), conv), bind(CONV2D_GRAD_FILTER, (gs[0], x, w), conv)]


CONV2D_TRANSPOSE = register(
    "conv2d_transpose", kernel=_transpose_kernel, infer=_transpose_infer, grad=_transpose_grad,
    amp="white", doc="Transposed 2-D convolution, weight [C_in, C_out/groups, kh, kw].")


def conv2d_transpose(x, weight, stride=(1, 1), padding=(0, 0, 0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1):
    """Transposed convolution with normalised attrs; see `runtime.nn.functional`."""
    return bind(CONV2D_TRANSPOSE, (x, weight), {
        "stride": list(stride), "padding": padding if isinstance(padding, str) else
        list(padding), "output_padding": list(output_padding), "dilation": list(dilation),
        "groups": int(groups)})


METHODS: dict = {}

__all__: list = []
