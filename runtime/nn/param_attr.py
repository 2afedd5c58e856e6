"""`ParamAttr`: how a Layer creates one of its parameters (name, initializer, trainable, ...).

Layers take `weight_attr` / `bias_attr` arguments that may be a `ParamAttr`, a name, an
initializer, `None` (the layer's defaults) or `False` (no such parameter, e.g. no bias).
"""
from __future__ import annotations

from .initializer import Initializer


class ParamAttr:
    """Options for creating a parameter, as in Paddle.

    >>> import runtime as rt
    >>> attr = rt.ParamAttr(name='fc.w', initializer=rt.nn.initializer.Constant(0.5))
    >>> fc = rt.nn.Linear(2, 3, weight_attr=attr)
    >>> fc.weight.name
    'fc.w'
    """

    def __init__(self, name: str | None = None, initializer: Initializer | None = None,
                 learning_rate: float = 1.0, regularizer=None, trainable: bool = True,
                 do_model_average: bool = True, need_clip: bool = True):
        if initializer is not None and not isinstance(initializer, Initializer):
            raise TypeError(f"ParamAttr: initializer must be an Initializer, got "
                            f"{type(initializer).__name__}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = learning_rate
        self.regularizer = regularizer
        self.trainable = trainable
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    @staticmethod
    def to_attr(arg) -> ParamAttr | bool:
        """Normalise a `weight_attr`/`bias_attr` argument; `False` means 'no parameter'."""
        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return False
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        raise TypeError(f"a parameter attribute must be a ParamAttr, a name, an Initializer, "
                        f"None or False, got {type(arg).__name__}")

    def __repr__(self):
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, trainable={self.trainable})")
