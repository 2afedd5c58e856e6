"""`rt.nn`: layers, containers, initializers and the functional API (Paddle 2.x names).

>>> import runtime as rt
>>> model = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.Linear(8, 2))
>>> [name for name, _ in model.named_parameters()]
['0.weight', '0.bias', '1.weight', '1.bias']
"""
from . import functional, initializer, utils  # noqa: F401
from .clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue  # noqa: F401
from .container import LayerDict, LayerList, ParameterList, Sequential  # noqa: F401
from .layer import Layer  # noqa: F401
from .layers import *
from .param_attr import ParamAttr  # noqa: F401
