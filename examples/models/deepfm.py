"""DeepFM for click-through prediction: a factorization machine and an MLP sharing the
embeddings of sparse (categorical) fields, plus optional dense features.

>>> import runtime as rt
>>> from examples.models import DeepFM
>>> model = DeepFM(field_sizes=(5, 7, 3), num_dense=2)
>>> model(rt.to_tensor([[1, 2, 0], [4, 6, 2]]), rt.zeros([2, 2])).shape
[2]
"""
from __future__ import annotations

import runtime as rt
from runtime import nn
from runtime.nn import functional as F


class DeepFM(nn.Layer):
    """`forward(sparse [B, fields] int64, dense [B, num_dense] or None)` -> logits [B].

    Each field's ids index its own slice of one shared table (offsets per field). The FM part
    adds first-order weights and pairwise interactions 0.5 * ((sum e)^2 - sum e^2); the deep
    part runs the concatenated embeddings (and dense features) through an MLP.
    """

    def __init__(self, field_sizes=(10, 8, 6, 4), embed_dim: int = 8, num_dense: int = 3,
                 hidden=(32, 16)):
        super().__init__()
        offsets = [0]
        for size in field_sizes[:-1]:
            offsets.append(offsets[-1] + size)
        self.offsets = offsets
        self.num_dense = num_dense
        total = sum(field_sizes)
        self.embedding = nn.Embedding(total, embed_dim)
        self.first_order = nn.Embedding(total, 1)
        self.bias = self.create_parameter([1], is_bias=True)
        if num_dense:
            self.dense_first_order = nn.Linear(num_dense, 1, bias_attr=False)
        width = len(field_sizes) * embed_dim + num_dense
        layers = []
        for h in hidden:
            layers.append(nn.Linear(width, h))
            width = h
        self.mlp = nn.LayerList(layers)
        self.out = nn.Linear(width, 1)

    def forward(self, sparse: rt.Tensor, dense: rt.Tensor | None = None) -> rt.Tensor:
        ids = sparse + rt.to_tensor(self.offsets, dtype="int64")
        emb = self.embedding(ids)  # [B, F, K]
        linear = rt.sum(self.first_order(ids), axis=[1, 2]) + self.bias
        square_of_sum = rt.square(rt.sum(emb, axis=1))
        sum_of_square = rt.sum(rt.square(emb), axis=1)
        fm = 0.5 * rt.sum(square_of_sum - sum_of_square, axis=1)
        deep = rt.flatten(emb, start_axis=1)
        if dense is not None:
            linear = linear + rt.squeeze(self.dense_first_order(dense), -1)
            deep = rt.concat([deep, dense], axis=1)
        for layer in self.mlp:
            deep = F.relu(layer(deep))
        return linear + fm + rt.squeeze(self.out(deep), -1)
