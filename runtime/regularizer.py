"""`rt.regularizer`: weight-decay descriptions an optimizer or a ParamAttr can carry.

Both add a term to each gradient before the optimizer's update, as Paddle's do: `L2Decay`
adds `coeff * param` (the update ops take it as their decay coefficient), `L1Decay` adds
`coeff * sign(param)` (the optimizer adds it to the gradient first).

>>> import runtime as rt
>>> w = rt.Parameter(rt.ones([2]).numpy())
>>> opt = rt.optimizer.SGD(0.1, parameters=[w], weight_decay=rt.regularizer.L2Decay(1e-4))
>>> opt = rt.optimizer.Adam(0.1, parameters=[w], weight_decay=rt.regularizer.L1Decay(1e-4))
"""
from __future__ import annotations


class WeightDecayRegularizer:
    """A decay coefficient (>= 0); subclasses say which penalty it weighs."""

    def __init__(self, coeff: float = 0.0):
        if coeff < 0:
            raise ValueError(f"{type(self).__name__}: coeff must be >= 0, got {coeff}")
        self.coeff = float(coeff)

    def __repr__(self):
        return f"{type(self).__name__}(coeff={self.coeff})"


class L2Decay(WeightDecayRegularizer):
    """Add `coeff * param` to each gradient (L2 regularisation, `0.5 * coeff * ||w||^2`)."""


class L1Decay(WeightDecayRegularizer):
    """Add `coeff * sign(param)` to each gradient (L1 regularisation, `coeff * sum(|w|)`)."""


class L2DecayRegularizer(L2Decay):
    """Paddle's fluid-era name for `L2Decay` (its keyword is `regularization_coeff`)."""

    def __init__(self, regularization_coeff: float = 0.0):
        super().__init__(regularization_coeff)


class L1DecayRegularizer(L1Decay):
    """Paddle's fluid-era name for `L1Decay` (its keyword is `regularization_coeff`)."""

    def __init__(self, regularization_coeff: float = 0.0):
        super().__init__(regularization_coeff)


__all__ = ["L1Decay", "L1DecayRegularizer", "L2Decay", "L2DecayRegularizer",
           "WeightDecayRegularizer"]
