"""The input spec `d2s.save` uses when none is given: the latest call's inputs with the batch
dimension (dim 0 of every tensor input) unknown, as Paddle saves them, so the loaded model
accepts any batch size. An `input_spec` given to `to_static` fixes the shapes instead.

When the function cannot be traced with an unknown batch size (its code needs the batch size
as a number, or not every argument of the latest call is a tensor), None is returned and the
latest call's program is saved with its batch size; a warning says why.
"""
from __future__ import annotations

import warnings


def any_batch_spec(sf):
    """InputSpecs for `sf`'s latest call with dim 0 unknown (or `to_static`'s input_spec), or
    None when the latest program must be saved as traced."""
    from runtime.static import InputSpec
    if sf.spec.input_spec is not None:
        return list(sf.spec.input_spec)
    concrete = sf.concrete_program
    if all(not v.shape or v.shape[0] == -1 for v in concrete.inputs):
        return None  # nothing to free: save the latest program
    specs = [InputSpec((None,) + tuple(v.shape[1:]) if v.shape else (), v.dtype)
             for v in concrete.inputs]
    try:
        free = sf.get_concrete_program(*specs)
    except Exception as e:  # noqa: BLE001  (reported in the warning; the traced one is saved)
        reason = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    else:
        if len(free.inputs) == len(concrete.inputs):
            return specs
        reason = "not every argument of the latest call is a tensor"
    warnings.warn(f"d2s.save: {sf.__name__} is saved for batch size "
                  f"{concrete.inputs[0].shape[0] if concrete.inputs else '?'} only: retracing "
                  f"with an unknown batch size failed ({reason}). Pass input_spec with None "
                  "for the batch dimension to save a model for any batch size.",
                  stacklevel=3)
    return None
