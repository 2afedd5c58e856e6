"""Automatic mixed precision: the framework picks each op's precision.

Every op has an AMP category: Paddle 3.3.1's lists in `lists.py` (with this registry's op
names and the documented differences) decide it for the ops they name, and the op's registry
entry (`OpDef.amp`) for the rest:

- 'white' (matmul, conv2d, linear, einsum): numerically safe and fast in low precision; float32
  inputs are cast to float16 / bfloat16.
- 'black' (exp, log, pow, cumsum, prod, softmax, norms, losses, embedding, scatter, resize):
  need float32 range or accuracy; low-precision inputs are cast up to float32.
- 'promote' (elementwise ops, relu, ...): run in the precision of their inputs; when float
  inputs disagree (a float16 activation plus a float32 bias) all are cast to the widest, so
  an op whose inputs are all float32 stays float32 (Paddle's `use_promote=True`).
- 'keep' (indexing, shape ops, casts, comparisons, optimizer updates): untouched.

`custom_white_list` / `custom_black_list` move ops by name. Level 'O2' is meant for models whose
parameters `decorate` has cast to low precision (the optimizers keep float32 master weights);
with `use_promote=False` it also runs every promote op in low precision.

The casts are ordinary `cast` ops, applied in `registry.bind` (eager) and `Builder.bind`
(static) before the op runs, so gradients flow back through them and static programs show
them. Float64 inputs are never touched (they are deliberate).
"""
from __future__ import annotations

import functools
import warnings

from .. import backend, dtypes
from ..dtypes import DType
from ..ops.math import cast
from ..ops.registry import OPS, STATE
from . import lists

_LEVELS = ("O0", "O1", "O2")
_LOW = (dtypes.float16, dtypes.bfloat16)


class AmpState:
    """The auto_cast settings in force; `registry.bind` calls `cast_inputs` on every op."""

    __slots__ = ("dtype", "key", "level", "overrides", "use_promote")

    def __init__(self, dtype: DType, level: str, white=(), black=(), use_promote: bool = True):
        self.dtype = dtype
        self.level = level
        self.use_promote = bool(use_promote) or level != "O2"  # Paddle: only O2 reads it
        self.overrides = {**{n: "white" for n in white}, **{n: "black" for n in black}}
        # What a program traced under these settings depends on (see `state_key`)
        self.key = (dtype.name, level, tuple(sorted(self.overrides.items())))
        if not self.use_promote:
            self.key += ("no_promote",)

    def category(self, op) -> str:
        cat = self.overrides.get(op.name)
        if cat is None:
            cat = lists.category(op.name, op.amp, self.level)
        if cat == "promote" and not self.use_promote:
            return "white"
        return cat

    def cast_inputs(self, op, inputs):
        cat = self.category(op)
        if cat == "keep":
            return inputs
        if cat == "white":
            target, wanted = self.dtype, _to_low
        elif cat == "black":
            target, wanted = dtypes.float32, _to_float32
        else:
            target = _widest(inputs)
            if target is None:
                return inputs
            wanted = _to_widest
        return tuple(_cast_one(x, target, wanted) for x in inputs)


def _to_low(dt: DType, target: DType) -> bool:
    return dt is dtypes.float32 or (dt in _LOW and dt is not target)


def _to_float32(dt: DType, target: DType) -> bool:
    return dt in _LOW


def _to_widest(dt: DType, target: DType) -> bool:
    return dt.is_floating and dt is not target


def _float_dtype(x):
    dt = getattr(x, "dtype", None)
    return dt if isinstance(dt, DType) and dt.is_floating else None


def _widest(inputs):
    """The common float type of mixed-precision float inputs, or None if they agree."""
    seen = None
    mixed = False
    for x in inputs:
        for t in (x if isinstance(x, (list, tuple)) else (x,)):
            dt = _float_dtype(t)
            if dt is None:
                continue
            if seen is None:
                seen = dt
            elif dt is not seen:
                mixed = True
                seen = dtypes.promote(seen, dt)
    return seen if mixed else None


def _cast_one(x, target, wanted):
    if isinstance(x, (list, tuple)):
        return type(x)(_cast_one(t, target, wanted) for t in x)
    dt = _float_dtype(x)
    if dt is None or not wanted(dt, target):
        return x
    return cast(x, target)


