"""The program `d2s.save` writes when no `input_spec` is given: the latest call's program
retraced with the batch dimension (dim 0 of every tensor input) unknown, as Paddle saves it,
so the loaded model accepts any batch size. An `input_spec` given to `to_static` or `save`
fixes the shapes instead.

When the retrace is impossible (the code needs a known batch size, or not every argument of
the latest call is a tensor) the program of the latest call is saved with its batch size, and
a warning says why; feeding another batch size to the loaded model is then an error.
"""
from __future__ import annotations

import warnings


def any_batch_program(sf):
    """The program of `sf`'s latest call, retraced with dim 0 of each input unknown."""
    from runtime.static import InputSpec
    concrete = sf.concrete_program
    specs = [InputSpec((None,) + tuple(v.shape[1:]) if v.shape else (), v.dtype)
             for v in concrete.inputs]
    if all(not v.shape or v.shape[0] == -1 for v in concrete.inputs):
        return concrete  # nothing to free
    try:
        free = sf.get_concrete_program(*specs)
    except Exception as e:  # noqa: BLE001  (reported in the warning; the traced one is saved)
        reason = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    else:
        if len(free.inputs) == len(concrete.inputs):
            return free
        reason = "not every argument of the latest call is a tensor"
    warnings.warn(f"d2s.save: {sf.__name__} is saved for batch size "
                  f"{concrete.inputs[0].shape[0] if concrete.inputs else '?'} only: retracing "
                  f"with an unknown batch size failed ({reason}). Pass input_spec with None "
                  "for the batch dimension to save a model for any batch size.",
                  stacklevel=3)
    return concrete
