"""Activation layers: thin Layers over `rt.nn.functional` (Paddle names and arguments)."""
from __future__ import annotations

from .. import functional as F
from ..layer import Layer


class ReLU(Layer):
    """max(x, 0).

    >>> import runtime as rt
    >>> rt.nn.ReLU()(rt.to_tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class ReLU6(Layer):
    """min(max(x, 0), 6)."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.relu6(x)


class LeakyReLU(Layer):
    """x where x >= 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self._negative_slope}"


class GELU(Layer):
    """x * Phi(x); `approximate=True` uses the tanh formula."""

    def __init__(self, approximate: bool = False, name=None):
        super().__init__()
        self._approximate = approximate

    def forward(self, x):
        return F.gelu(x, self._approximate)

    def extra_repr(self) -> str:
        return f"approximate={self._approximate}"


class Sigmoid(Layer):
    """1 / (1 + exp(-x))."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.sigmoid(x)


class Silu(Layer):
    """x * sigmoid(x)."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


class Swish(Layer):
    """x * sigmoid(x) (Paddle's name; the same as Silu)."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.swish(x)


class Hardswish(Layer):
    """x * relu6(x + 3) / 6 (MobileNetV3)."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


class Tanh(Layer):
    """tanh(x)."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.tanh(x)


class Softplus(Layer):
    """log(1 + exp(beta * x)) / beta, linear above `threshold`."""

    def __init__(self, beta: float = 1, threshold: float = 20, name=None):
        super().__init__()
        self._beta, self._threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self._beta, self._threshold)

    def extra_repr(self) -> str:
        return f"beta={self._beta}, threshold={self._threshold}"


class Softmax(Layer):
    """softmax along `axis` (default -1)."""

    def __init__(self, axis: int = -1, name=None):
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)

    def extra_repr(self) -> str:
        return f"axis={self._axis}"


class LogSoftmax(Layer):
    """log(softmax(x)) along `axis`, computed stably."""

    def __init__(self, axis: int = -1, name=None):
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.log_softmax(x, self._axis)

    def extra_repr(self) -> str:
        return f"axis={self._axis}"


class ELU(Layer):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, name=None):
        super().__init__()
        self._alpha = alpha

    def forward(self, x):
        return F.elu(x, self._alpha)

    def extra_repr(self) -> str:
        return f"alpha={self._alpha}"


class Mish(Layer):
    """x * tanh(softplus(x))."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.mish(x)


class LogSigmoid(Layer):
    """log(sigmoid(x)), finite for any x."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.log_sigmoid(x)


class Hardsigmoid(Layer):
    """clip(x / 6 + 1/2, 0, 1)."""

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return F.hardsigmoid(x)


class Hardtanh(Layer):
    """clip(x, min, max)."""

    def __init__(self, min: float = -1.0, max: float = 1.0, name=None):
        super().__init__()
        self._min, self._max = min, max

    def forward(self, x):
        return F.hardtanh(x, self._min, self._max)

    def extra_repr(self) -> str:
        return f"min={self._min}, max={self._max}"
