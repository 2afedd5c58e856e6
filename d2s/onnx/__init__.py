"""`d2s.onnx.export`: a converted function or Layer as an ONNX model (the optional `onnx`
extra: `pip install ".[onnx]"` in the checkout, which also brings onnxruntime to run it).

    >>> import os, tempfile, runtime as rt, d2s
    >>> import d2s.onnx
    >>> @d2s.to_static
    ... def f(x):
    ...     return rt.tanh(x) * 2 if rt.mean(x) > 0 else x - 1
    >>> path = d2s.onnx.export(f, os.path.join(tempfile.mkdtemp(), 'f'),
    ...                        input_spec=[d2s.InputSpec([None, 2])])
    >>> os.path.basename(path)
    'f.onnx'

The static program is translated op by op: `cond` becomes an ONNX `If`, `while` a `Loop`,
tensor arrays ONNX sequences, `None` dims of the InputSpec named dynamic axes (`x_0`, ...).
An op without an ONNX mapping raises `OnnxExportError` naming the op and the user's line.
A Layer is exported in eval mode (as `d2s.save` saves it). The graph's inputs are named as
`d2s.save` names them; when the function takes or returns lists, tuples or dicts, the model's
metadata `d2s.structure` holds their nesting (`runtime.program.model_structure`: rebuild the
outputs with its `build`).
"""
from __future__ import annotations

import json
import os

from runtime.program.passes import eliminate_dead_code

from ..io import as_static_function, inference_program, stored_structure

__all__ = ["OnnxExportError", "export", "to_model", "OPSET"]

OPSET = 18


def _require():
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ImportError("d2s.onnx needs the `onnx` package: pip install onnx onnxruntime "
                          "(or, in the d2s checkout, pip install \".[onnx]\")") from None


def __getattr__(name):
    if name == "OnnxExportError":
        _require()
        from .graph import OnnxExportError
        return OnnxExportError
    raise AttributeError(f"module 'd2s.onnx' has no attribute {name!r}")


def to_model(layer_or_function, input_spec=None, training: bool = False):
    """The `onnx.ModelProto` of the program for `input_spec` (checked by onnx.checker); a
    Layer is traced in eval mode unless `training`, as `d2s.save` does."""
    _require()
    import onnx

    from .exporter import program_to_onnx  # (imports onnx)
    sf = as_static_function(layer_or_function)
    # the program d2s.save writes: eval mode, the Layer's own forward hooks included
    concrete = inference_program(sf, input_spec, training, "d2s.onnx.export")
    feeds = [v.name for v in concrete.inputs]
    fetches = [v.name for v in concrete.outputs]
    program = eliminate_dead_code(concrete.main_program, keep=fetches)
    model = program_to_onnx(program, feeds, fetches, graph_name=getattr(sf, "__name__", "d2s"))
    structure = stored_structure(concrete)
    if structure is not None:  # the nesting of the inputs and outputs, as d2s.save keeps it
        onnx.helper.set_model_props(model, {"d2s.structure": json.dumps(structure)})
    onnx.checker.check_model(model)
    return model


def export(layer_or_function, path: str, input_spec=None, training: bool = False,
           **configs) -> str:
    """Write `path.onnx` (as `paddle.onnx.export`; a path already ending in .onnx is kept) and
    return the file's path. Without `input_spec` the program of the latest call is used. A
    Layer is exported in eval mode unless `training` (see `d2s.save`)."""
    model = to_model(layer_or_function, input_spec, training)
    import onnx
    if not path.endswith(".onnx"):
        path += ".onnx"
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    onnx.save(model, path)
    return path
