"""`rt.regularizer`: weight-decay descriptions an optimizer or a ParamAttr can carry.

Only L2 decay is provided: the update ops add `coeff * param` to the gradient, which is what
Paddle's `L2Decay` means. (L1 would need the sign of the parameter in every update op.)

>>> import runtime as rt
>>> w = rt.Parameter(rt.ones([2]).numpy())
>>> opt = rt.optimizer.SGD(0.1, parameters=[w], weight_decay=rt.regularizer.L2Decay(1e-4))
"""
from __future__ import annotations


class L2Decay:
    """Add `coeff * param` to each gradient (L2 regularisation, `0.5 * coeff * ||w||^2`)."""

    def __init__(self, coeff: float = 0.0):
        if coeff < 0:
            raise ValueError(f"L2Decay: coeff must be >= 0, got {coeff}")
        self.coeff = float(coeff)

    def __repr__(self):
        return f"L2Decay(coeff={self.coeff})"


class L2DecayRegularizer(L2Decay):
    """Paddle's fluid-era name for `L2Decay` (its keyword is `regularization_coeff`)."""

    def __init__(self, regularization_coeff: float = 0.0):
        super().__init__(regularization_coeff)


__all__ = ["L2Decay", "L2DecayRegularizer"]
