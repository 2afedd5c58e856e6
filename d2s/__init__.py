"""d2s: convert eager `runtime` code to static programs with `@d2s.to_static`.

>>> import runtime as rt, d2s
>>> @d2s.to_static
... def f(x, n):
...     s = x
...     for _ in range(n):
...         s = s + x if rt.mean(s) > 0 else s - x
...     return s
>>> f(rt.to_tensor([1.0]), 3).tolist()
[4.0]
"""
from runtime import __version__  # noqa: F401  (one distribution, one version)
from runtime.static import InputSpec  # noqa: F401

from . import (
    breakpoints,  # noqa: F401  (user breakpoints fire in generated code)
    onnx,  # noqa: F401  (as paddle.onnx; `onnx` is imported when an export runs)
)
from .call_policy import ignore_module, not_to_static  # noqa: F401
from .errors import ConversionError, ModelFormatError  # noqa: F401
from .hidden_state import HiddenStateError  # noqa: F401
from .io import TranslatedLayer, load, save  # noqa: F401
from .logging_utils import set_code_level, set_verbosity  # noqa: F401
from .operators.mutation import StateChangeError  # noqa: F401
from .running_grad2 import SecondDerivativeError  # noqa: F401
from .static_function import StaticFunction, enable_to_static, to_static  # noqa: F401


def _install_origin_resolver() -> None:
    """Ops built from generated code record the user's line, not the generated one (and
    d2s.errors remembers the user frames that built them)."""
    from runtime.program import origin as program_origin

    from .errors import resolve_origin

    program_origin.set_origin_resolver(resolve_origin)
    from runtime.program.variable import add_kept_observer

    from .report import kept
    add_kept_observer(kept)
    from runtime.program.variable import add_varying_stop_reader

    from .operators.stop_reads import read_stop_gradient
    add_varying_stop_reader(read_stop_gradient)
    from runtime.program.variable import add_number_attribute_reader

    from .operators.number_or_tensor import attribute_read
    add_number_attribute_reader(attribute_read)
    from runtime.program.variable import add_tensor_attribute_reader

    from .operators.tensor_attributes import read_missing
    add_tensor_attribute_reader(read_missing)
    from runtime.program.variable import add_unknown_shape_reader

    from .operators.attribute_reads import read_unknown_shape
    add_unknown_shape_reader(read_unknown_shape)


_install_origin_resolver()


def _register_with_model() -> None:
    """`rt.Model(net, inputs=[...])` converts with `to_static`, `Model.save(path,
    training=False)` writes with `save` (runtime may not import d2s: it asks this hook)."""
    from runtime.hapi import static_converter

    def convert(layer, input_spec):
        return to_static(layer, input_spec=input_spec)

    def save_inference(layer, path, input_spec):
        save(layer, path, input_spec=input_spec)

    static_converter.register(convert, save_inference)


_register_with_model()
