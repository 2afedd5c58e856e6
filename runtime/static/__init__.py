"""`rt.static`: hand-written static programs, and the target that d2s writes into.

>>> import numpy as np, runtime as rt
>>> main = rt.static.Program()
>>> with rt.static.program_guard(main):
...     x = rt.static.data('x', [None, 3], 'float32')
...     y = rt.tanh(x) * 2.0
>>> out, = rt.static.Executor().run(main, feed={'x': np.zeros((2, 3), 'float32')},
...                                 fetch_list=[y])
>>> out.shape
(2, 3)
"""
import importlib
import sys

from ..program.executor import Executor, FeedError, FetchError  # noqa: F401
from ..program import passes  # noqa: F401
from ..ops.arrays import (  # noqa: F401
    array_concat,
    array_length,
    array_read,
    array_stack,
    array_write,
    create_array,
)
from ..program.backward import append_backward, gradients  # noqa: F401
from ..program.builder import (  # noqa: F401
    default_main_program,
    default_startup_program,
    disable_static,
    enable_static,
    in_dynamic_mode,
    program_guard,
)
from ..program.debug_ops import Assert, Print, py_print  # noqa: F401
from ..program.ir import Program  # noqa: F401
from ..program.variable import Variable  # noqa: F401
from . import nn  # noqa: F401
from .input import InputSpec, data  # noqa: F401
from .globals import create_global_var  # noqa: F401

# Loaded on first access (not needed to build or run a program): `import runtime` stays light.
_LAZY = {"io": (".io", None), "load_inference_model": (".io", "load_inference_model"),
         "save_inference_model": (".io", "save_inference_model"),
         "accuracy": ("..metric", "accuracy")}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'runtime.static' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name, __name__)
    value = module if attribute is None else getattr(module, attribute)
    setattr(sys.modules[__name__], name, value)  # (`globals` here is the submodule .globals)
    return value


def __dir__():
    return sorted(set(vars(sys.modules[__name__])) | set(_LAZY))
