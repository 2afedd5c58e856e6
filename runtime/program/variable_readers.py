"""The hooks through which d2s answers reads of a `Variable` (runtime itself never imports
d2s): each list holds functions d2s adds when it is imported (`d2s/__init__.py`)."""
from __future__ import annotations

# Called as fn(variable, what) when `.numpy()`/`.item()` keep a value in the graph (d2s notes
# it in its conversion report); runtime itself never imports d2s.
_KEPT_OBSERVERS: list = []


def add_kept_observer(fn) -> None:
    """Call `fn(variable, what)` whenever `v.numpy()` / `v.item()` / `v.tolist()` keeps a
    value in the graph (`what` is 'numpy', 'item' or 'tolist')."""
    if fn not in _KEPT_OBSERVERS:
        _KEPT_OBSERVERS.append(fn)


def _kept(v, what: str) -> None:
    for fn in _KEPT_OBSERVERS:
        fn(v, what)


# Called as `fn(variable)` when code reads the stop_gradient of a value whose flag differs
# between the trips of the graph loop that carries it (`Variable.stop_varies`): d2s refuses
# such a read from converted user code, a Python decision eager code makes per trip; or
# between runs (`stop_when`): d2s gives converted user code the flag of the run, a bool value.
_VARYING_STOP_READERS: list = []
# Called as `fn(variable, name)` when code reads a public attribute of a value that is a Python
# number on some runs or all (`number_when`, `python_scalar`): d2s gives eager's AttributeError.
_NUMBER_ATTRIBUTE_READERS: list = []
# Called as `fn(variable, name)` for an attribute of eager's Tensor that a Variable lacks
# (`is_leaf`, `grad`): d2s gives converted user code eager's answer (NotImplemented: not its)
_TENSOR_ATTRIBUTE_READERS: list = []
# Called as `fn(variable)` when code reads the shape of a value with a dim unknown until the
# program runs (-1): d2s gives Python code it did not convert, read while it traces (a
# property's getter, a library's function), the run's dims (NotImplemented: not its read)
_UNKNOWN_SHAPE_READERS: list = []
_adding = lambda readers: lambda fn: None if fn in readers else readers.append(fn)
add_varying_stop_reader = _adding(_VARYING_STOP_READERS)
add_number_attribute_reader = _adding(_NUMBER_ATTRIBUTE_READERS)
add_tensor_attribute_reader = _adding(_TENSOR_ATTRIBUTE_READERS)
add_unknown_shape_reader = _adding(_UNKNOWN_SHAPE_READERS)
