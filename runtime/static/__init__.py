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
from ..program.debug_ops import Assert, Print, py_format, py_log, py_print, py_warn  # noqa: F401
from ..program.ir import Program  # noqa: F401
from ..program.variable import Variable  # noqa: F401
from . import nn  # noqa: F401
from .input import InputSpec, data  # noqa: F401
from .globals import create_global_var  # noqa: F401
from ..lazy_names import lazy_names as _lazy_names

# Loaded on first access (not needed to build or run a program): `import runtime` stays light.
_LAZY = {"io": (".io", None), "load_inference_model": (".io", "load_inference_model"),
         "save_inference_model": (".io", "save_inference_model"),
         "accuracy": ("..metric", "accuracy")}


__getattr__, __dir__ = _lazy_names(__name__, _LAZY)
