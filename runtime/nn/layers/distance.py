"""`CosineSimilarity`: the cosine of the angle between two tensors along an axis."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class CosineSimilarity(Layer):
    """sum(x1 * x2) / max(|x1| |x2|, eps) along `axis` (see `F.cosine_similarity`).

    >>> import runtime as rt
    >>> sim = rt.nn.CosineSimilarity(axis=1)
    >>> sim(rt.to_tensor([[1.0, 0.0]]), rt.to_tensor([[1.0, 1.0]])).tolist()[0] > 0.707
    True
    """

    def __init__(self, axis: int = 1, eps: float = 1e-8):
        super().__init__()
        self._axis, self._eps = axis, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, axis=self._axis, eps=self._eps)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, eps={self._eps}"
