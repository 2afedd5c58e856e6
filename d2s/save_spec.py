"""What `d2s.save`, `d2s.onnx.export` and `d2s export` trace: the input spec and the mode.

**The mode.** A saved model is an inference model, so a Layer (and every sublayer) is switched
to eval mode for the trace and restored afterwards (`inference_mode`): Dropout is off and
BatchNorm uses its running statistics, whatever mode the Layer was left in by training. When
the Layer was in training mode one warning names the switch; `training=True` keeps training
mode (a random, batch-statistics program, as `d2s.save(..., training=True)` documents).

**The input spec** when none is given: the latest call's inputs with the batch dimension (dim
0 of every tensor input) unknown, as Paddle saves them, so the loaded model accepts any batch
size. An `input_spec` given to `to_static` fixes the shapes instead. When the function cannot
be traced with an unknown batch size (its code needs the batch size as a number), the latest
call's shapes are kept and a warning says why. A plain function whose latest call had
non-tensor arguments saves the latest program as traced; a Layer is always traced again, in
the mode above, so that case is an error asking for `input_spec`.
"""
from __future__ import annotations

import contextlib
import os
import sys
import warnings

import runtime as rt
from runtime.static import InputSpec

_D2S = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def inference_mode(layer, training: bool, what: str):
    """Within: `layer` (a Layer or None) and its sublayers in eval mode, unless `training`;
    every sublayer's own flag restored afterwards. Warns once when the switch changed a mode."""
    if training or not isinstance(layer, rt.nn.Layer):
        yield
        return
    modes = [(sub, sub.training) for sub in layer.sublayers(include_self=True)]
    switched = [sub for sub, was_training in modes if was_training]
    if switched:
        warnings.warn(
            f"{what}: {type(layer).__name__} is in training mode; it is traced in eval mode "
            f"(Dropout off, BatchNorm on its running statistics: an inference model) and put "
            f"back in training mode afterwards. Call .eval() before saving to silence this, or "
            f"pass training=True to save the training-mode program.",
            stacklevel=_outside_d2s())
    layer.eval()
    try:
        yield
    finally:
        for sub, was_training in modes:
            sub.training = was_training


def any_batch_spec(sf):
    """InputSpecs for `sf`'s latest call with dim 0 unknown (or `to_static`'s input_spec), or
    None when the latest program of a plain function must be saved as traced."""
    if sf.spec.input_spec is not None:
        return list(sf.spec.input_spec)
    concrete = sf.concrete_program
    exact = [InputSpec(tuple(v.shape), v.dtype, v.name) for v in concrete.inputs]
    retrace = sf.instance is not None  # a Layer's latest call may be of another mode
    if all(not v.shape or v.shape[0] == -1 for v in concrete.inputs):
        return _retraced(sf, exact) if retrace else None
    specs = [InputSpec((None,) + tuple(v.shape[1:]) if v.shape else (), v.dtype, v.name)
             for v in concrete.inputs]
    cache = sf.program_cache
    latest = cache.latest()
    try:
        free = sf.get_concrete_program(*specs)
    except Exception as e:  # noqa: BLE001  (reported in the warning; the traced one is saved)
        reason = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    else:
        if _numbers(cache.latest()[0]) != _numbers(latest[0]):
            # (specs stand for the tensors only: the others took their defaults, which the
            # latest call did not pass: that call's program, as traced, is the one to save)
            if retrace:
                raise ValueError(
                    f"d2s.save: {sf.__name__}'s latest call passed arguments that are not "
                    "tensors with values other than their defaults: pass input_spec (one "
                    "InputSpec per tensor argument) and bind the others (functools.partial)")
            reason = "the latest call passed numbers or strs other than their defaults"
        elif len(free.inputs) == len(concrete.inputs):
            return specs
        else:
            reason = "not every argument of the latest call is a tensor"
    cache.put_back(latest)  # (the latest call's program, saved as traced)
    warnings.warn(f"d2s.save: {sf.__name__} is saved for batch size "
                  f"{concrete.inputs[0].shape[0] if concrete.inputs else '?'} only: retracing "
                  f"with an unknown batch size failed ({reason}). Pass input_spec with None "
                  "for the batch dimension to save a model for any batch size.",
                  stacklevel=_outside_d2s())
    return _retraced(sf, exact) if retrace else None


def _numbers(key) -> list:
    """The Python numbers and strs of a program cache key (`FunctionSpec.key`)."""
    return [p for p in key or () if type(p) is tuple and len(p) == 2 and isinstance(p[0], type)]


def _retraced(sf, exact: list):
    """`exact` (the latest call's shapes) when tracing it again takes the same inputs."""
    try:
        again = sf.get_concrete_program(*exact)
    except Exception:  # noqa: BLE001  (the latest call had arguments a spec cannot give)
        again = None
    if again is None or len(again.inputs) != len(exact):
        raise ValueError(f"d2s.save: {sf.__name__}'s latest call had arguments that are not "
                         "tensors, so it cannot be traced again in eval mode: pass input_spec "
                         "(one InputSpec per tensor argument)")
    return exact


def _outside_d2s() -> int:
    """The warnings stacklevel of the first caller outside d2s (and contextlib): the user's
    line that saved or exported."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (frame.f_code.co_filename.startswith(_D2S)
                                 or frame.f_code.co_filename == contextlib.__file__):
        frame, level = frame.f_back, level + 1
    return level
