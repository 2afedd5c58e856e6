"""OpInfos for runtime/ops/linalg.py: einsum, bmm, dot."""
from __future__ import annotations

import numpy as np
from opinfo import ErrorSample, OpInfo, Sample, randn

import runtime as rt


def _einsum_samples(rng):
    return [
        Sample(("ij,jk->ik", randn(rng, 2, 3), randn(rng, 3, 4))),
        Sample(("ij,jk", randn(rng, 2, 3), randn(rng, 3, 4))),  # implicit output
        Sample(("bij,bjk->bik", randn(rng, 2, 2, 3), randn(rng, 2, 3, 2))),
        Sample(("i,j->ij", randn(rng, 3), randn(rng, 4))),
        Sample(("ij->", randn(rng, 2, 3))),
        Sample(("ij->ji", randn(rng, 2, 3))),
        Sample(("ijk,k->ij", randn(rng, 2, 3, 4), randn(rng, 4))),  # i, j only in operand 0
        Sample(("ij,j->j", randn(rng, 2, 3), randn(rng, 3))),  # i summed away from operand 0
        Sample(("...ij,...jk->...ik", randn(rng, 2, 3, 4), randn(rng, 4, 2))),
        Sample(("...ij,...jk->...ik", randn(rng, 1, 3, 4), randn(rng, 2, 4, 2))),
        Sample(("ii->i", randn(rng, 3, 3)), grad=False),
        Sample(("i,i->", randn(rng, 5), randn(rng, 5))),
    ]


def _einsum_ref(eq, *xs):
    return np.asarray(np.einsum(eq, *xs))


OPINFOS = [
    OpInfo("einsum", rt.einsum, _einsum_ref, _einsum_samples, error_samples=[
        ErrorSample(("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5))), {}, ValueError,
                    r"einsum: subscript 'j' has size 3 in an earlier operand but 4 in "
                    r"operand 1 \(shape \[4, 5\]\)"),
        ErrorSample(("ij,jk->ik", np.ones((2, 3))), {}, ValueError,
                    r"einsum: equation 'ij,jk->ik' has 2 operand subscripts but 1 operands"),
        ErrorSample(("ijk->i", np.ones((2, 3))), {}, ValueError,
                    r"einsum: operand 0 has shape \[2, 3\] \(rank 2\) but subscripts 'ijk' "
                    r"name 3 dims")]),
    OpInfo("bmm", rt.bmm, np.matmul,
           lambda rng: [Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4, 5)))], error_samples=[
               ErrorSample((np.ones((2, 3, 4)), np.ones((3, 4, 5))), {}, ValueError,
                           r"bmm: x has shape \[2, 3, 4\] but y has shape \[3, 4, 5\]; batch "
                           r"sizes 2 and 3 differ"),
               ErrorSample((np.ones((3, 4)), np.ones((4, 5))), {}, ValueError,
                           r"bmm: x and y must be 3-D, got x of shape \[3, 4\]"),
               ErrorSample((np.ones((2, 3, 4)), np.ones((2, 3, 5))), {}, ValueError,
                           r"matmul: x has shape \[2, 3, 4\] but y has shape \[2, 3, 5\]; "
                           r"inner dimensions 4 and 3 differ")]),
    OpInfo("dot", rt.dot, lambda x, y: np.sum(x * y, axis=-1),
           lambda rng: [Sample((randn(rng, 5), randn(rng, 5))),
                        Sample((randn(rng, 3, 4), randn(rng, 3, 4)))],
           error_samples=[ErrorSample((np.ones((3,)), np.ones((4,))), {}, ValueError,
                                      r"dot: x has shape \[3\] but y has shape \[4\]")]),
]
