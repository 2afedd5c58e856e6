"""The op registry: every op is defined once and serves eager and static mode alike.

An `OpDef` holds everything about one op:

- `kernel(xp, *arrays, **attrs)`: computes the outputs from NumPy/CuPy arrays (`xp` is the
  array module of the current device). Returns one array or a tuple of arrays.
- `infer(*metas, **attrs)`: shape/dtype inference on `Meta`s (shape tuples where -1 is an
  unknown dim). Static mode calls it for every op it builds; eager mode calls it only when the
  kernel fails, to turn a NumPy error into one that names the op, the argument and the shapes.
- `grad(inputs, outputs, grads, attrs)`: the gradient rule, written with other ops, so the same
  rule runs eagerly (on Tensors) and builds static backward programs (on Variables), and
  differentiating it again gives higher-order gradients. Returns one grad (or None) per input.
- `amp`: 'white' (runs in low precision under auto_cast), 'black' (always float32), 'promote'
  (inputs cast to their widest float type), or 'keep' (no float inputs to cast).

`bind(op, inputs, attrs)` is the single entry point. Eager mode computes now and records a tape
node; while a static program is being built (`STATE.builder` is set) the builder appends an op.
An input is a Tensor/Variable, a Python scalar (kept as a literal), or a list of tensors.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import backend, core, dtypes
from ..dtypes import DType, of_array


class Meta(NamedTuple):
    """What static shape/dtype inference knows about a value: -1 marks an unknown dim."""

    shape: tuple
    dtype: DType


class OpDef:
    __slots__ = ("amp", "doc", "grad", "infer", "kernel", "name", "nondiff", "printer", "random",
                 "refuses_exact")

    def __init__(self, name, kernel, infer, grad, amp, nondiff, doc, printer, random=False):
        self.name = name
        self.kernel = kernel
        self.infer = infer
        self.grad = grad
        self.amp = amp
        self.nondiff = nondiff
        self.doc = doc
        self.printer = printer
        # Draws from the generator at run time: never constant-folded, merged or dropped
        self.random = random
        # The inputs where `infer` refuses some integer or bool dtype, which eager calls
        # check by it (`_check_dtypes`); None until the first eager call
        self.refuses_exact = None

    def __repr__(self):
        return f"<op {self.name}>"


# Ops registered by a module that `import runtime` loads only on first use (`rt.quantization`):
# looking such an op up by name imports that module, so a program saved or built elsewhere
# runs in a process that never imported it. tests/test_lazy_imports.py keeps this complete.
REGISTERED_BY = {
    "fake_quant_dequant_abs_max": "runtime.quantization.fake_quant",
    "fake_channel_wise_quant_dequant_abs_max": "runtime.quantization.fake_quant",
    "moving_average_abs_max_scale": "runtime.quantization.fake_quant",
    "fake_quant_dequant": "runtime.quantization.fake_quant",
    "dequantize_linear": "runtime.quantization.int8",
    "lr_schedule_step": "runtime.optimizer.lr",
}


class OpTable(dict):
    """name -> OpDef; `[name]`, `.get(name)` and `name in` also find the ops of
    `REGISTERED_BY`, importing the module that registers them (the one place that does)."""

    def __missing__(self, name):
        module = REGISTERED_BY.get(name)
        if module is None:
            raise KeyError(name)
        importlib.import_module(module)
        return dict.__getitem__(self, name)

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name):
        return self.get(name) is not None


OPS: OpTable = OpTable()


def register(name: str, *, kernel: Callable, infer: Callable, grad: Callable | None = None,
             amp: str = "promote", nondiff: bool = False, doc: str = "",
             printer: Callable | None = None, random: bool = False) -> OpDef:
    """Define an op. `nondiff=True` marks ops whose outputs never carry gradients (comparisons,
    argmax, random numbers): they are never recorded on the tape. `random=True` marks ops that
    draw random numbers when they run, which program passes must leave where they are."""
    if dict.__contains__(OPS, name):
        raise ValueError(f"op {name!r} is registered twice")
    if amp not in ("white", "black", "promote", "keep"):
        raise ValueError(f"op {name!r}: amp must be white/black/promote/keep, not {amp!r}")
    op = OpDef(name, kernel, infer, grad, amp, nondiff, doc, printer, random)
    OPS[name] = op
    return op


class OpError(ValueError):
    """An op was given inputs it cannot take (shapes, axes, attributes)."""


class OpTypeError(TypeError):
    """An op was given inputs of a dtype it cannot take."""


class OpMemoryError(MemoryError):
    """An op could not allocate its result (a `MemoryError` that names the op and inputs)."""


# The per-thread mode switches live at the bottom (`core.mode_state()`): read on every op.
STATE = core.mode_state()

# The old string-keyed view of `runtime.core`'s hooks ("Tensor", "wrap", "record"), kept
# filled for code not yet switched to `runtime.core`; new code imports `runtime.core`.
_hooks: dict[str, Callable] = {"Tensor": core.TensorBase}


def bind(op: OpDef, inputs: tuple, attrs: dict):
    """Apply `op` to `inputs`: compute now (eager) or append to the program being built."""
    state = STATE
    if state.builder is not None:
        return state.builder.bind(op, inputs, attrs)
    if state.amp is not None:
        inputs = state.amp.cast_inputs(op, inputs)
    # The eager hot path: every line here runs once per op, so lookups are kept few.
    arrays = []
    needs_grad = False
    for x in inputs:
        cls = x.__class__
        if cls in _TENSOR_CLASSES:
            arrays.append(x._data)
            if not x.stop_gradient:
                needs_grad = True
        elif cls in _SCALARS:
            arrays.append(x)
        else:
            array, grad = _unpack(x)
            arrays.append(array)
            needs_grad = needs_grad or grad
    refuses = op.refuses_exact
    if refuses or refuses is None:
        _check_dtypes(op, inputs, arrays, attrs)
    try:  # (an empty **attrs costs as much as the rest of the call)
        out = (op.kernel(backend.XP, *arrays, **attrs) if attrs
               else op.kernel(backend.XP, *arrays))
    except (OpError, OpTypeError):
        raise
    except Exception as e:
        raise explain_failure(op, inputs, attrs, e) from e
    record = needs_grad and state.grad_enabled and not op.nondiff
    if out.__class__ is tuple:
        outs = tuple([_wrap(o) for o in out])
        if record:
            _record(op, inputs, attrs, outs)
        return outs
    result = _wrap(out)
    if record:
        _record(op, inputs, attrs, (result,))
    return result


# (op, input dtypes, attrs) of eager calls whose integer or bool inputs `infer` accepted
_ACCEPTED: set = set()
_EXACT = (dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)


def _check_dtypes(op: OpDef, inputs, arrays, attrs) -> None:
    """Raise the `OpTypeError` of the op's infer rule for integer or bool inputs it refuses
    (relu of an int64 tensor, abs of a bool one), as a program built from the same call does
    and as Paddle's kernels do, where NumPy would compute something. Only inputs of a dtype
    the rule refuses there alone are checked (`OpDef.refuses_exact`, learned on the first
    call); accepted calls are remembered by their dtypes and (hashable) attrs."""
    refuses = op.refuses_exact
    if refuses is None:
        refuses = op.refuses_exact = _refused_exact(op, inputs, attrs)
    n = len(arrays)  # (ops with a varying number of inputs: setitem's index tensors)
    for k, refused in refuses:
        if k < n and getattr(arrays[k], "dtype", None).__class__ in refused:
            break
    else:
        return
    try:
        key = (op, tuple([getattr(a, "dtype", None) for a in arrays]),
               tuple(attrs.items()) if attrs else ())
        if key in _ACCEPTED:
            return
    except TypeError:  # (unhashable attrs: checked on every call)
        key = None
    try:
        infer_outputs(op, inputs, attrs)
    except OpTypeError:
        raise
    except Exception:  # noqa: BLE001  (shapes and attrs are the kernel's to refuse)
        return
    if key is not None:
        if len(_ACCEPTED) > 4096:  # (attrs that vary call to call: kept bounded)
            _ACCEPTED.clear()
        _ACCEPTED.add(key)


def _refused_exact(op: OpDef, inputs, attrs) -> tuple:
    """(input position, NumPy dtype classes) for each tensor input of the call where `op`'s
    infer rule refuses some integer or bool dtype (the other inputs as they are)."""
    metas = [meta_of(x) for x in inputs]
    out = []
    for k, m in enumerate(metas):
        if not isinstance(m, Meta):
            continue
        refused = set()
        for dtype in _EXACT:
            try:
                op.infer(*metas[:k], Meta(m.shape, dtype), *metas[k + 1:], **attrs)
            except OpTypeError:
                refused.add(np.dtype(dtype.np).__class__)
            except Exception:  # noqa: BLE001, S112  (other refusals say nothing of dtypes)
                continue
        if refused:
            out.append((k, frozenset(refused)))
    return tuple(out)


def _unpack(x):
    """(kernel argument, needs grad) for an input that is not a known Tensor class."""
    cls = x.__class__
    if cls in _SCALARS or x is None:
        return x, False
    if isinstance(x, (list, tuple)):
        return [_array_of(t) for t in x], any(
            t.__class__ in _TENSOR_CLASSES and not t.stop_gradient for t in x)
    if isinstance(x, core.TensorBase):  # a Tensor subclass seen for the first time
        _TENSOR_CLASSES.add(cls)
        return x._data, not x.stop_gradient
    if cls is np.ndarray and backend.XP is not np:
        return backend.XP.asarray(x), False  # host data given to an op on the GPU is uploaded
    return x, False


_wrap = core.wrap
_record = core.record


def _rebind() -> None:
    """`bind` calls `runtime.core`'s hooks through module globals (the hot path)."""
    global _wrap, _record
    _wrap = _hooks["wrap"] = core.wrap
    _record = _hooks["record"] = core.record


