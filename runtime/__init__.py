"""runtime: tensors with eager autograd, one op registry for eager and static mode, NumPy/CuPy.

>>> import runtime as rt
>>> x = rt.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
>>> y = (rt.tanh(x) * 2).sum()
>>> y.backward()
"""

# ruff: noqa: I001 -- the order is the point: nn builds on the ops, and the Tensor methods
# are installed only once every op module has registered its methods.
from . import backend, dtypes, ops  # noqa: F401
from .autograd import enable_grad, grad, is_grad_enabled, no_grad  # noqa: F401
from .autograd import set_grad_enabled  # noqa: F401
from .backend import get_device, is_compiled_with_cuda, set_device  # noqa: F401
from .dtypes import (  # noqa: F401
    DType, bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8)
from .dtypes import get_default_dtype, set_default_dtype  # noqa: F401
from .ops.combine import *
from .ops.compositions import *
from .ops.creation import *
from .ops.gather import *
from .ops.index import *
from .ops.linalg import *
from .ops.matrix import *
from .ops.counting import *
from .ops.cumulative import *
from .ops.order_stats import *
from .ops.sampling import *
from .ops.scatter_update import *
from .ops.logic import *
from .ops.math import *
from .ops.nn import *
from .ops.random import *
from .ops.reduce import *
from .ops.shape import *
from .ops.tiling import *
from .ops.accumulate import add_n, increment  # noqa: F401
from .ops.unbind import rank, unbind  # noqa: F401
from .dtypes import complex64, complex128  # noqa: F401
from .ops.spectral import complex, imag, real  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .tensor import Tensor, to_tensor  # noqa: F401

from . import nn  # noqa: F401
from .nn.param_attr import ParamAttr  # noqa: F401
from .nn.create import create_parameter  # noqa: F401

from . import amp, data, io, metric, optimizer, quantization, regularizer, vision  # noqa: F401
from . import fft, signal  # noqa: F401
from .serialization import load, save  # noqa: F401
from . import distributed  # noqa: F401
from .distributed import DataParallel  # noqa: F401  (Paddle's paddle.DataParallel)
from . import device, linalg  # noqa: F401
from . import hapi  # noqa: F401
from .hapi import Model, callbacks, flops, summary  # noqa: F401

from . import methods as _methods

_methods.install(Tensor)
from . import static
from .program.builder import disable_static, enable_static, in_dynamic_mode  # noqa: F401
import sys as _sys

from .program import executor  # noqa: E402  (also importable by its old path:)
_sys.modules[__name__ + ".executor"] = executor  # `runtime.executor` is this same module
static.Variable.install_methods(_methods.method_table())
static.Variable.mirror_tensor(Tensor)  # what user code adds to Tensor later: on Variable too
from . import tensor as _tensor_module

for _name in ("create_array", "array_write", "array_read", "array_length"):
    setattr(_tensor_module, _name, getattr(static, _name))  # Paddle's paddle.tensor.* paths
__version__ = "0.1.0"  # the distribution's version (pyproject.toml)
backend.default_device()
bool = bool_  # Paddle spells it rt.bool
