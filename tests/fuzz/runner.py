"""Differential runner shared by the fuzzers: eager vs `d2s.to_static` on one generated
function, called with several inputs through ONE converted function (so inputs that take
different branches run the same program).

A generator produces Python source text defining `f` (and whatever helpers it needs); the text
is compiled in memory and registered with `linecache` under a unique file name, so d2s finds
its source as it would for a notebook cell (nothing is written to or read from disk).

`compare(source, inputs, setup=None)` returns an `Outcome`:

- `same`: both ran and every returned value (and, when `setup` gives objects, every object
  state after the call) agrees;
- `same_error`: eager and static raised the same exception type;
- `refused`: static raised `d2s.ConversionError` (or a subclass) — a documented refusal,
  counted apart, never a silent wrong result — or, where eager code ran, one of the documented
  refusals the program raises when it runs (`RUN_TIME_REFUSALS`);
- `disagree`: different values, or eager raised and static did not (or the reverse with
  eager succeeding is `internal` when static raised something else);
- `internal`: static raised an exception that eager did not raise and that is not a
  ConversionError, or a message of static's that shows an internal name (`_retval`, `t12`,
  `Variable(%`, `<undefined`) where eager's does not (the "While running op:" note, the IR
  op a run-time error came from, aside).
"""
from __future__ import annotations

import itertools
import linecache
import traceback
from dataclasses import dataclass, field

import numpy as np

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import INTERNAL

KINDS = ("same", "same_error", "refused", "disagree", "internal")
_COUNTER = itertools.count()


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    source: str = ""
    inputs: list = field(default_factory=list)

    def __str__(self):
        return f"{self.kind}: {self.detail}\n--- source ---\n{self.source}"


def load(source: str, namespace: dict | None = None) -> dict:
    """Compile generated `source` under a fresh linecache-backed file name; returns the
    namespace it defined."""
    name = f"<d2s-fuzz-{next(_COUNTER)}>.py"
    lines = source.splitlines(keepends=True)
    linecache.cache[name] = (len(source), None, lines, name)
    ns = {"rt": rt, "__name__": "d2s_fuzz_generated"}
    ns.update(namespace or {})
    exec(compile(source, name, "exec"), ns)  # noqa: S102  (source generated in memory)
    return ns


@dataclass(frozen=True)
class TensorValue:
    """A returned Tensor as the contract compares it: values (as float64), dtype, shape and
    `stop_gradient`."""

    array: np.ndarray
    dtype: str
    stop_gradient: bool


def to_plain(x, depth: int = 0):
    """Returned values as nested Python lists, tuples, dicts and numbers (each keeping its Python
    type) and `TensorValue`s."""
    if depth > 8:
        return "<deep>"
    if isinstance(x, rt.Tensor):
        return TensorValue(np.asarray(x.numpy(), dtype=np.float64), str(x.dtype.name),
                           bool(x.stop_gradient))
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    if type(x).__name__ == "Variable":  # a static value left where the user can reach it
        return f"<static Variable {getattr(x, 'name', '?')}>"
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.number):
        return float(x)
    if isinstance(x, tuple):  # (a tuple stays a tuple: eager's `tuple(lst)`, `zip` columns)
        return tuple(to_plain(t, depth + 1) for t in x)
    if isinstance(x, list):
        return [to_plain(t, depth + 1) for t in x]
    if isinstance(x, dict):
        return {k: to_plain(v, depth + 1) for k, v in x.items()}
    if x is None:
        return None
    if hasattr(x, "__dict__"):
        return {k: to_plain(v, depth + 1) for k, v in sorted(vars(x).items())
                if not k.startswith("__")}
    return repr(x)


