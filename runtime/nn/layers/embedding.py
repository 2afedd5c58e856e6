"""`Embedding`: a lookup table `[num_embeddings, embedding_dim]`."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class Embedding(Layer):
    """Rows of `weight` picked by integer ids. `padding_idx` (may be negative) gives a row
    that is zero at creation, is returned as zeros and receives no gradient. The weight is
    initialised XavierUniform, as in Paddle.

    >>> import runtime as rt
    >>> emb = rt.nn.Embedding(10, 4, padding_idx=0)
    >>> emb(rt.to_tensor([[0, 3], [5, 9]])).shape
    [2, 2, 4]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 sparse: bool = False, weight_attr=None, name=None):
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is out of range for "
                                 f"{num_embeddings} embeddings")
            padding_idx %= num_embeddings
        self._num_embeddings, self._embedding_dim = num_embeddings, embedding_dim
        self._padding_idx, self._sparse = padding_idx, sparse
        self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
        if padding_idx is not None:
            values = self.weight.numpy().copy()
            values[padding_idx] = 0
            self.weight.set_value(values)

    def forward(self, x):
        return F.embedding(x, self.weight, padding_idx=self._padding_idx, sparse=self._sparse)

    def extra_repr(self) -> str:
        pad = f", padding_idx={self._padding_idx}" if self._padding_idx is not None else ""
        return f"{self._num_embeddings}, {self._embedding_dim}{pad}"
