"""Activation layers: thin Layers over `rt.nn.functional` (Paddle names and arguments).

The layers without arguments are one table row each (`_activation`); those with arguments
keep their Paddle signature and store the arguments (`_args`) that `_Activation` passes on.
"""
from __future__ import annotations

from .. import functional as F
from ..initializer import Constant
from ..layer import Layer
from .compat import check_ignored


class _Activation(Layer):
    """forward(x) is `_function(x, *self._args)`; `extra_repr` names the arguments by ARGS."""

    ARGS: tuple = ()
    _args: tuple = ()

    def __init__(self, name=None):
        super().__init__()

    def forward(self, x):
        return self._function(x, *self._args)

    def extra_repr(self) -> str:
        return ", ".join(f"{arg}={value}" for arg, value in zip(self.ARGS, self._args))


def _activation(name: str, function, doc: str) -> type:
    """An activation layer class without arguments: forward(x) is `function(x)`."""
    return type(name, (_Activation,),
                {"__doc__": doc, "__module__": __name__, "_function": staticmethod(function)})


ReLU = _activation("ReLU", F.relu, """max(x, 0).

    >>> import runtime as rt
    >>> rt.nn.ReLU()(rt.to_tensor([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """)
ReLU6 = _activation("ReLU6", F.relu6, "min(max(x, 0), 6).")
Sigmoid = _activation("Sigmoid", F.sigmoid, "1 / (1 + exp(-x)).")
class Silu(_Activation):
    """x * sigmoid(x). `inplace` is accepted (results are the same; nothing is reused)."""

    _function = staticmethod(F.silu)

    def __init__(self, name=None, inplace: bool = False):
        check_ignored("Silu", inplace=inplace)
        super().__init__(name)


SiLU = Silu  # PyTorch's spelling of the same layer, used by ported scripts
Swish = _activation("Swish", F.swish, "x * sigmoid(x) (Paddle's name; the same as Silu).")
Hardswish = _activation("Hardswish", F.hardswish, "x * relu6(x + 3) / 6 (MobileNetV3).")
Tanh = _activation("Tanh", F.tanh, "tanh(x).")
Mish = _activation("Mish", F.mish, "x * tanh(softplus(x)).")
LogSigmoid = _activation("LogSigmoid", F.log_sigmoid, "log(sigmoid(x)), finite for any x.")
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, "clip(x / 6 + 1/2, 0, 1).")


class LeakyReLU(_Activation):
    """x where x >= 0, else negative_slope * x."""

    ARGS = ("negative_slope",)
    _function = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope: float = 0.01, name=None):
        super().__init__()
        self._args = (negative_slope,)


class GELU(_Activation):
    """x * Phi(x); `approximate=True` uses the tanh formula."""

    ARGS = ("approximate",)
    _function = staticmethod(F.gelu)

    def __init__(self, approximate: bool = False, name=None):
        super().__init__()
        self._args = (approximate,)


class Softplus(_Activation):
    """log(1 + exp(beta * x)) / beta, linear above `threshold`."""

    ARGS = ("beta", "threshold")
    _function = staticmethod(F.softplus)

    def __init__(self, beta: float = 1, threshold: float = 20, name=None):
        super().__init__()
        self._args = (beta, threshold)


class _AlongAxis(_Activation):
    ARGS = ("axis",)

    def __init__(self, axis: int = -1, name=None):
        super().__init__()
        self._args = (axis,)


class Softmax(_AlongAxis):
    """softmax along `axis` (default -1)."""

    _function = staticmethod(F.softmax)


class LogSoftmax(_AlongAxis):
    """log(softmax(x)) along `axis`, computed stably."""

    _function = staticmethod(F.log_softmax)


class ELU(_Activation):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    ARGS = ("alpha",)
    _function = staticmethod(F.elu)

    def __init__(self, alpha: float = 1.0, name=None):
        super().__init__()
        self._args = (alpha,)


class Hardtanh(_Activation):
    """clip(x, min, max)."""

    ARGS = ("min", "max")
    _function = staticmethod(F.hardtanh)

    def __init__(self, min: float = -1.0, max: float = 1.0, name=None):
        super().__init__()
        self._args = (min, max)


class PReLU(Layer):
    """max(x, 0) + weight * min(x, 0) with a learned slope: one shared (`num_parameters=1`)
    or one per channel (axis 1 for NC... data formats, the last axis otherwise), starting at
    `init`.

    >>> import runtime as rt
    >>> rt.nn.PReLU()(rt.to_tensor([-2.0, 3.0])).tolist()
    [-0.5, 3.0]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, weight_attr=None,
                 data_format: str = "NCHW", name=None):
        super().__init__()
        self._num_parameters, self._data_format = num_parameters, data_format
        self.weight = self.create_parameter([num_parameters], attr=weight_attr,
                                            default_initializer=Constant(init))

    def forward(self, x):
        return F.prelu(x, self.weight, data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"num_parameters={self._num_parameters}, data_format={self._data_format}"


Tanhshrink = _activation("Tanhshrink", F.tanhshrink, "x - tanh(x).")
Softsign = _activation("Softsign", F.softsign, "x / (1 + |x|).")


class SELU(_Activation):
    """scale * (x for x > 0, alpha * (exp(x) - 1) otherwise)."""

    ARGS = ("scale", "alpha")
    _function = staticmethod(F.selu)

    def __init__(self, scale: float = 1.0507009873554804934193349852946,
                 alpha: float = 1.6732632423543772848170429916717, name=None):
        super().__init__()
        self._args = (scale, alpha)


class CELU(_Activation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    ARGS = ("alpha",)
    _function = staticmethod(F.celu)

    def __init__(self, alpha: float = 1.0, name=None):
        super().__init__()
        self._args = (alpha,)


class Hardshrink(_Activation):
    """x where |x| > threshold, else 0."""

    ARGS = ("threshold",)
    _function = staticmethod(F.hardshrink)

    def __init__(self, threshold: float = 0.5, name=None):
        super().__init__()
        self._args = (threshold,)


class Softshrink(Hardshrink):
    """x - threshold above it, x + threshold below -threshold, else 0."""

    _function = staticmethod(F.softshrink)


class ThresholdedReLU(_Activation):
    """x where x > threshold, else `value`."""

    ARGS = ("threshold", "value")
    _function = staticmethod(F.thresholded_relu)

    def __init__(self, threshold: float = 1.0, value: float = 0.0, name=None):
        super().__init__()
        self._args = (threshold, value)


class GLU(_AlongAxis):
    """The gated linear unit along `axis`: halves a and b, a * sigmoid(b)."""

    _function = staticmethod(F.glu)


class Maxout(Layer):
    """The maximum over each run of `groups` consecutive channels along `axis`."""

    def __init__(self, groups: int, axis: int = 1, name=None):
        super().__init__()
        self._groups, self._axis = groups, axis

    def forward(self, x):
        return F.maxout(x, self._groups, self._axis)

    def extra_repr(self) -> str:
        return f"groups={self._groups}, axis={self._axis}"
