"""`d2s check FILE::QUALNAME --spec 'float32[4,16]' ...`: run a function eagerly and converted
on random inputs and report the first disagreement, with the user line that made the value.
It compares what "What is the same as eager" in docs/d2s.md promises: the Python type of every
returned leaf, each tensor's dtype, shape, values and `stop_gradient`, and for a Layer, after
`backward()` of the returned tensors, which parameters got a gradient and its values.

Several draws are made, chosen to flip tensor predicates where they can: standard normal,
all-positive and all-negative values (so `if rt.mean(x) > 0` takes both branches), large and
small scales, and for dims given as `None` several sizes. A spec is either a tensor,
`DTYPE[d0,d1,...]` (`None` or `-1` for a dim that varies, `[]` for a 0-d tensor), or a Python
literal passed as it is (`3`, `True`, `'mean'`).

>>> parse_spec('float32[None,16]')
Spec(dtype='float32', shape=(None, 16), value=None)
>>> parse_spec('3').value
3
"""
from __future__ import annotations

import ast
import difflib
import re
import warnings
from typing import NamedTuple

import numpy as np

import d2s
import runtime as rt
from runtime import core
from runtime.dtypes import ALL
from runtime.program import origin as program_origin
from runtime.static import InputSpec

from . import errors

# draw name -> (sign, scale); sign None: mixed signs
DRAWS = [("normal", None, 1.0), ("positive", 1, 1.0), ("negative", -1, 1.0),
         ("large", None, 100.0), ("small", 1, 0.01), ("normal, other sizes", None, 1.0)]
_SIZES = [3, 2, 5, 1, 4, 7]
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int64",
                  "long": "int64"}  # what a user may write for a dtype, from C or NumPy
_SPEC = re.compile(r"^\s*([a-z0-9_]+)\s*\[([^\]]*)\]\s*$")


class Spec(NamedTuple):
    """A tensor argument (`dtype`, `shape` with None for varying dims) or a Python `value`."""

    dtype: str | None
    shape: tuple | None
    value: object

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None

    def input_spec(self):
        return InputSpec(list(self.shape), self.dtype)


def parse_spec(text: str) -> Spec:
    """'float32[4,16]' -> a tensor spec; anything else is read as a Python literal."""
    m = _SPEC.match(text)
    if m is None:
        try:
            return Spec(None, None, ast.literal_eval(text))
        except (ValueError, SyntaxError):
            raise ValueError(f"bad spec {text!r}: expected DTYPE[dims] like 'float32[4,16]' or "
                             "a Python literal like 3") from None
    names = [d.name for d in ALL]
    if m.group(1) not in names:
        near = _DTYPE_ALIASES.get(m.group(1)) or next(iter(difflib.get_close_matches(
            m.group(1), names, 1)), None)
        raise ValueError(f"bad spec {text!r}: unknown dtype {m.group(1)!r}; expected one of "
                         f"{', '.join(names)}" + (f" (did you mean {near}?)" if near else ""))
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    try:
        shape = tuple(None if d in ("None", "-1", "?") else int(d) for d in dims)
    except ValueError:
        raise ValueError(f"bad spec {text!r}: each dim is a number, or None for one that "
                         "varies, as in 'float32[None,16]'") from None
    return Spec(m.group(1), shape, None)


def draw(spec: Spec, k: int, rng: np.random.Generator):
    """The k-th random value for `spec` (see DRAWS)."""
    if not spec.is_tensor:
        return spec.value
    _, sign, scale = DRAWS[k % len(DRAWS)]
    shape = tuple(d if d is not None else _SIZES[(k + i) % len(_SIZES)]
                  for i, d in enumerate(spec.shape))
    dtype = np.dtype(spec.dtype) if spec.dtype != "bfloat16" else np.float32
    if dtype == np.bool_:
        a = rng.random(shape) < (0.5 if sign is None else (0.9 if sign > 0 else 0.1))
    elif np.issubdtype(dtype, np.integer):
        lo, hi = {None: (-5, 6), 1: (1, 10), -1: (-9, 0)}[sign]
        a = rng.integers(lo, hi, size=shape) * (10 if scale > 1 else 1)
    else:
        a = rng.standard_normal(shape)
        if sign is not None:
            a = sign * (np.abs(a) + 0.5)
        a = a * scale
    return rt.to_tensor(np.asarray(a).astype(dtype), dtype=spec.dtype)


class Outcome(NamedTuple):
    """A call's result: its leaves (`TensorLeaf`s or Python values) and, after `backward()`
    of its tensors, which parameters got a gradient (name -> array or None); or the exception
    it raised."""

    leaves: list | None
    error: BaseException | None
    grads: dict | None = None


class TensorLeaf(NamedTuple):
    """A returned tensor: its values (dtype, shape) and `stop_gradient`."""

    array: np.ndarray
    stop_gradient: bool


