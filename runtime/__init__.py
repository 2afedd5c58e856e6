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
from .lazy_names import lazy_names as _lazy_names
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
from .ops.diagonals import *
from .ops.nan_aware import *
from .ops.axis_steps import *
from .ops.tensor_queries import *
from .ops.transcendental import *
from .ops.matrix_products import *
from .ops.signs_and_nans import *
from .ops.rearrange import *
from .ops.factorizations import cholesky  # noqa: F401  (paddle.cholesky; the rest: rt.linalg)
from .ops.accumulate import add_n, increment  # noqa: F401
from .ops.unbind import rank, unbind  # noqa: F401
from .dtypes import complex64, complex128  # noqa: F401
from .ops.spectral import complex, imag, real  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .tensor import Tensor, to_tensor  # noqa: F401

# The parts a program needs only when it uses them load on first access (`rt.nn`,
# `rt.optimizer`, `rt.Model`...): `import runtime` stays a fraction of a second.
# `from runtime import nn` and `import runtime.nn` work as for any submodule.
_LAZY = {  # public name -> (module, attribute of it, or None for the module itself)
    "nn": (".nn", None), "ParamAttr": (".nn.param_attr", "ParamAttr"),
    "create_parameter": (".nn.create", "create_parameter"),
    "amp": (".amp", None), "data": (".data", None), "io": (".io", None),
    "metric": (".metric", None), "optimizer": (".optimizer", None),
    "quantization": (".quantization", None), "regularizer": (".regularizer", None),
    "vision": (".vision", None), "load": (".serialization", "load"),
    "save": (".serialization", "save"), "distributed": (".distributed", None),
    "DataParallel": (".distributed", "DataParallel"),  # Paddle's paddle.DataParallel
    "device": (".device", None), "linalg": (".linalg", None), "hapi": (".hapi", None),
    "Model": (".hapi", "Model"), "callbacks": (".hapi", "callbacks"),
    "flops": (".hapi", "flops"), "summary": (".hapi", "summary"),
    "fft": (".fft", None), "signal": (".signal", None),
}


__getattr__, __dir__ = _lazy_names(__name__, _LAZY)


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
