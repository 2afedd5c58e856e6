"""The chunked NumPy code's functions for the fused ops that no single ufunc computes
(`fusion.KERNEL_OPS`): each runs the op's own kernel on a chunk and writes the result into
the chunk's buffer, so a fused run computes what the unfused op computes, element by element
(the kernels are elementwise: a chunk gives the bits of the whole array)."""
from __future__ import annotations

import numpy as np

from ..ops.registry import OPS


def _chunk_function(op_type: str, **attrs):
    kernel = OPS[op_type].kernel

    def run(*operands, out):
        out[...] = kernel(np, *operands, **attrs)
        return out

    run.__name__ = f"_kernel_{op_type}"
    return run


# fused type -> the name the generated code calls it by, bound in its namespace
FUNCTIONS = {"erf": _chunk_function("erf"), "sigmoid": _chunk_function("sigmoid"),
             "gelu": _chunk_function("gelu"),
             "gelu_tanh": _chunk_function("gelu", approximate=True),
             "gelu_grad": _chunk_function("gelu_grad"),
             "gelu_tanh_grad": _chunk_function("gelu_grad", approximate=True)}
NAMESPACE = {f"_kernel_{t}": fn for t, fn in FUNCTIONS.items()}
