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


# ---- what each node of a converted tree holds (issue 35: a third of the tree was origins) ----

def _shaped(x, w):
    y = rt.matmul(x, w) + 1.0
    if y.mean() > 0:
        y = rt.tanh(y) * 2.0
    return y - x.sum(axis=-1, keepdim=True)


def test_parsed_nodes_make_their_origin_when_read():
    from d2s.pyct import anno, origin, parser, walk

    parsed = parser.parse_function(_shaped)
    nodes = [n for n in walk.walk(parsed.node) if getattr(n, "lineno", None) is not None]
    assert len(nodes) > 30
    # nothing is made for them until asked: no annotation dict, no origin
    assert not any(anno.KEY in n.__dict__ or anno.ORIGIN_ATTR in n.__dict__ for n in nodes)
    assert all(anno.hasanno(n, anno.ORIGIN) for n in nodes)
    # what `origin.stamp` gives each node, made from its position when read
    again = parser.parse_function(_shaped).node
    lines = origin.user_source(parsed.filename)
    origin.stamp(again, parsed.filename, 0, "_shaped", lines)
    stamped = [n for n in walk.walk(again) if getattr(n, "lineno", None) is not None]
    got = [anno.getanno(n, anno.ORIGIN) for n in nodes]
    assert got == [anno.getanno(n, anno.ORIGIN) for n in stamped]
    assert got[0].source_line == "def _shaped(x, w):"
    assert all(anno.getanno(n, anno.ORIGIN) is o for n, o in zip(nodes, got))  # (kept)


def test_nodes_a_pass_makes_take_the_origin_around_them_without_a_dict():
    from d2s.pyct import anno, origin, parser, templates, walk

    fn = parser.parse_function(_shaped).node
    user_expr = fn.body[0].value  # `rt.matmul(x, w) + 1.0`, its origin not read yet
    made = templates.replace("name = _d2s.wrap(value)", name="z", value=user_expr)[0]
    around = anno.getanno(fn.body[1], anno.ORIGIN)  # (the `if` line)
    origin.inherit(made, around)
    assert anno.getanno(made, anno.ORIGIN) is around
    assert anno.getanno(made.value.func, anno.ORIGIN) is around
    assert anno.KEY not in made.__dict__ and anno.KEY not in made.value.__dict__
    # the user's expression inside keeps its own line, though it was not read before
    assert anno.getanno(user_expr, anno.ORIGIN).source_line == "y = rt.matmul(x, w) + 1.0"
    assert all(anno.getanno(n, anno.ORIGIN).lineno == around.lineno
               for n in walk.walk(made) if n not in set(walk.walk(user_expr))
               and anno.hasanno(n, anno.ORIGIN))
    anno.delanno(user_expr, anno.ORIGIN)
    assert not anno.hasanno(user_expr, anno.ORIGIN)


def test_compiling_a_large_text_gives_the_freed_memory_back(monkeypatch):
    bench = _benchmark()
    calls = []
    monkeypatch.setattr(loader, "_return_freed_memory", lambda: calls.append(1))
    monkeypatch.setattr(loader, "_TRIM_FROM", 10**9)
    transpile.convert(bench.make_function(60))
    assert calls == []  # (a small text: nothing to give back, no call)
    monkeypatch.setattr(loader, "_TRIM_FROM", 1_000)
    transpile.convert(bench.make_function(61))
    assert calls == [1]


def test_giving_the_freed_memory_back_is_safe_to_call():
    loader._return_freed_memory()  # (glibc's malloc_trim, or nothing where there is none)
    loader._return_freed_memory()


def test_nodes_of_one_line_share_its_number():
    """The parser makes an int object per node and position for a line number past 256 (4 MB
    of a 10,000-line function's tree): the converted nodes of one line share one."""
    from d2s.pyct import parser

    bench = _benchmark()
    fn = bench.make_function(400)
    node = parser.parse_function(fn).node
    by_line: dict = {}
    for n in gast.walk(node):
        for attr in ("lineno", "end_lineno"):
            line = getattr(n, attr, None)
            if line is not None and line > 300:
                by_line.setdefault(line, set()).add(id(line))
    assert by_line
    assert all(len(ids) == 1 for ids in by_line.values())


