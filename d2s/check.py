"""`d2s check FILE::QUALNAME --spec 'float32[4,16]' ...`: run a function eagerly and converted
on random inputs and report the first disagreement, with the user line that made the value.

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
import re
import warnings
from typing import NamedTuple

import numpy as np

from runtime import core

# draw name -> (sign, scale); sign None: mixed signs
DRAWS = [("normal", None, 1.0), ("positive", 1, 1.0), ("negative", -1, 1.0),
         ("large", None, 100.0), ("small", 1, 0.01), ("normal, other sizes", None, 1.0)]
_SIZES = [3, 2, 5, 1, 4, 7]
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
        from runtime.static import InputSpec
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
    dims = [d.strip() for d in m.group(2).split(",") if d.strip()]
    shape = tuple(None if d in ("None", "-1", "?") else int(d) for d in dims)
    return Spec(m.group(1), shape, None)


def draw(spec: Spec, k: int, rng: np.random.Generator):
    """The k-th random value for `spec` (see DRAWS)."""
    import runtime as rt
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
    """A call's result: its leaves (arrays or Python values) or the exception it raised."""

    leaves: list | None
    error: BaseException | None


def _run(fn, args) -> Outcome:
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001  (an error is an outcome to compare)
        return Outcome(None, e)
    leaves: list = []
    _flatten(out, leaves)
    return Outcome(leaves, None)


def _flatten(x, out: list) -> None:
    if isinstance(x, (list, tuple)):
        for t in x:
            _flatten(t, out)
    elif isinstance(x, dict):
        for k in sorted(x, key=repr):
            _flatten(x[k], out)
    elif core.is_eager_tensor(x):
        out.append(np.asarray(x.numpy()))
    else:
        out.append(x)


def _difference(a, b) -> str | None:
    """Why leaf `a` (eager) and `b` (static) differ, or None."""
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        return f"eager gave {type(a).__name__}, static gave {type(b).__name__}"
    if not isinstance(a, np.ndarray):
        return None if a == b else f"eager gave {a!r}, static gave {b!r}"
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
    from . import errors
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
    for i, (a, b) in enumerate(zip(eager.leaves, static.leaves)):
        why = _difference(a, b)
        if why is not None:
            return f"output {i}: {why}" + _origin_of_output(sf, tensor_index)
        tensor_index += isinstance(a, np.ndarray)
    return None


def _origin_of_output(sf, index: int) -> str:
    """The user line of the op that computed the program's `index`-th output."""
    from runtime.program import origin as program_origin
    entry = sf.program_cache.last
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
    import runtime as rt
    rng = np.random.default_rng(seed)
    for k in range(draws):
        args = [draw(s, k, rng) for s in specs]
        rt.seed(seed + k)
        eager = _run(sf.dygraph_function, args)
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
            static = _run(sf, args)
        why = compare(sf, eager, static)
        if why is not None:
            out(f"{label}: DISAGREE\n  {why}")
            return Disagreement(k, why)
        out(f"{label}: agree")
    return None


def init_args(items) -> tuple[list, dict]:
    """`--init` values: 'NAME=LITERAL' is a keyword argument, a bare literal a positional one
    (ValueError for anything else)."""
    args, kwargs = [], {}
    for item in items:
        name, eq, text = item.partition("=")
        keyword = eq and name.isidentifier()
        try:
            value = ast.literal_eval(text if keyword else item)
        except (ValueError, SyntaxError):
            raise ValueError(f"bad --init {item!r}: expected a Python literal or NAME=LITERAL, "
                             "e.g. --init 16 or --init hidden=32") from None
        if keyword:
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs


def static_function_for(obj, owner, specs: list[Spec], init=()):
    """A StaticFunction for what `FILE::QUALNAME` named (`owner`: the class it was looked up
    on, for `Net.forward`): a StaticFunction stays as it is; a function, or a Layer (class:
    made with the `init` arguments, `--init` strings), is converted with InputSpecs from
    `specs` (so `None` dims share one program); a method of a Layer class is converted on a
    new instance."""
    import d2s
    import runtime as rt
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
        obj = _new_layer(obj, init)  # a Layer class: an instance with the --init arguments
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


def _new_layer(cls, init=()):
    try:
        args, kwargs = init_args(init)
    except ValueError as e:
        raise SystemExit(f"d2s: {e}") from None
    try:
        return cls(*args, **kwargs)
    except TypeError as e:
        raise SystemExit(f"d2s: cannot build {cls.__name__}({', '.join(init)}) ({e}); give its "
                         "arguments with --init (--init 16 --init hidden=32) or make a "
                         "module-level instance (net = Net(16)) and name it: FILE::net") \
            from None


def _input_spec(specs: list[Spec]):
    return [s.input_spec() for s in specs if s.is_tensor] or None