def same(a, b, path="result") -> str:
    """'' when `a` and `b` agree, else where they differ: the Python type of every leaf,
    a tensor's dtype, shape, `stop_gradient` and values, lengths before items, dict keys
    and their order."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, TensorValue):
        if a.dtype != b.dtype or a.stop_gradient != b.stop_gradient:
            return (f"{path}: {a.dtype} stop_gradient={a.stop_gradient} vs {b.dtype} "
                    f"stop_gradient={b.stop_gradient}")
        a, b = a.array, b.array
    if isinstance(a, np.ndarray):
        if a.shape != b.shape:
            return f"{path}: shape {a.shape} vs {b.shape}"
        if not np.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True):
            return f"{path}: {a.tolist()} vs {b.tolist()}"
        return ""
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = same(x, y, f"{path}[{i}]")
            if d:
                return d
        return ""
    if isinstance(a, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(map(str, a))} vs {sorted(map(str, b))}"
        if list(a) != list(b):  # (eager keeps the order each key was first stored in)
            return f"{path}: key order {list(a)!r} vs {list(b)!r}"
        for k in a:
            d = same(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return ""
    if isinstance(a, float):
        return "" if np.isclose(a, b, rtol=1e-4, atol=1e-4) else f"{path}: {a} vs {b}"
    return "" if a == b else f"{path}: {a!r} vs {b!r}"


def _call(fn, inputs, state):
    if state is not None and hasattr(state, "reset"):
        state.reset()
    args = [rt.to_tensor(np.asarray(a, dtype=np.float32)) for a in inputs]
    if state is not None:
        args.append(state)
    try:
        out = fn(*args)
        if hasattr(state, "after_call"):  # (what a training loop does with the result)
            state.after_call(out)
    except Exception as e:  # noqa: BLE001  (the exception is the observation)
        return None, e, state
    return to_plain(out), None, state


def compare(source: str, inputs: list, setup=None, name: str = "f") -> Outcome:
    """Eager vs static for `name` defined by `source`, over each input tuple in `inputs`.

    `setup()` (optional) makes the object argument (passed last): one for the eager side and
    one for the static side, used by every call (so the calls share one program); its
    `reset()`, if any, runs before each call and its `after_call(result)`, if any, after it
    (a training loop's backward and step); its state after each call (its `observed()`, if
    any) is compared too. Eager and static get separate namespaces, so module-level
    state of the generated code does not leak between them."""
    eager_ns = load(source)
    static_ns = load(source)
    eager_fn = eager_ns[name]
    static_fn = d2s.to_static(static_ns[name])
    e_obj = setup() if setup is not None else None
    s_obj = setup() if setup is not None else None
    for inp in inputs:
        e_out, e_err, e_state = _call(eager_fn, inp, e_obj)
        s_out, s_err, s_state = _call(static_fn, inp, s_obj)
        if s_err is not None:
            if _shows_internal_name(s_err) and not (
                    e_err is not None and _shows_internal_name(e_err)):
                return Outcome("internal", f"input {inp}: the message shows an internal "
                               f"name: {_describe(s_err)}", source, inputs)
            if e_err is None and (isinstance(s_err, d2s.ConversionError) or
                                  refused_when_run(s_err)):
                return Outcome("refused", _describe(s_err), source, inputs)
            if e_err is not None and type(e_err) is type(s_err):
                return Outcome("same_error", type(e_err).__name__, source, inputs)
            if e_err is not None and isinstance(s_err, d2s.ConversionError):
                return Outcome("refused", _describe(s_err), source, inputs)
            return Outcome("internal", f"input {inp}: eager "
                           f"{'ok' if e_err is None else type(e_err).__name__}, static "
                           f"{_describe(s_err)}", source, inputs)
        if e_err is not None:
            return Outcome("disagree", f"input {inp}: eager raised {type(e_err).__name__}: "
                           f"{e_err} but static returned", source, inputs)
        diff = same(e_out, s_out)
        if not diff and setup is not None:
            diff = same(_observed(e_state), _observed(s_state), "argument state")
        if diff:
            return Outcome("disagree", f"input {inp}: {diff}", source, inputs)
    return Outcome("same", "", source, inputs)


# What the program raises when it runs where docs/d2s.md "Known limitations" says eager code
# goes on and one program cannot (the value deciding it exists only then): (exception type,
# the words of its message that say so)
RUN_TIME_REFUSALS = (
    # sum() of a list the run sizes that got no item: eager's int start, a tensor elsewhere
    (TypeError, "got no item"),
    # `table[int(t)] = v` with a key none of the dict's keys: eager code adds the key
    (KeyError, "the key computed by the converted code is none of the dict's keys"),
)


def refused_when_run(e: BaseException) -> bool:
    """Whether `e` is one of the documented refusals raised when the program runs."""
    text = " ".join(map(str, e.args))  # (str() of a KeyError is its message's repr)
    return any(isinstance(e, kind) and words in text for kind, words in RUN_TIME_REFUSALS)


def _observed(state):
    """The argument object's state as compared: what its `observed()` gives, if it has one
    (a Layer's parameters and gradients), else its fields."""
    return to_plain(state.observed() if hasattr(state, "observed") else state)


def _shows_internal_name(e: BaseException) -> bool:
    """Whether the message names d2s's own variables; the program op a run-time error came
    from ("While running op: %t3 = ..."), a debugging note in the IR's printed form, is not
    the message."""
    return bool(INTERNAL.search("\n".join(
        ln for ln in _describe(e).splitlines() if "While running op:" not in ln)))


def _describe(e: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    return text[:2000]


def compare_saved(path, setup=None) -> Outcome:
    """`compare` for a case saved by a campaign (`python -m tests.fuzz --save DIR`): the first
    line holds the inputs, comment lines the first error, the rest the source."""
    import ast
    import pathlib
    text = pathlib.Path(path).read_text()
    inputs = ast.literal_eval(text.splitlines()[0][len("# inputs: "):])
    source = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))
    return compare(source, inputs, setup)