def test_parsed_names_share_their_context_node():
    """One Load / Store node for every parsed name (a node each was 38,000 objects of the
    10,000-line function's tree), and the function still converts and runs as eager."""
    from d2s.pyct import parser

    bench = _benchmark()
    fn = bench.make_function(60)
    node = parser.parse_function(fn).node
    contexts = {id(n.ctx) for n in gast.walk(node) if isinstance(n, gast.Name)
                and n.ctx.__class__ in (gast.Load, gast.Store)}
    assert len(contexts) == 2
    rng = np.random.default_rng(1)
    x, w, b = (rt.to_tensor(rng.standard_normal(s).astype("float32") * 0.3)
               for s in ([4, 8], [8, 8], [8]))
    np.testing.assert_allclose(d2s.to_static(fn)(x, w, b).numpy(), fn(x, w, b).numpy(),
                               rtol=1e-4, atol=1e-5)


def test_a_large_line_map_is_remade_of_new_objects_once_the_tree_is_freed(monkeypatch):
    """The line map's origins, their texts and line numbers were made among the converted
    tree's nodes, where they kept Python's allocator from giving back the memory around them
    after the tree was freed (6 MB of the 10,000-line function's peak): a large function's
    map is remade of new objects before its text is compiled, with the same contents."""
    from d2s.pyct import origin

    src = origin.OriginInfo("f.py", 1000, 4, "f", "y = x + 1")
    other = origin.OriginInfo("f.py", 1001, 4, "f", "return y")
    line_map = origin.LineMap("gen.py", {700: src, 701: src, 702: other})
    before = dict(line_map.mapping)
    line_map.compact()
    assert line_map.mapping == before
    new = line_map.mapping
    assert new[700] is new[701]  # (one origin for the lines of one statement, as before)
    assert all(new[k] is not before[k] and new[k].source_line is not before[k].source_line
               and new[k].lineno is not before[k].lineno for k in before)
    assert all(k is not b for k in new for b in before)

    compacted = []
    real = origin.LineMap.compact

    def spy(self):
        compacted.append(dict(self.mapping))
        real(self)
        assert self.mapping == compacted[-1]

    monkeypatch.setattr(origin.LineMap, "compact", spy)
    bench = _benchmark()
    fn = bench.make_function(2500)  # (text past loader._TRIM_FROM)
    rng = np.random.default_rng(2)
    x, w, b = (rt.to_tensor(rng.standard_normal(s).astype("float32") * 0.3)
               for s in ([4, 8], [8, 8], [8]))
    np.testing.assert_allclose(d2s.to_static(fn)(x, w, b).numpy(), fn(x, w, b).numpy(),
                               rtol=1e-4, atol=1e-5)
    assert len(compacted) == 1 and len(compacted[0]) > 2000


def test_the_statement_analyses_are_dropped_after_the_last_pass_that_reads_them():
    """`analyze`'s sets of names before and after each statement are dropped once no pass
    reads them (5 MB of the 10,000-line function's tree while it was printed); the
    function's locals and scope declarations stay, and the code converts as before."""
    from d2s.pyct import analysis, anno
    from d2s.pyct.walk import nested_defs

    def helper(x, n):
        total = x * 0.0
        for i in range(n):
            if x.sum() > i:
                total = total + x
            else:
                total = total - 1.0
        return total

    node, ctx, present = transpile._prepare(helper)
    analysis.analyze(node)
    statements = [s for s in gast.walk(node) if isinstance(s, gast.stmt)]
    assert any(anno.hasanno(s, anno.DEFINED_IN) for s in statements)
    node, ctx, present = transpile._prepare(helper)
    with transpile._walrus_free(present):
        node = transpile._run_passes(node, ctx, len(transpile._passes()), present)
    kept = [(type(s).__name__, k) for s in gast.walk(node) if isinstance(s, gast.stmt)
            for k in (anno.DEFINED_IN, anno.LIVE_OUT, anno.LOOP_LIVE) if anno.hasanno(s, k)]
    assert kept == []
    assert all(anno.hasanno(f, anno.LOCALS) for f in [node] + nested_defs(node)
               if anno.hasanno(f, anno.SCOPE_DECL))
    x = rt.to_tensor(np.array([0.5, 1.0], dtype="float32"))
    for n in (0, 1, 3):
        np.testing.assert_allclose(d2s.to_static(helper)(x, n).numpy(), helper(x, n).numpy())