core.on_install(_rebind)


def install_eager(wrap: Callable, record: Callable) -> None:
    """The same as `runtime.core.install(wrap=..., record=...)`."""
    core.install(wrap=wrap, record=record)


_SCALARS = frozenset((int, float, bool, str, complex))
_TENSOR_CLASSES: set = set()  # Tensor and its subclasses (Parameter), filled on first sight


def _array_of(x):
    return x._data if isinstance(x, core.TensorBase) else x


def register_tensor_class(cls) -> None:
    """Let `bind` recognise `cls` (Tensor, Parameter) by a set lookup on the hot path."""
    _TENSOR_CLASSES.add(cls)


def meta_of(x):
    """The Meta of a tensor-like input; Python scalars and None pass through; lists map."""
    if isinstance(x, (list, tuple)):
        return [meta_of(t) for t in x]
    shape = getattr(x, "_static_shape", None)
    if shape is not None:
        return Meta(shape, x.dtype)
    data = getattr(x, "_data", None)
    if data is not None:
        return Meta(tuple(data.shape), of_array(data))
    if isinstance(x, (np.ndarray, np.generic)):
        return Meta(tuple(np.shape(x)), of_array(np.asarray(x)))
    return x


def infer_outputs(op: OpDef, inputs, attrs) -> tuple:
    """Run the op's shape/dtype inference; always returns a tuple of Metas."""
    out = op.infer(*[meta_of(x) for x in inputs], **attrs)
    return out if isinstance(out, tuple) and not isinstance(out, Meta) else (out,)


