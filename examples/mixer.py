"""A Layer that takes a list and a dict of tensors and returns a tuple holding a dict: the
deployment docs and tests save it to show that a saved model keeps that nesting.

>>> import runtime as rt
>>> h, extra = Mixer()([rt.ones([3, 4]), rt.ones([3, 4])], {"scale": rt.to_tensor([2.0])})
>>> h.shape, extra["total"].shape
([3, 2], [3])
"""
from __future__ import annotations

import runtime as rt


class Mixer(rt.nn.Layer):
    def __init__(self, width: int = 4, out: int = 2):
        super().__init__()
        self.fc = rt.nn.Linear(width, out)

    def forward(self, xs: list, cfg: dict):
        h = self.fc(xs[0] + xs[1]) * cfg["scale"]
        return h, {"total": rt.sum(h, axis=1)}
