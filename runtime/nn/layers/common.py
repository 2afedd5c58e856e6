"""Parameter-free utility layers: Identity, Flatten, Dropout."""
from __future__ import annotations

from ...ops.shape import flatten
from .. import functional as F
from ..layer import Layer


class Identity(Layer):
    """Returns its input unchanged (a placeholder, e.g. for a removed head).

    >>> import runtime as rt
    >>> rt.nn.Identity()(rt.ones([2])).shape
    [2]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Layer):
    """Merge axes `start_axis..stop_axis` into one (default: all but the batch axis).

    >>> import runtime as rt
    >>> rt.nn.Flatten()(rt.ones([2, 3, 4])).shape
    [2, 12]
    """

    def __init__(self, start_axis: int = 1, stop_axis: int = -1):
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, input):
        return flatten(input, self.start_axis, self.stop_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, stop_axis={self.stop_axis}"


class Dropout(Layer):
    """Zero elements with probability `p` while training (scaled by 1/(1-p) in Paddle's
    default 'upscale_in_train' mode); the identity in eval mode.

    >>> import runtime as rt
    >>> drop = rt.nn.Dropout(0.5)
    >>> drop.eval()(rt.ones([3])).numpy().tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, axis=None, mode: str = "upscale_in_train", name=None):
        super().__init__()
        self.p, self.axis, self.mode = p, axis, mode

    def forward(self, input):
        return F.dropout(input, p=self.p, axis=self.axis, training=self.training,
                         mode=self.mode)

    def extra_repr(self) -> str:
        return f"p={self.p}, axis={self.axis}, mode={self.mode}"
