"""A BERT-style Transformer-encoder classifier over padded token sequences.

Padding positions (token id `pad_id`) are masked out of self-attention and of the pooled
representation.

>>> import runtime as rt
>>> from examples.models import BertClassifier
>>> BertClassifier()(rt.to_tensor([[5, 6, 7, 0], [8, 9, 0, 0]])).shape
[2, 2]
"""
from __future__ import annotations

import runtime as rt
from runtime import nn


class BertClassifier(nn.Layer):
    """Token + position embeddings, LayerNorm, a TransformerEncoder with a padding mask, then
    either the first token (`pooling='cls'`, through a tanh pooler as in BERT) or the mean
    over non-padding tokens (`pooling='mean'`), and a linear classifier."""

    def __init__(self, vocab_size: int = 60, num_classes: int = 2, d_model: int = 32,
                 num_heads: int = 4, num_layers: int = 2, max_len: int = 32, pad_id: int = 0,
                 pooling: str = "cls"):
        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"BertClassifier: pooling must be 'cls' or 'mean', got {pooling!r}")
        self.pad_id, self.pooling = pad_id, pooling
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_len, d_model)
        self.norm = nn.LayerNorm(d_model)
        layer = nn.TransformerEncoderLayer(d_model, num_heads, 2 * d_model, dropout=0.0,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, num_layers)
        self.pooler = nn.Linear(d_model, d_model)
        self.classifier = nn.Linear(d_model, num_classes)

    def forward(self, tokens: rt.Tensor) -> rt.Tensor:
        keep = tokens != self.pad_id  # [B, T] bool
        positions = rt.arange(tokens.shape[1], dtype="int64")
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        x = self.norm(x)
        # [B, 1, 1, T]: every query may attend to the non-padding keys of its sequence
        attn_mask = rt.unsqueeze(keep, [1, 2])
        x = self.encoder(x, attn_mask)
        if self.pooling == "cls":
            pooled = rt.tanh(self.pooler(x[:, 0]))
        else:
            weights = rt.unsqueeze(keep.astype(x.dtype), -1)
            pooled = rt.sum(x * weights, axis=1) / rt.sum(weights, axis=1)
        return self.classifier(pooled)