def _run(fn, args, params=()) -> Outcome:
    for p in params:
        p.clear_grad()
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001  (an error is an outcome to compare)
        return Outcome(None, e)
    leaves: list = []
    tensors: list = []
    _flatten(out, leaves, tensors)
    return Outcome(leaves, None, _gradients(tensors, params) if params else None)


def _gradients(tensors: list, params) -> dict:
    """`backward()` of the sum of the returned tensors that have a gradient path; then each
    parameter's gradient (None where it got none)."""
    trained = [t for t in tensors if not t.stop_gradient and t.dtype.is_floating]
    if trained:
        total = trained[0].sum()
        for t in trained[1:]:
            total = total + t.sum()
        total.backward()
    return {p.name: None if p.grad is None else np.asarray(p.grad.numpy()) for p in params}


def _flatten(x, out: list, tensors: list) -> None:
    if isinstance(x, (list, tuple)):
        for t in x:
            _flatten(t, out, tensors)
    elif isinstance(x, dict):
        for k in sorted(x, key=repr):
            _flatten(x[k], out, tensors)
    elif core.is_eager_tensor(x):
        out.append(TensorLeaf(np.asarray(x.numpy()), bool(x.stop_gradient)))
        tensors.append(x)
    else:
        out.append(x)


def _difference(a, b) -> str | None:
    """Why leaf `a` (eager) and `b` (static) differ, or None: the Python type of the leaf, a
    tensor's `stop_gradient`, dtype, shape and values."""
    if type(a) is not type(b):
        return f"eager gave {_short(a)}, static gave {_short(b)}"
    if not isinstance(a, TensorLeaf):
        return None if a == b else f"eager gave {a!r}, static gave {b!r}"
    if a.stop_gradient != b.stop_gradient:
        return (f"eager gave a tensor with stop_gradient={a.stop_gradient}, static one with "
                f"stop_gradient={b.stop_gradient}")
    return _array_difference(a.array, b.array)


def _short(v) -> str:
    """'a Tensor float32[3]', 'a float 2.5'."""
    if isinstance(v, TensorLeaf):
        return f"a Tensor {v.array.dtype}{list(v.array.shape)}"
    return f"{'an' if type(v).__name__[0] in 'aeiou' else 'a'} {type(v).__name__} {v!r:.60}"


def _array_difference(a: np.ndarray, b: np.ndarray) -> str | None:
    if a.shape != b.shape or a.dtype != b.dtype:
        return (f"eager gave {a.dtype}{list(a.shape)}, static gave {b.dtype}{list(b.shape)}")
    if np.issubdtype(a.dtype, np.floating):
        bad = ~np.isclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    else:
        bad = a != b
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {a.size} values differ; at {list(where)} eager gave "
            f"{a[where].item()!r}, static gave {b[where].item()!r}")


class Disagreement(NamedTuple):
    draw: int
    message: str
    eager_failed: bool = False  # the eager function itself raised: the inputs do not fit it


def compare(sf, eager: Outcome, static: Outcome) -> str | None:
    """Text describing how the outcomes disagree (with the user line), or None."""
    if eager.error is not None or static.error is not None:
        if eager.error is not None and static.error is not None and type(
                eager.error) is type(static.error):
            return None
        if static.error is not None:
            frames = errors.user_frames(static.error)
            where = "\n" + errors.format_frames(frames) if frames else ""
            return (f"static raised {type(static.error).__name__}: "
                    f"{str(static.error).splitlines()[0]}\n  eager "
                    + (f"raised {type(eager.error).__name__}" if eager.error else "returned")
                    + where)
        return f"eager raised {type(eager.error).__name__}: {eager.error}; static returned"
    if len(eager.leaves) != len(static.leaves):
        return f"eager returned {len(eager.leaves)} values, static {len(static.leaves)}"
    tensor_index = 0
    for i, (a, b) in enumerate(zip(eager.leaves, static.leaves, strict=True)):
        why = _difference(a, b)
        if why is not None:
            return f"output {i}: {why}" + _origin_of_output(sf, tensor_index)
        tensor_index += isinstance(a, TensorLeaf)
    return _gradient_difference(eager.grads or {}, static.grads or {})


def _gradient_difference(eager: dict, static: dict) -> str | None:
    """How the parameters' gradients after `backward()` differ (presence, then values)."""
    for name, g in eager.items():
        s = static.get(name)
        if (g is None) != (s is None):
            return (f"after backward(), parameter {name} has "
                    f"{'no gradient' if g is None else 'a gradient'} eagerly, "
                    f"{'none' if s is None else 'one'} from the converted call")
        why = None if g is None else _array_difference(g, s)
        if why is not None:
            return f"the gradient of parameter {name}: {why}"
    return None


