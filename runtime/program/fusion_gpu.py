"""Fused elementwise runs on the GPU: one generated `cupy.ElementwiseKernel` per run.

`fusion.find_groups(..., gpu=True)` picks runs of elementwise ops (the ops of `fusion.UNARY`,
`fusion.BINARY` and `fusion.KERNEL_OPS`) on float32/float64 values that all have one
shape; this module turns a run into one kernel. Its body is straight-line code, one device
function call per op:

    T v0 = d2s_multiply(i0, (T)(0.5));
    T v1 = d2s_tanh(v0);
    o0 = d2s_add(v1, (T)(1.0));

The device functions (`PREAMBLE`) compute what the CuPy ufunc of the op computes, NaN
handling of `maximum`/`minimum` included (erf, sigmoid, the two GELUs and their gradients:
what the ops' kernels compute, in the same order, with the device's erf, exp and tanh), and
the kernel broadcasts its inputs as the ufuncs do. Each value read after the run is one
output of the kernel; the others stay in registers.
One launch replaces one per op, and no intermediate array is allocated.
"""
from __future__ import annotations

import itertools
import re

from .. import backend
from . import fusion

PREAMBLE = r"""
template <typename T> __device__ T d2s_add(T a, T b) { return a + b; }
template <typename T> __device__ T d2s_subtract(T a, T b) { return a - b; }
template <typename T> __device__ T d2s_multiply(T a, T b) { return a * b; }
template <typename T> __device__ T d2s_divide(T a, T b) { return a / b; }
template <typename T> __device__ T d2s_maximum(T a, T b) { return (a > b || a != a) ? a : b; }
template <typename T> __device__ T d2s_minimum(T a, T b) { return (a < b || a != a) ? a : b; }
template <typename T> __device__ T d2s_neg(T a) { return -a; }
template <typename T> __device__ T d2s_abs(T a) { return fabs(a); }
template <typename T> __device__ T d2s_exp(T a) { return exp(a); }
template <typename T> __device__ T d2s_log(T a) { return log(a); }
template <typename T> __device__ T d2s_sqrt(T a) { return sqrt(a); }
template <typename T> __device__ T d2s_tanh(T a) { return tanh(a); }
template <typename T> __device__ T d2s_sin(T a) { return sin(a); }
template <typename T> __device__ T d2s_cos(T a) { return cos(a); }
template <typename T> __device__ T d2s_square(T a) { return a * a; }
template <typename T> __device__ T d2s_relu(T a) { return (a > (T)0 || a != a) ? a : (T)0; }
template <typename T> __device__ T d2s_erf(T a) { return erf(a); }
template <typename T> __device__ T d2s_sigmoid(T a) {
  const T e = exp(-fabs(a));
  return a >= (T)0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e);
}
template <typename T> __device__ T d2s_gelu(T a) {
  return (T)0.5 * a * ((T)1 + erf(a * (T)0.70710678118654752));
}
template <typename T> __device__ T d2s_gelu_tanh(T a) {
  return (T)0.5 * a * ((T)1 + tanh((T)0.79788456080286536 * (a + (T)0.044715 * a * a * a)));
}
template <typename T> __device__ T d2s_gelu_grad(T a, T dy) {
  const T cdf = (T)0.5 * ((T)1 + erf(a * (T)0.70710678118654752));
  return dy * (cdf + a * exp((T)-0.5 * a * a) * (T)0.39894228040143268);
}
template <typename T> __device__ T d2s_gelu_tanh_grad(T a, T dy) {
  const T t = tanh((T)0.79788456080286536 * (a + (T)0.044715 * a * a * a));
  return dy * ((T)0.5 * ((T)1 + t) +
               (T)0.5 * a * ((T)1 - t * t) * (T)0.79788456080286536 * ((T)1 + (T)0.134145 * a * a));
}
"""

_DEFINED = re.compile(r"__device__ T d2s_(\w+)\(")

_ids = itertools.count()


def kernel_parts(group, block) -> tuple:
    """(in_params, out_params, body, name) of the run's `ElementwiseKernel`."""
    params = {n: f"i{k}" for k, n in enumerate(group.inputs)}
    outs = {n: f"o{k}" for k, n in enumerate(group.outputs)}
    local: dict = {}
    body = []
    for k, j in enumerate(group.ops):
        op = block.ops[j]
        args = []
        for x in op.inputs:
            if x.__class__ is str:
                args.append(local.get(x) or params[x])
            else:
                args.append(f"(T)({float(x)!r})")
        res = op.outputs[0]
        call = f"d2s_{fusion.fused_type(op)}({', '.join(args)})"
        local[res] = f"v{k}"
        body.append(f"T v{k} = {call};")
        if res in outs:
            body.append(f"{outs[res]} = v{k};")
    in_params = ", ".join(f"T {p}" for p in params.values())
    out_params = ", ".join(f"T {o}" for o in outs.values())
    return in_params, out_params, "\n".join(body), f"d2s_fused_{next(_ids)}"


def build(group, block):
    """`fn(*inputs)` running the run's kernel: the outputs (one array, or a tuple)."""
    xp = backend.XP
    in_params, out_params, body, name = kernel_parts(group, block)
    kernel = xp.ElementwiseKernel(in_params, out_params, body, name, preamble=PREAMBLE)
    shape = tuple(block.var(group.outputs[0])._static_shape)
    dtype = group.dtype.np
    n_out = len(group.outputs)
    empty = xp.empty

    def run(*inputs):
        outs = [empty(shape, dtype) for _ in range(n_out)]
        kernel(*inputs, *outs)
        return outs[0] if n_out == 1 else tuple(outs)

    run.kernel_source = (in_params, out_params, body)
    return run


assert set(fusion.UNARY) | set(fusion.BINARY) | set(fusion.KERNEL_OPS) == \
    set(_DEFINED.findall(PREAMBLE))