class auto_cast:  # Paddle's name; a context manager and a decorator
    """Run the ops inside in mixed precision.

    >>> import runtime as rt
    >>> x, w = rt.ones([2, 3]), rt.ones([3, 4])
    >>> with rt.amp.auto_cast():
    ...     y = rt.matmul(x, w)      # white: float16
    ...     z = rt.exp(y)            # black: float32
    >>> y.dtype.name, z.dtype.name
    ('float16', 'float32')
    """

    def __init__(self, enable: bool = True, custom_white_list=None, custom_black_list=None,
                 level: str = "O1", dtype: str = "float16", use_promote: bool = True):
        if level not in _LEVELS:
            raise ValueError(f"auto_cast: level must be one of {_LEVELS}, got {level!r}")
        low = dtypes.convert_dtype(dtype)
        if low not in _LOW:
            raise ValueError(f"auto_cast: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
        white, black = _names(custom_white_list, "white"), _names(custom_black_list, "black")
        both = sorted(set(white) & set(black))
        if both:
            raise ValueError(f"auto_cast: {both} are in both custom_white_list and "
                             "custom_black_list")
        self._state = (AmpState(low, level, white, black, use_promote)
                       if enable and level != "O0" else None)
        self._saved: list = []  # a stack: a decorated function may recurse into itself

    def __enter__(self):
        if self._state is not None:
            device = backend.get_device()
            if device == "cpu" and not _warned:
                _warn_cpu(self._state.dtype)
            elif device != "cpu" and self._state.dtype is dtypes.bfloat16:
                raise RuntimeError(f"auto_cast(dtype='bfloat16') on {device}: CuPy has no "
                                   "bfloat16 arrays; use dtype='float16' on the GPU (bfloat16 "
                                   "runs, emulated, on the CPU)")
        self._saved.append(STATE.amp)
        STATE.amp = self._state
        return self

    def __exit__(self, *exc):
        STATE.amp = self._saved.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


amp_guard = auto_cast

_warned = False


def _warn_cpu(dtype):
    global _warned
    _warned = True
    warnings.warn(f"auto_cast on the CPU: {dtype.name} arithmetic is emulated in software "
                  "here (about 10x slower than float32); use it to test accuracy, not for "
                  "speed", UserWarning, stacklevel=3)


def _names(names, which: str) -> tuple:
    if names is None:
        return ()
    if isinstance(names, str):
        names = [names]
    unknown = sorted(n for n in names if n not in OPS)
    if unknown:
        raise ValueError(f"auto_cast: custom_{which}_list names unknown ops {unknown}; op names "
                         f"are the registry's (e.g. 'matmul', 'softmax', 'add')")
    return tuple(names)


def state_key():
    """A hashable summary of the auto_cast settings in force (None outside auto_cast).

    Static programs bake the casts in when traced, so a cache of traced programs (d2s's
    StaticFunction) must include this in its key.

    >>> import runtime as rt
    >>> with rt.amp.auto_cast(level='O2'):
    ...     rt.amp.state_key()
    ('float16', 'O2', ())
    """
    return None if STATE.amp is None else STATE.amp.key


def _in_force(category: str) -> set:
    state = STATE.amp
    if state is None:
        return {name for name, op in OPS.items()
                if lists.category(name, op.amp, "O1") == category}
    return {name for name, op in OPS.items() if state.category(op) == category}


def white_list() -> set:
    """Names of the ops that run in low precision: under the auto_cast in force (with its
    custom lists and level), or by default outside one.

    >>> import runtime as rt
    >>> 'matmul' in rt.amp.white_list()
    True
    """
    return _in_force("white")


def black_list() -> set:
    """Names of the ops kept in float32 (see `white_list`)."""
    return _in_force("black")


def _device(device) -> str:
    return backend.get_device() if device is None else str(device)


def is_float16_supported(device=None) -> bool:
    """Whether `device` (default: the current one) computes float16 natively, as Paddle's:
    False on the CPU, where NumPy emulates float16 (correct, but slower than float32);
    True on a GPU.

    >>> import runtime as rt
    >>> rt.amp.is_float16_supported('cpu')
    False
    """
    return _device(device).startswith("gpu")


def is_bfloat16_supported(device=None) -> bool:
    """Whether `device` computes bfloat16 natively: False everywhere here. On the CPU
    bfloat16 is emulated (ml_dtypes); CuPy has no bfloat16 arrays.

    >>> import runtime as rt
    >>> rt.amp.is_bfloat16_supported('cpu')
    False
    """
    _device(device)
    return False


# Normalisation layers keep float32 parameters under O2: their statistics need the range.
_KEEP_FLOAT32_LAYERS = ("BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "LayerNorm",
                        "GroupNorm", "InstanceNorm1D", "InstanceNorm2D", "SyncBatchNorm")


def decorate(models, optimizers=None, level: str = "O2", dtype: str = "float16",
             master_weight: bool | None = None, save_dtype=None, excluded_layers=None):
    """Prepare models and optimizers for pure low-precision training (level 'O2').

    Parameters of every layer except normalisation layers (and `excluded_layers`, types or
    instances) are cast to `dtype` in place; optimizers keep float32 master weights (taken
    from the float32 values before the cast) unless `master_weight=False`. Level 'O1' returns
    its arguments unchanged. Returns `models` or `(models, optimizers)`, shaped as given.

    Outside auto_cast, each layer with parameters casts its floating tensor inputs to its
    parameters' dtype (a forward pre-hook), so the decorated model also runs, in `dtype`,
    without auto_cast (inside one, the auto_cast rules decide).

    >>> import runtime as rt
    >>> model = rt.nn.Linear(4, 2)
    >>> opt = rt.optimizer.SGD(0.1, parameters=model.parameters())
    >>> model, opt = rt.amp.decorate(model, opt, level='O2')
    >>> model.weight.dtype.name
    'float16'
    """
    if level not in ("O1", "O2"):
        raise ValueError(f"decorate: level must be 'O1' or 'O2', got {level!r}")
    if save_dtype is not None:
        raise ValueError("decorate: save_dtype is not supported; cast the state dict when saving")
    low = dtypes.convert_dtype(dtype)
    if low not in _LOW:
        raise ValueError(f"decorate: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    model_list = models if isinstance(models, (list, tuple)) else [models]
    opt_list = ([] if optimizers is None else
                optimizers if isinstance(optimizers, (list, tuple)) else [optimizers])
    if level == "O2":
        excluded = tuple(excluded_layers or ())
        originals = {}
        for model in model_list:
            for p in _params_to_cast(model, excluded):
                if p.dtype is dtypes.float32:
                    originals[id(p)] = p._data
                    p._data = p._data.astype(low.np)
                    p._version += 1
        for model in model_list:
            _add_input_casts(model)
        if master_weight is not False:
            for opt in opt_list:
                opt._multi_precision = True
                for p in opt._parameter_list or ():
                    if id(p) in originals:
                        opt._seed_master_weight(p, originals[id(p)])
    if optimizers is None:
        return models
    return models, optimizers


def _add_input_casts(model):
    for layer in model.sublayers(include_self=True):
        if layer.parameters(include_sublayers=False) and \
                not getattr(layer, "_amp_input_cast", False):
            layer.register_forward_pre_hook(_cast_to_params)
            object.__setattr__(layer, "_amp_input_cast", True)


def _cast_to_params(layer, inputs):
    """Forward pre-hook of an O2-decorated layer: float inputs in its parameters' dtype."""
    if STATE.amp is not None:
        return None
    target = next((p.dtype for p in layer.parameters(include_sublayers=False)
                   if p.dtype in (dtypes.float32,) + _LOW), None)
    if target is None:
        return None
    return tuple(_cast_one(x, target, _is_other_float) for x in inputs)


def _is_other_float(dt: DType, target: DType) -> bool:
    return dt is not target and (dt is dtypes.float32 or dt in _LOW)


def _params_to_cast(model, excluded) -> list:
    out = []
    for layer in model.sublayers(include_self=True):
        if type(layer).__name__ in _KEEP_FLOAT32_LAYERS or _is_excluded(layer, excluded):
            continue
        out.extend(layer.parameters(include_sublayers=False))
    return out


def _is_excluded(layer, excluded) -> bool:
    return any(layer is e or (isinstance(e, type) and isinstance(layer, e)) for e in excluded)


__all__ = [
    "amp_guard",
    "auto_cast",
    "black_list",
    "decorate",
    "is_bfloat16_supported",
    "is_float16_supported",
    "state_key",
    "white_list",
]
