"""A scope with many generated functions reuses their names once the statement that uses
them has run (`d2s/pyct/generated_names.py`), so CPython compiles a huge converted function in
linear time: its local names stay as few as the user's, whatever the number of `if`s."""
from __future__ import annotations

import importlib.util
import pathlib
import textwrap
import types

import gast
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import transpile
from d2s.pyct import anno, generated_names, parser

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _benchmark():
    spec = importlib.util.spec_from_file_location("huge_function",
                                                  ROOT / "benchmarks" / "huge_function.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _renamed(source: str, reuse_from: int = 1) -> str:
    """`source` (one def whose nested defs named `_if_...` / `_for_...` count as generated)
    after `reuse_generated_names`."""
    fn = gast.parse(textwrap.dedent(source)).body[0]
    for node in gast.walk(fn):
        if isinstance(node, gast.FunctionDef) and node.name.startswith(("_if_", "_for_")):
            anno.setanno(node, anno.GENERATED, True)
    generated_names.reuse_generated_names(fn, reuse_from)
    return parser.unparse(fn)


def _run(source: str, *args):
    scope = {"pick": lambda c, a, b: a() if c else b()}
    exec(compile(source, "<test>", "exec"), scope)  # noqa: S102  (the test's own code)
    fn = next(v for k, v in scope.items() if k == "f")
    return fn(*args)


PICKS = """
def f(c):
    def _if_true_1():
        return 1
    def _if_false_1():
        return 2
    y = pick(c, _if_true_1, _if_false_1)
    def _if_true_2():
        return 30
    def _if_false_2():
        return 40
    z = pick(c, _if_true_2, _if_false_2)
    def _if_true_3():
        return 500
    w = pick(c, _if_true_3, _if_true_1)
    return y + z + w
"""


def test_a_group_takes_the_smallest_names_not_used_outside_their_own_group():
    out = _renamed(PICKS)
    # `_if_true_1` is read by the third group too: it keeps its name, and no other def
    # takes it; every other name is used by its own group only and is reused.
    assert [line.strip() for line in out.splitlines() if line.strip().startswith("def _")] == [
        "def _if_true_1():", "def _if_false_1():", "def _if_true_2():", "def _if_false_1():",
        "def _if_true_2():"]
    assert "z = pick(c, _if_true_2, _if_false_1)" in out
    assert "w = pick(c, _if_true_2, _if_true_1)" in out
    for c in (True, False):
        assert _run(out, c) == _run(textwrap.dedent(PICKS), c) == (531 if c else 43)


NESTED = """
def f(c):
    def _if_true_5():
        return 1
    def _if_false_6():
        def _if_true_7():
            return 20
        def _if_false_8():
            return 30
        return pick(not c, _if_true_7, _if_false_8) + pick(c, _if_true_5, _if_false_8)
    return pick(c, _if_true_5, _if_false_6)
"""


def test_names_in_a_nested_function_avoid_the_names_it_reads_from_around_it():
    out = _renamed(NESTED)
    # the nested function reads the outer group's `_if_true_1`: its own defs take other names
    assert "return pick(not c, _if_true_2, _if_false_2) + pick(c, _if_true_1, _if_false_2)" \
        in out
    assert "return pick(c, _if_true_1, _if_false_1)" in out
    for c in (True, False):
        assert _run(out, c) == _run(textwrap.dedent(NESTED), c) == (1 if c else 50)


def test_a_scope_with_fewer_generated_defs_than_the_threshold_keeps_its_names():
    assert _renamed(PICKS, reuse_from=6) == parser.unparse(gast.parse(textwrap.dedent(PICKS)))


def _model_step(x, gates):
    h = x
    if h.mean() > gates[0]:
        h = h * 2.0
    else:
        h = h - 1.0
    for i in range(2):
        h = h + float(i)
    if h.max() > gates[1]:
        h = rt.tanh(h)
    elif h.min() < gates[2]:
        h = h * 0.5
    steps = rt.zeros([])
    while h.abs().max() > 4.0:
        if h.sum() > 0:
            h = h * 0.5
        else:
            h = h * 0.25
        steps = steps + 1.0
    return h, steps


def _model_step_numpy(x, gates):
    h = x * 2.0 if x.mean() > gates[0] else x - 1.0
    h = h + 0.0 + 1.0
    if h.max() > gates[1]:
        h = np.tanh(h)
    elif h.min() < gates[2]:
        h = h * 0.5
    steps = 0.0
    while np.abs(h).max() > 4.0:
        h = h * (0.5 if h.sum() > 0 else 0.25)
        steps += 1.0
    return h, steps


@pytest.mark.parametrize("gates", [(-9.0, -9.0, 9.0), (9.0, 9.0, 9.0), (9.0, 9.0, -9.0)])
@pytest.mark.parametrize("scale", [0.5, 20.0])
def test_reused_names_run_as_eager_does_on_every_path(monkeypatch, gates, scale):
    monkeypatch.setattr(generated_names, "REUSE_FROM", 1)
    # a fresh function per case: conversions are cached per function object
    fn = types.FunctionType(_model_step.__code__, _model_step.__globals__)
    static = d2s.to_static(fn)
    code = transpile.converted_source(fn)
    assert code.count("def _if_true_1(") >= 2  # the names are reused
    rng = np.random.default_rng(3)
    x_np = (rng.standard_normal([3, 4]) * scale).astype("float32")
    x, g = rt.to_tensor(x_np), rt.to_tensor(np.array(gates, dtype="float32"))
    want_h, want_steps = _model_step_numpy(x_np, np.array(gates, dtype="float32"))
    for got in (fn(x, g), static(x, g)):
        np.testing.assert_allclose(got[0].numpy(), want_h, rtol=1e-5, atol=1e-6)
        assert float(got[1]) == want_steps


def test_a_huge_function_has_as_few_local_names_as_a_small_one(monkeypatch):
    monkeypatch.setattr(generated_names, "REUSE_FROM", 64)  # (the default needs 10,000 lines)
    bench = _benchmark()
    counts = []
    for lines in (600, 2400):
        code = transpile.convert(bench.make_function(lines)).__code__
        counts.append(len(code.co_varnames) + len(code.co_cellvars))
    # 4 times the `if`s and loops, the same locals: the user's and a few generated names
    assert counts[0] == counts[1] < 24, counts


class _CountedSet(set):
    def __init__(self, items):
        super().__init__(items)
        self.asked = 0

    def __contains__(self, item):
        self.asked += 1
        return super().__contains__(item)


def _names_chosen(kept_count: int, groups: int, per_group: int) -> tuple[dict, int]:
    """(old -> new name, names asked of `kept`) for a scope whose `kept_count` first numbers
    are kept (an `elif` chain's defs, read outside their groups) and `groups` groups of
    `per_group` defs of one base each."""
    kept = _CountedSet(f"_if_true_{k}" for k in range(1, kept_count + 1))
    number = kept_count
    scope = types.SimpleNamespace(groups=[], children=[])
    for _ in range(groups):
        defs = []
        for _ in range(per_group):
            number += 1
            defs.append(types.SimpleNamespace(name=f"_if_true_{number}"))
        scope.groups.append(generated_names._Group(defs, None))
    renamed = {d.name for g in scope.groups for d in g.defs}
    mapping: dict = {}
    generated_names._choose(scope, renamed, kept, frozenset(), mapping)
    return mapping, kept.asked


def test_choosing_names_past_many_kept_ones_is_linear():
    # (each group counted past every kept name, and each def past its group's earlier ones:
    # an `elif` chain of n keeps its defs' names, and its hoisted defs are one group of 2n)
    small_names, small = _names_chosen(100, 10, 100)
    large_names, large = _names_chosen(400, 10, 400)
    assert large / small <= 4 * 1.5, (small, large)  # (was ~16x)
    # the smallest numbers not kept, in the order of the old names, in each group
    assert [small_names[f"_if_true_{k}"] for k in (101, 102, 200, 201, 1100)] == [
        "_if_true_101", "_if_true_102", "_if_true_200", "_if_true_101", "_if_true_200"]
    assert set(large_names.values()) == {f"_if_true_{k}" for k in range(401, 801)}