def _origin_of_output(sf, index: int) -> str:
    """The user line of the op that computed the program's `index`-th output."""
    entry = sf.program_cache.last_entry
    if entry is None or index >= len(entry.concrete.outputs):
        return ""
    program = entry.concrete.main_program
    name = entry.concrete.outputs[index].name
    for op in program.global_block().ops:
        if name in op.outputs:
            return ("\n  The static value comes from:\n"
                    + program_origin.format_origin(program.origin_of(op)))
    return ""


def check(sf, specs: list[Spec], draws: int = len(DRAWS), seed: int = 0, out=print):
    """Run eager and static on `draws` random inputs; the first Disagreement or None. Both
    calls of a draw start from the same `rt.seed`, so random ops (Dropout in training mode)
    draw the same numbers in both.

    A draw on which the eager function itself raises is not a disagreement but a sign that
    the inputs do not fit the function: it ends the check with `eager_failed` set. d2s's own
    retrace warning is silenced: the draws vary sizes on purpose."""
    rng = np.random.default_rng(seed)
    instance = getattr(sf, "instance", None)
    params = [p for p in instance.parameters() if not p.stop_gradient] if hasattr(
        instance, "parameters") else []
    for k in range(draws):
        args = [draw(s, k, rng) for s in specs]
        rt.seed(seed + k)
        eager = _run(sf.dygraph_function, args, params)
        shapes = ", ".join(f"{list(a.shape)}" if core.is_eager_tensor(a) else repr(a)
                           for a in args)
        label = f"draw {k + 1} ({DRAWS[k % len(DRAWS)][0]}; inputs {shapes})"
        if eager.error is not None:
            why = f"eager raised {type(eager.error).__name__}: {eager.error}"
            out(f"{label}: the function raised eagerly\n  {why}")
            return Disagreement(k, why, eager_failed=True)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"d2s: .* has been traced \d+ times")
            rt.seed(seed + k)
            static = _run(sf, args, params)
        if isinstance(static.error, errors.ConversionError):
            raise static.error  # d2s refuses the function: not a disagreement of values
        why = compare(sf, eager, static)
        if why is not None:
            out(f"{label}: DISAGREE\n  {why}")
            return Disagreement(k, why)
        out(f"{label}: agree ({compared(eager.leaves)})")
    return None


def compared(leaves: list) -> str:
    """What a check compared: 'outputs float32[4,2], int 3'."""
    arrays = [a.array if isinstance(a, TensorLeaf) else a for a in leaves]
    text = ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else
                     f"{type(a).__name__} {a!r}"[:40] for a in arrays)
    return f"{len(leaves)} output{'s' * (len(leaves) != 1)}: {text or 'none'}"


def static_function_for(obj, owner, specs: list[Spec], init: tuple = ((), {})):
    """A StaticFunction for what `FILE::QUALNAME` named (`owner`: the class it was looked up
    on, for `Net.forward`): a StaticFunction stays as it is; a function, or a Layer (class:
    made with the arguments `init`, (args, kwargs)), is converted with InputSpecs from `specs`
    (so `None` dims share one program); a method of a Layer class is converted on a new
    instance."""
    if isinstance(owner, type) and issubclass(owner, rt.nn.Layer):
        name = getattr(obj, "__name__", None)
        if name is None or getattr(owner, name, None) is not obj:
            raise SystemExit(f"d2s: cannot find {owner.__name__}.{name} again on the class")
        layer = _new_layer(owner, init)
        if name == "forward":
            obj = layer
        else:
            method = getattr(layer, name)
            return method if isinstance(method, d2s.StaticFunction) else \
                d2s.to_static(method.__func__, input_spec=_input_spec(specs)).__get__(layer)
    if isinstance(obj, type) and issubclass(obj, rt.nn.Layer):
        obj = _new_layer(obj, init)  # a Layer class: an instance
    if isinstance(obj, rt.nn.Layer):
        forward = obj.__dict__.get("forward")
        if isinstance(forward, d2s.StaticFunction):
            return forward
        decorated = type(obj).forward
        if isinstance(decorated, d2s.StaticFunction):  # `@d2s.to_static def forward`
            return obj.forward
        return d2s.to_static(obj, input_spec=_input_spec(specs)).forward
    if isinstance(obj, d2s.StaticFunction):
        return obj
    return d2s.to_static(obj, input_spec=_input_spec(specs))


def _new_layer(cls, init: tuple):
    args, kwargs = init
    try:
        return cls(*args, **kwargs)
    except TypeError as e:
        given = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
        raise SystemExit(f"d2s: cannot build {cls.__name__}({given}) ({e}); give its "
                         "arguments with --init (--init 16 or --init hidden=16), or make a "
                         "module-level instance (net = Net(16)) and name it: FILE::net") \
            from None


def _input_spec(specs: list[Spec]):
    return [s.input_spec() for s in specs if s.is_tensor] or None
