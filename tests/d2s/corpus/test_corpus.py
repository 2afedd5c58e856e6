"""Run every corpus case eagerly (checks the corpus itself), then converted, and compare.

- `test_eager`: each argument set runs eagerly, matches its NumPy reference where the case has
  one, and the sets take different paths (lines executed, with counts).
- `test_static`: one `d2s.to_static` conversion called with every argument set gives the eager
  values (same dtype and shape), prints what eager prints, and caches exactly one program per
  distinct input signature (shapes and dtypes of tensors, values of everything else).
- `test_dynamic_batch`: under `InputSpec([None, ...])` batch sizes 1, 3 and 7 give eager values
  from a single program.

The eager and the converted runs of `test_static` and `test_dynamic_batch` each start from their
own copy of the case's initial objects (a new Layer built the same way, a deep copy of the
argument sets), and after every call they compare the state the call left too (`state.py`: the
Layer's parameters, buffers and Python attributes; argument tensors changed in place, plain
objects' attributes, dict and list contents), not only the returned values.

Known transpiler/runtime failures are listed in `known_failures.py` and run as strict xfails.
"""
from __future__ import annotations

import collections
import contextlib
import copy
import io
import os
import sys

import numpy as np
import pytest

import d2s
import runtime as rt

from . import known_failures
from .registry import CASES, Case
from .state import assert_same_state, python_state, snapshot

# importing the case modules registers their cases
from . import (  # noqa: F401  isort: skip
    cases_if, cases_while, cases_for, cases_break_continue, cases_return, cases_logical,
    cases_assert_print_len_cast, cases_list_dict, cases_calls, cases_misc, cases_layers,
    cases_wild_detection, cases_wild_decoding, cases_wild_training, cases_wild_seq,
    cases_wild_metrics, cases_wild_stateful, cases_wild_algorithms,
    cases_wild2_graph, cases_wild2_speech, cases_wild2_transformer, cases_wild2_diffusion,
    cases_wild2_recsys, cases_wild2_science, cases_wild2_idioms,
    cases_wild3_vision, cases_wild3_llm, cases_wild3_training, cases_wild3_data,
    cases_wild3_idioms, cases_wild3_streaming,
    cases_wild4_speech, cases_wild4_detection, cases_wild4_tabular, cases_wild4_series,
    cases_wild4_idioms, cases_wild5_llm, cases_wild5_rl, cases_wild5_diffusion,
    cases_paddle_ifelse, cases_paddle_loops, cases_paddle_containers, cases_paddle_calls,
    cases_paddle_models, cases_paddle_checks,
    cases_paddle2_loops, cases_paddle2_shapes, cases_paddle2_calls, cases_paddle2_items,
    cases_paddle2_control, cases_paddle2_lists, cases_paddle2_ifelse,
    cases_dynamo, cases_wild6_models, cases_wild6_pipelines, cases_autograph,
    cases_autograph_loops, cases_wild7_inference, cases_wild7_text,
    cases_wild8_perception, cases_wild8_efficient)

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH_SIZES = (1, 3, 7)


def _params(cases, kind):
    out = []
    for c in cases:
        reason = known_failures.STATIC.get(c.name) if kind == "static" else (
            known_failures.DYNAMIC.get(c.name))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