def describe(inputs) -> str:
    """'x: f32[4,16], y: 2.0' style summary of op inputs for error messages."""
    return ", ".join(_describe_one(m) for m in (meta_of(x) for x in inputs))


def _describe_one(m) -> str:
    if isinstance(m, Meta):
        return f"{m.dtype.short}{list(m.shape)}".replace(" ", "")
    if isinstance(m, list):
        return "[" + ", ".join(_describe_one(t) for t in m) + "]"
    return repr(m)


def as_eager(error: Exception) -> Exception:
    """Mark a kernel's error as eager Python's own (`IndexError: list index out of range`):
    `explain_failure` passes it on as it is."""
    error.as_eager = True
    return error


def explain_failure(op: OpDef, inputs, attrs, error: Exception) -> Exception:
    """Turn a kernel failure into an error naming the op and its inputs.

    Shape inference is run first: for bad shapes, axes or dtypes it raises the precise error
    (naming the argument). Otherwise the kernel's own message is kept, with the op prepended,
    in an exception of the same class.
    """
    if getattr(error, "as_eager", False):  # (eager Python's own error: `IndexError: list ...`)
        return error
    try:
        infer_outputs(op, inputs, attrs)
    except (OpError, OpTypeError) as precise:
        return precise
    except Exception:  # noqa: BLE001, S110  (a broken infer rule must not hide the real error)
        pass
    msg = f"{op.name}: {error} (inputs: {describe(inputs)}" + (
        f"; attrs: {attrs})" if attrs else ")")
    if isinstance(error, MemoryError):  # (NumPy's own subclass wants a shape, not a message)
        return OpMemoryError(msg)
    try:
        return type(error)(msg)
    except Exception:  # noqa: BLE001  (exception classes whose constructor wants more)
        return OpError(msg)
