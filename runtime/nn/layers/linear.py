"""`Linear`: y = x @ W + b with Paddle's weight layout `[in_features, out_features]`."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class Linear(Layer):
    """A fully connected layer. The weight is `[in_features, out_features]` (Paddle's layout,
    the transpose of PyTorch's), initialised XavierUniform; the bias is zeros.
    `bias_attr=False` drops the bias.

    >>> import runtime as rt
    >>> fc = rt.nn.Linear(4, 3)
    >>> fc.weight.shape, fc.bias.shape, fc.weight.name.endswith('.w_0')
    ([4, 3], [3], True)
    """

    def __init__(self, in_features: int, out_features: int, weight_attr=None, bias_attr=None,
                 name: str | None = None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)
        self._name = name

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        name = f", name={self._name}" if self._name else ""
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._dtype}{name}")