# ---- calling a case ----------------------------------------------------------------------
def _to_inputs(value):
    if isinstance(value, np.ndarray):
        return rt.to_tensor(value)
    if hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(_to_inputs(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_inputs(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_inputs(v) for k, v in value.items()}
    return value


def _make_layer(c: Case):
    rt.seed(0)
    layer = c.fn()
    layer.eval()
    return layer


class Raised:
    """The outcome of a call that raised one of the case's expected exception types."""

    def __init__(self, exc: BaseException):
        self.type, self.message = type(exc), str(exc)

    def __repr__(self):
        return f"<raised {self.type.__name__}: {self.message}>"


def _call(fn, args, raises: tuple = ()):
    """Call with fresh input tensors; returns (result or Raised, printed text)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            result = fn(*_to_inputs(args))
        except raises as exc:
            result = Raised(exc)
    return result, buf.getvalue()


def _run(c: Case, fn, arg_sets) -> tuple[list, bool]:
    """Call `fn` with each argument set (a deep copy of them all, so that eager and converted
    runs start from the same objects). Returns, per call, (result, printed text, state after
    the call: of the Layer for a Layer case, and of the inputs passed), and whether the calls
    changed Python state a program may read (the Layer's or the argument objects')."""
    outcomes, arg_sets = [], copy.deepcopy(arg_sets)
    before = python_state(snapshot((fn if c.is_layer else None, arg_sets)))
    for args in arg_sets:
        inputs = _to_inputs(args)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                result = fn(*inputs)
            except c.raises as exc:
                result = Raised(exc)
        state = {"args": snapshot(inputs)}
        if c.is_layer:
            state["layer"] = snapshot(fn)
        outcomes.append((result, buf.getvalue(), state))
    after = python_state(snapshot((fn if c.is_layer else None, arg_sets)))
    return outcomes, before != after


def _compare(c: Case, expected, got, where: str):
    (exp, exp_out, exp_state), (res, res_out, res_state) = expected, got
    assert_same(exp, res, c.rtol, c.atol, where)
    _check_stdout(c, exp_out, res_out, where)
    for key in exp_state:
        assert_same_state(exp_state[key], res_state[key], c.rtol, c.atol,
                          f"{where}: state of the {'Layer' if key == 'layer' else 'arguments'}")


# ---- comparing results -------------------------------------------------------------------
def assert_same(expected, got, rtol, atol, where="result"):
    """`got` equals `expected` in structure, dtype, shape, value, `stop_gradient` and the
    Python type of every leaf (a Python number comes back as a Python number of its type,
    issue 33's contract: "What is the same as eager" in docs/d2s.md)."""
    if isinstance(expected, Raised):
        assert isinstance(got, Raised) and issubclass(got.type, expected.type), (
            f"{where}: eager raised {expected.type.__name__}, converted gave {got!r}")
        return
    assert not isinstance(got, Raised), f"{where}: converted raised {got!r}, eager did not"
    if isinstance(expected, (rt.Tensor, np.ndarray)):
        exp = expected.numpy() if isinstance(expected, rt.Tensor) else expected
        assert isinstance(got, rt.Tensor), (
            f"{where}: expected a Tensor, got {type(got).__name__} {got!r}")
        assert got.dtype == exp.dtype, f"{where}: dtype {got.dtype} != expected {exp.dtype}"
        assert got.shape == list(exp.shape), f"{where}: shape {got.shape} != {list(exp.shape)}"
        if isinstance(expected, rt.Tensor):
            assert got.stop_gradient == expected.stop_gradient, (
                f"{where}: stop_gradient {got.stop_gradient} != {expected.stop_gradient}")
        if exp.dtype.kind in "biu":
            np.testing.assert_array_equal(got.numpy(), exp, err_msg=where)
        else:
            np.testing.assert_allclose(got.numpy(), exp, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(got, type(expected)), (
            f"{where}: expected {type(expected).__name__}, got {type(got).__name__}")
        assert len(got) == len(expected), f"{where}: length {len(got)} != {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_same(e, g, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: expected dict, got {type(got).__name__}"
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for k in expected:
            assert_same(expected[k], got[k], rtol, atol, f"{where}[{k!r}]")
    elif expected is None or isinstance(expected, str):
        assert got == expected, f"{where}: {got!r} != {expected!r}"
    elif isinstance(expected, np.generic) and isinstance(got, rt.Tensor):
        assert_same(np.asarray(expected), got, rtol, atol, where)  # (a NumPy reference's 0-d)
    elif isinstance(expected, (bool, int, float, np.generic)):
        assert type(got) is type(expected), (
            f"{where}: expected {type(expected).__name__}, got {type(got).__name__} {got!r}")
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=where)
    else:
        raise TypeError(f"{where}: the corpus cannot compare {type(expected).__name__}")


def _signature(value):
    """What one program should be cached for: tensor shapes/dtypes, other values as they are."""
    if isinstance(value, np.ndarray):
        return ("T", value.shape, value.dtype.str)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((k, _signature(v)) for k, v in value.items())
    return ("V", type(value).__name__, repr(value))


def _check_stdout(c: Case, expected: str, got: str, where: str):
    """Each marker is printed as many times as eager prints it (once per loop iteration)."""
    for marker in c.stdout:
        assert got.count(marker) == expected.count(marker), (
            f"{where}: eager printed {expected!r}, converted printed {got!r} "
            f"({marker!r} {expected.count(marker)} vs {got.count(marker)} times)")


# ---- path tracing for the eager self-check -----------------------------------------------
def _trace_path(fn, args, c: Case):
    """Run and record which bytecode offsets of corpus code ran, how often: opcode events, not
    line events, so the two arms of a one-line conditional expression count as two paths."""
    steps = collections.Counter()

    def local(frame, event, arg):
        if event == "opcode":
            steps[(frame.f_code.co_name, frame.f_lasti)] += 1
        return local

    def tracer(frame, event, arg):
        filename = frame.f_code.co_filename
        if filename.startswith(HERE) and "cases_" in os.path.basename(filename):
            frame.f_trace_opcodes = True
            return local
        return None

    sys.settrace(tracer)
    try:
        result, out = _call(fn, args, c.raises)
    finally:
        sys.settrace(None)
    return result, out, frozenset(steps.items())


# ---- the tests ---------------------------------------------------------------------------
def _convert(fn, input_spec=None):
    """Convert a function or a Layer once. Returns what to call and its StaticFunction."""
    converted = d2s.to_static(fn, input_spec=input_spec)
    static_fn = converted.forward if isinstance(converted, rt.nn.Layer) else converted
    assert isinstance(static_fn.code, str) and "def " in static_fn.code, "no converted code"
    return converted, static_fn


def test_corpus_size():
    categories = collections.Counter(c.category for c in CASES)
    assert len(CASES) >= 150, categories
    assert sum(c.is_layer for c in CASES) >= 10
    assert sum(c.batch is not None for c in CASES) >= 12
    assert len([k for k in categories if not k.startswith(
        ("wild", "paddle_", "paddle2_", "autograph", "dynamo"))]) == 11, categories
    stale = (set(known_failures.STATIC) | set(known_failures.DYNAMIC)) - {c.name for c in CASES}
    assert not stale, f"known_failures names cases that do not exist: {sorted(stale)}"


@pytest.mark.parametrize("c", [pytest.param(c, id=c.name) for c in CASES])
def test_eager(c: Case):
    paths = []
    fn = _make_layer(c) if c.is_layer else c.fn
    for args in c.args:
        result, _, path = _trace_path(fn, args, c)
        paths.append(path)
        if c.ref is not None and not isinstance(result, Raised):
            assert_same(c.ref(*args), result, c.rtol, c.atol, f"{c.name}{_brief(args)}")
        again, _ = _call(fn, args, c.raises)
        assert_same(result, again, 0, 0, f"{c.name} is not deterministic")
    if c.batch is not None:
        for b in BATCH_SIZES:
            _call(fn, c.batch(b))
    if len(c.args) > 1:
        assert len(set(paths)) > 1, f"{c.name}: every argument set takes the same path"


@pytest.mark.parametrize("c", _params(CASES, "static"))
def test_static(c: Case):
    expected, changed = _run(c, _make_layer(c) if c.is_layer else c.fn, c.args)
    fn, static_fn = _convert(_make_layer(c) if c.is_layer else c.fn)
    got, _ = _run(c, fn, c.args)
    for i, (args, exp, res) in enumerate(zip(c.args, expected, got, strict=True)):
        _compare(c, exp, res, f"{c.name} args[{i}]{_brief(args)}")
    # A signature whose every call raised while tracing (a Python-level raise) caches nothing.
    signatures = {_signature(a) for a in c.args}
    traced = {_signature(a) for a, (exp, _, _) in zip(c.args, expected, strict=True)
              if not isinstance(exp, Raised)}
    if changed:
        # calls that change Python state the program reads (a flag or a dict key on `self`
        # first set by a call) may trace once more, or run a trace they do not keep (the
        # state it guarded on is gone after the call)
        low, high = min(len(traced), 1), len(signatures) + 1
    else:
        low, high = len(traced), len(signatures)
    assert low <= len(static_fn.program_cache) <= high, (
        f"{c.name}: {len(static_fn.program_cache)} programs cached for {len(signatures)} "
        f"input signature(s)")


@pytest.mark.parametrize("c", _params([c for c in CASES if c.batch], "dynamic"))
def test_dynamic_batch(c: Case):
    sets = [c.batch(b) for b in BATCH_SIZES]
    expected, changed = _run(c, _make_layer(c) if c.is_layer else c.fn, sets)
    specs = [d2s.InputSpec([None] + list(a.shape[1:]), str(a.dtype)) for a in sets[0]]
    fn, static_fn = _convert(_make_layer(c) if c.is_layer else c.fn, specs)
    got, _ = _run(c, fn, sets)
    for b, exp, res in zip(BATCH_SIZES, expected, got, strict=True):
        _compare(c, exp, res, f"{c.name} batch={b}")
    # (one more trace where the calls change Python state the program reads, as above)
    assert 1 <= len(static_fn.program_cache) <= 1 + changed, (
        f"{c.name}: {len(static_fn.program_cache)} programs for batch sizes {BATCH_SIZES}")


def _brief(args) -> str:
    parts = []
    for a in args:
        parts.append(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a))
    return "(" + ", ".join(parts) + ")"
