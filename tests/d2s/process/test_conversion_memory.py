"""The converted tree is freed before the converted text is compiled (`loader.write`, then
`loader.compile_written`): compiling a huge function's text takes about as much memory as its
tree, and the two at once were the peak of a first call (issue 35). Code nested deeper than
Python's tokenizer reads keeps its tree, compiled from it."""
from __future__ import annotations

import gc
import importlib.util
import pathlib

import gast
import numpy as np

import d2s
import runtime as rt
from d2s import transpile
from d2s.pyct import loader

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _benchmark():
    spec = importlib.util.spec_from_file_location("huge_function",
                                                  ROOT / "benchmarks" / "huge_function.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _live_nodes() -> int:
    """gast nodes alive (not the parser's cached `ast` trees of the user's files)."""
    return sum(type(o).__module__ == gast.If.__module__ for o in gc.get_objects())


def test_the_tree_is_freed_before_the_text_is_compiled_and_the_call_is_right(monkeypatch):
    bench = _benchmark()
    fn = bench.make_function(400)  # (about 4,000 nodes converted)
    transpile.convert(bench.make_function(40))  # (templates parsed, caches warm)
    gc.collect()
    before = _live_nodes()
    while_compiling = []
    real = compile

    def compiling(text, filename, mode, *args, **kwargs):
        if filename.endswith(".py") and "huge_" in filename:
            while_compiling.append(_live_nodes())
        return real(text, filename, mode, *args, **kwargs)

    monkeypatch.setattr(loader, "compile", compiling, raising=False)
    static = d2s.to_static(fn)
    rng = np.random.default_rng(0)
    x, w, b = (rt.to_tensor(rng.standard_normal(s).astype("float32") * 0.3)
               for s in ([4, 8], [8, 8], [8]))
    np.testing.assert_allclose(static(x, w, b).numpy(), fn(x, w, b).numpy(),
                               rtol=1e-4, atol=1e-5)
    assert len(while_compiling) == 1
    assert while_compiling[0] - before < 100, (before, while_compiling)
    assert static.code.startswith("def huge(x, w, b):")  # (printed from the text)


def test_text_too_deep_for_the_tokenizer_keeps_its_tree():
    # (the levels from which the tree is kept: below Python's 100, the factory adds one)
    assert loader._DEEP < 99
    shallow = gast.parse("def f(x):\n    if x:\n        return 1\n    return 2").body[0]
    assert loader.write(shallow, []).module is None
    body = "pass"
    for _ in range(loader._DEEP):
        body = f"if x:\n{chr(10).join('    ' + line for line in body.splitlines())}"
    deep = gast.parse("def g(x):\n" + "\n".join("    " + s for s in body.splitlines())).body[0]
    written = loader.write(deep, [])
    assert written.module is not None
    assert loader.compile_written(written).code.co_name == "g"
