"""A small speech (keyword) classifier: 1-D convolutions over time that subsample the
features, a GRU over the valid frames only, and masked mean pooling. Utterances have
different lengths, given as an int64 tensor.

>>> import runtime as rt
>>> from examples.models import SpeechClassifier
>>> model = SpeechClassifier(num_features=8)
>>> model(rt.zeros([2, 20, 8]), rt.to_tensor([20, 11])).shape
[2, 6]
"""
from __future__ import annotations

import runtime as rt
from runtime import nn
from runtime.nn import functional as F


class SpeechClassifier(nn.Layer):
    """`forward(features [B, T, num_features], lengths [B] int64)` -> logits [B, classes].

    Each conv block (Conv1D + BatchNorm1D + ReLU) with stride 2 halves the time axis; the
    lengths follow the same arithmetic as tensors, so the GRU and the pooling see exactly the
    frames that come from real audio."""

    def __init__(self, num_features: int = 8, num_classes: int = 6, channels=(16, 16),
                 hidden_size: int = 16, kernel_size: int = 3, bidirectional: bool = False):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, kernel_size // 2
        convs, norms = [], []
        width = num_features
        for c in channels:
            convs.append(nn.Conv1D(width, c, kernel_size, stride=2, padding=self.padding))
            norms.append(nn.BatchNorm1D(c))
            width = c
        self.convs, self.norms = nn.LayerList(convs), nn.LayerList(norms)
        self.gru = nn.GRU(width, hidden_size,
                          direction="bidirect" if bidirectional else "forward")
        out = 2 * hidden_size if bidirectional else hidden_size
        self.classifier = nn.Linear(out, num_classes)

    def subsampled_lengths(self, lengths: rt.Tensor) -> rt.Tensor:
        for _ in self.convs:
            lengths = (lengths + 2 * self.padding - self.kernel_size) // 2 + 1
        return lengths

    def forward(self, features: rt.Tensor, lengths: rt.Tensor) -> rt.Tensor:
        x = rt.transpose(features, [0, 2, 1])  # [B, C, T] for the convolutions
        for conv, norm in zip(self.convs, self.norms):
            x = F.relu(norm(conv(x)))
        x = rt.transpose(x, [0, 2, 1])
        lengths = self.subsampled_lengths(lengths)
        out, _ = self.gru(x, sequence_length=lengths)
        positions = rt.arange(x.shape[1], dtype="int64")
        valid = (rt.unsqueeze(positions, 0) < rt.unsqueeze(lengths, 1)).astype(out.dtype)
        pooled = rt.sum(out * rt.unsqueeze(valid, -1), axis=1) / rt.unsqueeze(
            lengths.astype(out.dtype), -1)
        return self.classifier(pooled)
