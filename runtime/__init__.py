"""runtime: tensors with eager autograd, one op registry for eager and static mode, NumPy/CuPy.

>>> import runtime as rt
>>> x = rt.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
>>> y = (rt.tanh(x) * 2).sum()
>>> y.backward()
"""
from . import backend, dtypes, ops  # noqa: F401
from .autograd import enable_grad, grad, is_grad_enabled, no_grad  # noqa: F401
from .backend import get_device, is_compiled_with_cuda, set_device  # noqa: F401
from .dtypes import (  # noqa: F401
    DType, bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8)
from .ops.combine import *  # noqa: F401,F403
from .ops.creation import *  # noqa: F401,F403
from .ops.gather import *  # noqa: F401,F403
from .ops.index import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.logic import *  # noqa: F401,F403
from .ops.math import *  # noqa: F401,F403
from .ops.nn import *  # noqa: F401,F403
from .ops.random import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .parameter import Parameter  # noqa: F401
from .tensor import Tensor, to_tensor  # noqa: F401

from . import nn  # noqa: E402,F401  (layers are built on the ops above)
from .nn.param_attr import ParamAttr  # noqa: E402,F401

from . import amp, io, optimizer, quantization, regularizer  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401

from . import methods as _methods  # noqa: E402

_methods.install(Tensor)
from . import static  # noqa: E402,F401  (static programs: rt.static)
from .program.builder import disable_static, enable_static, in_dynamic_mode  # noqa: E402,F401
static.Variable.install_methods(_methods.method_table())
backend.default_device()
bool = bool_  # noqa: A001  (Paddle spells it rt.bool)
