"""The first call of a converted function costs work linear in its size: each phase (parse,
every pass, printing and compiling, trace and build) makes at most ~5x the function calls for
a function 4x as long, so a walk of the whole tree per statement (quadratic) fails here.
Counts of calls, not times: the result does not depend on the machine's load."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np

import d2s
import runtime as rt
from d2s import transpile
from d2s.pyct import analysis, loader

ROOT = pathlib.Path(__file__).resolve().parents[3]
SMALL, FACTOR = 60, 4


def _benchmark():
    spec = importlib.util.spec_from_file_location("huge_function",
                                                  ROOT / "benchmarks" / "huge_function.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Calls:
    """Counts the Python and C function calls made inside `with` blocks, by phase."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def phase(self, name):
        calls = self

        class _Counting:
            def __enter__(self):
                self.n = 0

                def count(frame, event, arg):
                    if event in ("call", "c_call"):
                        self.n += 1
                sys.setprofile(count)

            def __exit__(self, *exc):
                sys.setprofile(None)
                calls.counts[name] = calls.counts.get(name, 0) + self.n

        return _Counting()


def _first_call_counts(bench, lines: int) -> dict[str, int]:
    fn = bench.make_function(lines)
    calls = _Calls()
    with transpile.deep_recursion():
        with calls.phase("parse and survey"):
            node, ctx, present = transpile._prepare(fn)
        ctx.present = set(present)
        for name, module in transpile._passes():
            if not ctx.present.intersection(module.HANDLES):
                continue
            with calls.phase(name):
                if module.NEEDS_ANALYSIS:
                    analysis.analyze(node)
                node = module.transform(node, ctx)
            ctx.present.update(module.CREATES)
        with calls.phase("print and compile"):
            transpile._finalize(node)
            loader.load(node, [transpile.RESERVED] + list(fn.__code__.co_freevars))
    static = d2s.to_static(fn)
    transpile.convert(fn)  # (converted before counting: the call below traces and builds)
    rng = np.random.default_rng(0)
    x, w, b = (rt.to_tensor(rng.standard_normal(s).astype("float32") * 0.3)
               for s in ([4, 8], [8, 8], [8]))
    with calls.phase("trace, build and run"):
        got = static(x, w, b)
    np.testing.assert_allclose(got.numpy(), fn(x, w, b).numpy(), rtol=1e-4, atol=1e-5)
    return calls.counts


def test_each_phase_of_a_first_call_grows_linearly_with_the_function():
    bench = _benchmark()
    small = _first_call_counts(bench, SMALL)
    large = _first_call_counts(bench, SMALL * FACTOR)
    assert sorted(small) == sorted(large)
    assert {"parse and survey", "ifelse", "loops", "print and compile",
            "trace, build and run"} <= set(small)
    grown = {phase: large[phase] / small[phase] for phase in small}
    assert all(ratio <= FACTOR * 1.25 for ratio in grown.values()), grown


def test_statements_that_bind_no_new_name_share_the_names_bound_before_them():
    # a set of the names bound so far per statement would grow as statements x names
    import gast

    from d2s.pyct import anno, definedness
    from d2s.pyct.activity import Facts
    body = "\n".join(f"    {'ab'[k % 2]} = a + b * {k}" for k in range(400))
    fn = gast.parse(f"def f(a):\n    b = a\n{body}\n    if a:\n        c = b\n    return c").body[0]
    after = definedness.annotate(fn.body, frozenset({"a"}), Facts())
    sets = [anno.getanno(s, anno.DEFINED_IN) for s in fn.body]
    assert len(sets) == 403 and after == {"a", "b", "c"}
    assert sets[0] == {"a"} and sets[1] == sets[-2] == {"a", "b"}  # (-2: the `if`)
    assert sets[-1] == {"a", "b", "c"}
    assert len({id(s) for s in sets}) == 3  # one set per new name, not one per statement
