"""An LSTM language model: embeddings, a stacked LSTM, and next-token logits (optionally with
the output projection tied to the embedding).

>>> import runtime as rt
>>> from examples.models import LSTMLanguageModel
>>> lm = LSTMLanguageModel(vocab_size=50)
>>> logits, (h, c) = lm(rt.zeros([2, 7], dtype='int64'))
>>> logits.shape, h.shape
([2, 7, 50], [2, 2, 32])
"""
from __future__ import annotations

import runtime as rt
from runtime import nn


class LSTMLanguageModel(nn.Layer):
    """`forward(tokens, states=None)` -> (logits [B, T, vocab], (h, c)); passing the returned
    states back continues a text across calls (truncated backpropagation through time)."""

    def __init__(self, vocab_size: int = 50, embed_dim: int = 32, hidden_size: int = 32,
                 num_layers: int = 2, tie_weights: bool = True):
        super().__init__()
        if tie_weights and embed_dim != hidden_size:
            raise ValueError("LSTMLanguageModel: tied weights need embed_dim == hidden_size, "
                             f"got {embed_dim} and {hidden_size}")
        self.tie_weights = tie_weights
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers)
        if not tie_weights:
            self.decoder = nn.Linear(hidden_size, vocab_size)
        self.decoder_bias = self.create_parameter([vocab_size], is_bias=True)

    def forward(self, tokens: rt.Tensor, states=None):
        x = self.embedding(tokens)
        if states is None:
            out, states = self.lstm(x)
        else:
            out, states = self.lstm(x, states)
        if self.tie_weights:
            logits = rt.matmul(out, self.embedding.weight, transpose_y=True)
        else:
            logits = self.decoder(out)
        return logits + self.decoder_bias, states

    def loss(self, tokens: rt.Tensor) -> rt.Tensor:
        """Mean next-token cross entropy of `tokens[:, 1:]` given `tokens[:, :-1]`."""
        logits, _ = self(tokens[:, :-1])
        vocab = logits.shape[-1]
        return nn.functional.cross_entropy(rt.reshape(logits, [-1, vocab]),
                                           rt.reshape(tokens[:, 1:], [-1]))
