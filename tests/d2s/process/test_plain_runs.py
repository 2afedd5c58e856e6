"""Runs of straight-line statements that no pass changes skip the passes
(`d2s/converters/plain_runs.py`): the converted code is the code every pass walking them
writes, it runs as eager code on both sides of its tensor `if` (gradients too), the name
analyses read a placeholder as the run it stands for, and errors in a folded statement name
the user's line."""
from __future__ import annotations

import inspect
import linecache
import math

import gast
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import transpile
from d2s.converters import NAMES, plain_runs
from d2s.pyct import analysis, anno
from tests.d2s.breadth35.messages import assert_at_user_line
from tests.finite_differences import numeric_grad


class Gate(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.scale = 1.5

    def forward(self, x):
        return x * self.scale


GATE = Gate()


def helper(x):
    return x * 2.0


def block(x, w, b, n):
    h = rt.matmul(x, w) + b
    h = rt.nn.functional.relu(h) * 1.25
    s = h.sum(axis=-1, keepdim=True)
    h = h / (s.abs() + 1.0)
    parts = []
    parts.append(h)  # (lists)
    k = math.sqrt(n)  # (builtin_calls: math)
    g = helper(h) + GATE(h)  # (call_trees: user calls)
    rows = h.shape[0]  # (builtin_calls: shape)
    if h.mean() > 0.2:
        h = h * 0.5 + g
    else:
        h = rt.tanh(h) - g
    h = h * k
    t = h + b
    t = t * t
    h = rt.exp(-t) + h * float(rows)
    for i in range(n):
        h = h + parts[0] * i
    u = h.mean(axis=0)
    u = u * 2.0 + b
    return h, u


def reference(x, w, b, n):
    h = np.maximum(x @ w + b, 0) * 1.25
    h = h / (np.abs(h.sum(axis=-1, keepdims=True)) + 1.0)
    first, g = h, h * 2.0 + h * 1.5
    took_if = h.mean() > 0.2
    h = h * 0.5 + g if took_if else np.tanh(h) - g
    h = h * math.sqrt(n)
    t = (h + b) ** 2
    h = np.exp(-t) + h * float(h.shape[0])
    for i in range(n):
        h = h + first * i
    return (h, h.mean(axis=0) * 2.0 + b), took_if


RNG = np.random.default_rng(3)
W = (RNG.standard_normal([3, 3]) * 0.5 + np.eye(3)).astype("float32")
B = np.array([0.1, -0.2, 0.3], "float32")
X_BIG = np.abs(RNG.standard_normal([2, 3])).astype("float32") * 4.0
X_SMALL = X_BIG * 0.05


def _converted_without_folding(fn) -> str:
    original = plain_runs.fold
    plain_runs.fold = lambda node, ctx: 0
    try:
        return transpile.convert_source(fn, 99)
    finally:
        plain_runs.fold = original


def test_the_folded_passes_write_the_code_every_pass_writes(monkeypatch):
    folded = []
    fold = plain_runs.fold
    monkeypatch.setattr(plain_runs, "fold", lambda node, ctx: folded.append(fold(node, ctx))
                        or folded[-1])
    code = transpile.convert_source(block, 99)
    monkeypatch.undo()
    # (the runs of 2 and 3 statements: `h.sum()`, `s.abs()`, `h.mean()` on an `h` that a user
    # call's result reaches are routed through `_d2s.call`: it may be the user's object)
    assert folded == [5]
    assert code == _converted_without_folding(block)
    for wanted in ("parts = _d2s.list_append(parts, h)", "_d2s.math_(math.sqrt)",
                   "s = _d2s.call(h.sum)(axis=-1, keepdim=True)",
                   "_d2s.call(helper)(h) + _d2s.call(GATE)(h)", "_d2s.shape(h)[0]",
                   "_d2s.float_(rows)", "h = rt.matmul(x, w) + b\n",
                   "    u = u * 2.0 + b\n"):
        assert wanted in code, wanted


@pytest.mark.parametrize("x, took_if", [(X_BIG, True), (X_SMALL, False)])
def test_folded_code_runs_as_eager_code_on_both_sides_of_its_if(x, took_if):
    static = d2s.to_static(block)
    want, took = reference(x, W, B, 2)
    assert took == took_if  # (the inputs take both branches of one program)
    args = [rt.to_tensor(x), rt.to_tensor(W), rt.to_tensor(B), 2]
    for got in (block(*args), static(*args)):
        assert len(got) == len(want)
        for g, r in zip(got, want):
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


@pytest.mark.parametrize("x", [X_BIG, X_SMALL])
def test_gradients_through_folded_runs_match_finite_differences(x):
    static = d2s.to_static(block)
    xt, wt = rt.to_tensor(x), rt.to_tensor(W)
    xt.stop_gradient = wt.stop_gradient = False
    h, u = static(xt, wt, rt.to_tensor(B), 2)
    (h.sum() + u.sum()).backward()
    for value, grad, arg in ((x, xt.grad, 0), (W, wt.grad, 1)):
        def f(a, arg=arg):
            args = [x, W, B, 2]
            args[arg] = a
            out, _ = reference(*args)
            return float(out[0].sum() + out[1].sum())
        want = numeric_grad(f, np.asarray(value, "float64"), eps=1e-4)
        np.testing.assert_allclose(grad.numpy(), want, rtol=2e-3, atol=2e-3)


def _statement_facts(fn, fold: bool) -> list:
    """(LIVE_OUT, DEFINED_IN) of each statement of `fn` that is not folded."""
    node, ctx, _ = transpile._prepare(fn)
    placeholders = plain_runs.fold(node, ctx) if fold else 0
    analysis.analyze(node)
    facts = [(anno.getanno(s, anno.LIVE_OUT), anno.getanno(s, anno.DEFINED_IN))
             for s in node.body if not anno.hasanno(s, plain_runs.RUN)]
    return placeholders, facts


def test_the_analyses_read_a_placeholder_as_the_run_it_stands_for():
    folded, facts = _statement_facts(block, fold=True)
    unfolded, all_facts = _statement_facts(block, fold=False)
    assert (folded, unfolded) == (5, 0)
    plain = {0, 1, 10, 11, 12}  # (the folded statements)
    kept = [f for i, f in enumerate(all_facts) if i not in plain]
    assert len(facts) == len(kept)
    assert facts == kept


def test_a_placeholder_reads_what_the_run_reads_before_binding_it():
    def f(a, c):
        y = a + c.abs()
        a = y * 2.0
        y = a.sum() + y
        return y

    node, ctx, _ = transpile._prepare(f)
    assert plain_runs.fold(node, ctx) == 3
    placeholder = node.body[0]
    assert [n.id for n in placeholder.value.elts] == ["a", "c"]
    assert [n.id for n in placeholder.targets[0].elts] == ["a", "y"]
    assert isinstance(placeholder, gast.Assign)
    plain_runs.unfold(node)
    assert len(node.body) == 4 and not any(anno.hasanno(s, plain_runs.RUN) for s in node.body)


def misshaped(x, w):
    h = x * 2.0
    h = rt.matmul(h, w)
    h = h + 1.0
    if h.mean() > 0:
        h = -h
    return h


def test_an_error_in_a_folded_statement_names_the_user_line():
    lines, first = inspect.getsourcelines(misshaped)
    line = first + next(i for i, text in enumerate(lines) if "rt.matmul(h, w)" in text)
    with pytest.raises(Exception) as info:
        d2s.to_static(misshaped)(rt.ones([2, 3]), rt.ones([4, 2]))
    assert_at_user_line(info.value, __file__, line)


def as_written(x):
    y = x * 1.50
    z = rt.cast(y, "float32"); label = "größe"  # (two statements on one line)
    if z.mean() > 0:
        z = z + 1.0
    return z, label


def test_the_generated_module_holds_a_folded_statement_as_the_user_wrote_it():
    transpile.convert(as_written)
    converted = transpile._CACHE[as_written]
    with open(converted.loaded.filename) as f:
        module = f.read()
    for wanted in ('y = x * 1.50  #', 'z = rt.cast(y, "float32")  #', 'label = "größe"  #'):
        assert wanted in module, module
    assert 'y = x * 1.5\n' in converted.source  # (`.code`: printed from the module's tree)
    for x, add in (([1.0, 2.0], 1.0), ([-1.0, -2.0], 0.0)):
        z, label = d2s.to_static(as_written)(rt.to_tensor(x))
        np.testing.assert_allclose(z.numpy(), np.array(x) * 1.5 + add)
        assert label == "größe"


FIRST_LINE_DEF = """def first_line(x):
    y = x * 2.00
    z = y + 1.0
    for i in range(3):
        if z.sum() > 100.0:
            return z
        z = z * 2.0
    return z + y
"""


def _first_line_function():
    filename = "<d2s-test-plain-runs-first-line>"
    linecache.cache[filename] = (len(FIRST_LINE_DEF), None,
                                 FIRST_LINE_DEF.splitlines(True), filename)
    scope = {"rt": rt}
    exec(compile(FIRST_LINE_DEF, filename, "exec"), scope)  # noqa: S102  (the source above)
    return scope["first_line"]


def test_statements_a_pass_made_are_printed_from_their_tree():
    # The flags the return pass writes first (`_do_return = False`, ...) have the positions
    # of their template (line 1, column 0): given the origin of a def at line 1, column 0,
    # they would match its line; they are never taken for the user's text.
    fn = _first_line_function()
    node, ctx, present = transpile._prepare(fn)
    node = transpile._run_passes(node, ctx, NAMES.index(plain_runs.AFTER_PASS) + 1, present)
    flags = node.body[:2]
    assert [n.targets[0].id for n in flags] == ["_do_return", "_retval"]
    for n in flags:
        assert (n.lineno, n.col_offset) == (1, 0)
        anno.setanno(n, anno.ORIGIN, anno.getanno(node, anno.ORIGIN))
    assert plain_runs.fold(node, ctx) == 4
    folded = anno.getanno(node.body[0], plain_runs.RUN)
    assert [anno.getanno(n, anno.SOURCE_TEXT, None) for n in folded] == [
        None, None, "y = x * 2.00", "z = y + 1.0"]


def test_a_function_at_the_first_line_converts_and_prints_its_own_text():
    fn = _first_line_function()
    transpile.convert(fn)
    with open(transpile._CACHE[fn].loaded.filename) as f:
        module = f.read()
    for wanted in ("\n        _do_return = False  #", "\n        y = x * 2.00  #"):
        assert wanted in module, module
    for x in ([1.0, 2.0], [100.0, 2.0]):
        want = fn(rt.to_tensor(x)).numpy()
        np.testing.assert_allclose(d2s.to_static(fn)(rt.to_tensor(x)).numpy(), want)
