"""d2s.pyct's analyses one at a time: activity (reads and writes), definedness, liveness, and
composite names; `analysis.analyze` runs them once per function for every converter."""
from __future__ import annotations

import textwrap

import gast
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.pyct import activity, analysis, anno, definedness, liveness
from d2s.pyct.qnames import QName, is_composite, qualified_name, root_of


def _fn(src: str):
    return gast.parse(textwrap.dedent(src)).body[0]


# ---- qnames ------------------------------------------------------------------------------

def test_a_composite_name_is_a_string_that_knows_its_parts():
    expr = gast.parse("self.enc.scale").body[0].value
    q = qualified_name(expr)
    assert isinstance(q, QName) and q == "self.enc.scale"
    assert (q.root, q.attrs, q.parent) == ("self", ("enc", "scale"), "self.enc")
    assert isinstance(q.parent, QName) and not isinstance(QName("self.a").parent, QName)
    assert qualified_name(gast.parse("x").body[0].value) == "x"
    assert qualified_name(gast.parse("f().x").body[0].value) is None
    assert is_composite(q) and not is_composite("x")
    assert root_of("x") == "x" and root_of("d.k") == "d"
    assert {q} == {"self.enc.scale"}  # sits in the same sets as plain strings


# ---- activity ----------------------------------------------------------------------------

def test_activity_reads_and_writes_with_composite_names():
    fn = _fn("""
        def f(self, xs, d):
            total = 0
            for i, x in enumerate(xs):
                total += x * self.scale
            d['k'] = total
            self.count = len(xs)
            return [y for y in xs if y > total]
        """)
    w = activity.written(fn.body)
    assert w == {"total", "i", "x", "d", "self.count"}
    assert all(isinstance(n, QName) for n in w if "." in n)
    assert activity.read(fn.body) >= {"xs", "total", "x", "self", "enumerate", "len"}
    # a comprehension variable stays in the comprehension: neither written nor read here
    assert "y" not in w and "y" not in activity.read(fn.body)
    assert activity.local_names(fn) >= {"self", "xs", "d", "total", "i", "x"}
    assert "self.count" not in activity.local_names(fn)  # mutated, not bound
    assert activity.params(fn) == ["self", "xs", "d"]


def test_activity_declarations_and_closure_cells():
    fn = _fn("""
        def f(a):
            global g
            b = a
            def inner():
                nonlocal b
                return b + c
            c = 1
            return inner
        """)
    assert activity.scope_declarations(fn.body) == {"g": "global"}
    assert activity.scope_declarations(fn.body[2].body) == {"b": "nonlocal"}
    assert activity.closure_cells(fn) == {"b", "c"}


def test_local_names_are_pythons_scoping():
    fn = _fn("""
        def f(a, *rest, k=1, **kw):
            global g
            b, (c, *d) = a
            e[0] = 1
            self.x = 2
            f2 = [i for i in a if (j := i)]
            del h
            with a as w, a as self.y:
                pass
            import os.path as osp, sys
            try:
                pass
            except E as err:
                pass
            for m, self.n in a:
                n2 += 1
            o[1] += 1
            def inner():
                p = 1
            class C:
                q = 2
            lam = lambda r: (s := r)
            g = 3
        """)
    assert activity.local_names(fn) == {
        "a", "rest", "k", "kw", "b", "c", "d", "f2", "j", "h", "w", "osp", "sys", "err", "m",
        "n2", "inner", "C", "lam"}  # not: e, o, self.* (mutated), i, p, q, r, s, g
    lam = fn.body[-2].value
    assert activity.local_names(lam) == {"r", "s"}


_WALRUS_FREE = """
    def f(a, *rest, k=1, **kw):
        b, (c, *d) = a.g(a + 1, key=[x * 2 for x in rest])
        e[b + 1] = {1: a}
        for m, self.n in zip(a, rest):
            if m > (b if c else d):
                n2 = m * 2 - c
            else:
                while n2 < 3:
                    n2 += 1
        with open(a) as w:
            try:
                v = w.read()
            except (OSError, E) as err:
                v = str(err)
            finally:
                del b
        match v:
            case [p, *ps] if p > 0:
                q = p
            case {"k": r, **rs}:
                q = r
        return q
    """


def test_without_a_walrus_binding_names_never_looks_into_an_expression(monkeypatch):
    fn = _fn(_WALRUS_FREE)
    full_locals, full_written = activity.local_names(fn), activity.written(fn.body)
    pushed = []
    walk_push = activity.push_children

    def counting(node, fields, push):
        pushed.append(node)
        walk_push(node, fields, push)

    monkeypatch.setattr(activity, "push_children", counting)
    activity.local_names(fn)
    everywhere = len(pushed)
    pushed.clear()
    with activity.no_walrus(True):
        assert activity.local_names(fn) == full_locals == {
            "a", "rest", "k", "kw", "b", "c", "d", "m", "n2", "w", "v", "err", "p", "ps", "q",
            "r", "rs"}
        statements_only = len(pushed)
        assert activity.written(fn.body) == full_written
    # (statements, `with` items, `except` clauses, match cases and their patterns only)
    assert not [type(n).__name__ for n in pushed if isinstance(n, gast.expr)]
    assert statements_only < everywhere / 2, (statements_only, everywhere)


def test_a_walrus_a_converter_writes_is_found_from_then_on():
    fn = _fn("def f(a):\n  if a:\n    b = a\n  return b")
    with activity.no_walrus(True):
        assert activity.local_names(fn) == {"a", "b"}
        fn.body[0].test = gast.parse("(t := a) > 0").body[0].value  # (what `logical` writes)
        activity.walrus_made()
        assert activity.local_names(fn) == {"a", "b", "t"}
        with activity.no_walrus(False):  # (another function's conversion, which holds one)
            assert activity.local_names(fn) == {"a", "b", "t"}
        assert activity.local_names(fn) == {"a", "b", "t"}  # (this one's state, restored)
    assert activity.local_names(fn) == {"a", "b", "t"}  # (outside a conversion: every node)


def test_a_converted_chained_comparison_keeps_its_temporary_in_a_tensor_if():
    # `logical` evaluates a middle operand once into a walrus temporary; in a branch of a
    # tensor `if` of a function without a user walrus (analysed without looking into
    # expressions until then)
    def clip_band(x, lo):
        if x.sum() > 0:
            ok = lo < (x.mean() * 2.0) < 10.0
            y = x * 2.0 if ok else x
        else:
            y = x - 1.0
        return y

    static = d2s.to_static(clip_band)
    for data in ([1.0, 2.0, 3.0], [-1.0, -2.0, 0.5], [20.0, 30.0, 1.0]):
        x = rt.to_tensor(np.array(data, dtype="float32"))
        np.testing.assert_allclose(static(x, 0.5).numpy(), clip_band(x, 0.5).numpy())
    assert ":=" in static.code


def test_locals_of_is_the_locals_annotation_computed_once():
    fn = _fn("def f(a):\n  b = a\n  def g(c):\n    return c")
    analysis.analyze(fn)
    assert anno.getanno(fn, anno.LOCALS) == {"a", "b", "g"}
    assert activity.locals_of(fn) is anno.getanno(fn, anno.LOCALS)  # read, not recomputed
    made = _fn("def h(x):\n  y = x")  # a function a converter made: analysed on first ask
    assert not anno.hasanno(made, anno.LOCALS)
    assert activity.locals_of(made) == {"x", "y"} and anno.hasanno(made, anno.LOCALS)


def test_closure_cells_are_locals_of_the_scope_a_closure_reads():
    # `t` is bound in `apply` only, and nothing nested in `apply` reads it: not a cell (it
    # was one while a function's locals included names bound in its nested functions)
    fn = _fn("""
        def f(x):
            def apply(fn, t):
                for _ in range(2):
                    t = fn(t)
                return t
            def outer():
                u = 1
                return lambda: u
            return apply(abs, x)
        """)
    assert activity.closure_cells(fn) == {"u"}


def test_facts_memo_agrees_with_the_plain_walks():
    fn = _fn("""
        def f(x):
            if x > 0:
                y = x
            else:
                y = -x
            while y > 1:
                y = y / 2
            return y
        """)
    facts = activity.Facts()
    for s in fn.body:
        assert facts.written(s) == activity.written(s)
        assert facts.read(s) == activity.read(s)


# ---- definedness -------------------------------------------------------------------------

def test_definedness_through_branches_loops_and_try():
    fn = _fn("""
        def f(a):
            if a:
                b = 1
            while a:
                c = b
            try:
                d = 1
            except ValueError:
                e = 2
            return d
        """)
    definedness.annotate(fn.body, frozenset(activity.params(fn)), activity.Facts())
    defined = [anno.getanno(s, anno.DEFINED_IN) for s in fn.body]
    assert defined[0] == {"a"}
    assert defined[1] == {"a", "b"}  # possibly bound by the if
    assert anno.getanno(fn.body[1].body[0], anno.DEFINED_IN) == {"a", "b", "c"}  # later rounds
    handler = fn.body[2].handlers[0].body[0]
    assert anno.getanno(handler, anno.DEFINED_IN) >= {"d"}  # the try body may have run
    assert defined[3] == {"a", "b", "c", "d", "e"}


def test_surely_bound_needs_every_path():
    fn = _fn("""
        def f(a):
            if a:
                x = 1
                y = 1
            else:
                x = 2
            with open(a) as fh:
                z = 1
            d[0] = 1
        """)
    assert definedness.surely_bound(fn.body) == {"x", "fh", "z"}


# ---- liveness ----------------------------------------------------------------------------

def test_a_comprehension_target_or_del_binds_nothing_for_surely_bound():
    body = _fn("def f(xs):\n  n = len([name for name in xs])\n  del xs\n  k += 1").body
    assert definedness.surely_bound(body) == {"n"}


def test_liveness_and_loop_carried_names():
    fn = _fn("""
        def f(n):
            s = 0
            i = 0
            t = 5
            while i < n:
                s = s + i
                i = i + 1
            return s
        """)
    live = liveness.live_in(fn.body, frozenset())
    assert live == {"n"}
    assert anno.getanno(fn.body[0], anno.LIVE_OUT) == {"s", "n"}
    assert anno.getanno(fn.body[2], anno.LIVE_OUT) == {"s", "i", "n"}  # t is dead
    assert anno.getanno(fn.body[3], anno.LOOP_LIVE) == {"s", "i", "n"}
    assert anno.getanno(fn.body[3].body[0], anno.LIVE_OUT) == {"s", "i", "n"}


def test_liveness_of_a_for_loop_excludes_its_target():
    fn = _fn("""
        def f(xs):
            acc = 0
            for x in xs:
                acc = acc + x
            return acc
        """)
    assert liveness.live_in(fn.body, frozenset()) == {"xs"}
    assert anno.getanno(fn.body[1], anno.LOOP_LIVE) == {"acc"}


# ---- analyze: once per function, for every converter --------------------------------------

def test_analyze_annotates_the_function_and_its_nested_defs():
    fn = _fn("""
        def f(a):
            global g
            def inner(b):
                c = b
                return c
            return inner(a)
        """)
    analysis.analyze(fn)
    inner = fn.body[1]
    assert anno.getanno(fn, anno.SCOPE_DECL) == {"g": "global"}
    assert anno.getanno(inner, anno.SCOPE_DECL) == {}
    assert anno.getanno(inner.body[0], anno.DEFINED_IN) == {"b"}
    assert anno.getanno(inner.body[0], anno.LIVE_OUT) == {"c"}
    assert anno.getanno(fn.body[2], anno.LIVE_OUT) == frozenset()
    # read by the state converters (ifelse, loops) instead of walking the function again
    assert anno.getanno(fn, anno.LOCALS) == activity.local_names(fn) >= {"a", "inner"}
    assert anno.getanno(inner, anno.LOCALS) == {"b", "c"}
    # the facade keeps every analysis importable from one place
    assert analysis.written is activity.written and analysis.live_in is liveness.live_in
    assert analysis.surely_bound is definedness.surely_bound


# ---- converters read the analysis (`LOCALS` through `Base.is_local` / `is_local_here`) ----

HISTORY = [0.0]


def _logs_to_a_global_list(x):
    HISTORY[0] = 1.0  # mutates the global list: `HISTORY` stays a global name here
    HISTORY.append(2.0)  # so this stays a method call (an assignment would make it local)
    s = x.sum()
    if s > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    return y


def _lambda_parameter_shadows_a_builtin(x):
    measure = lambda len: len(x)  # noqa: E731  (`len` is the lambda's parameter here)
    return measure(lambda t: t * 3.0)


def _nested_helper_rebinds_its_parameter(x):
    def apply(fn, t, times):
        for _ in range(times):
            t = fn(t)
        return t
    return apply(lambda v: rt.where(v > 0, v * 2.0, -v), x, 2)


def _comprehension_reuses_a_branch_name(x, flag):
    if flag:  # `name` here is the comprehension's own: the branch leaves it unbound
        y = x + len([name for name in ["a", "b"]])
    else:
        name = 3.0
        y = x * name
    return y


@pytest.mark.parametrize("fn, ref", [
    (lambda x: _comprehension_reuses_a_branch_name(x, True), lambda a: a + 2.0),
    (lambda x: _comprehension_reuses_a_branch_name(x, False), lambda a: a * 3.0),
    (_logs_to_a_global_list, lambda a: a * 2.0 if a.sum() > 0 else a - 1.0),
    (_lambda_parameter_shadows_a_builtin, lambda a: a * 3.0),
    (_nested_helper_rebinds_its_parameter, lambda a: np.where(a > 0, a * 4.0, -2.0 * a)),
])
def test_converters_scope_names_as_python_does(fn, ref):
    static = d2s.to_static(fn)
    for a in (np.array([1.0, 2.0], np.float32), np.array([-3.0, 0.5], np.float32)):
        eager = fn(rt.to_tensor(a)).numpy()
        out = static(rt.to_tensor(a)).numpy()
        np.testing.assert_allclose(out, eager, rtol=1e-6)
        np.testing.assert_allclose(out, ref(a), rtol=1e-6)
    code = static.code
    if fn is _logs_to_a_global_list:
        assert "HISTORY.append)(2.0)" in code and "list_append(HISTORY" not in code
    if fn is _lambda_parameter_shadows_a_builtin:
        assert "len_" not in code
    if fn is _nested_helper_rebinds_its_parameter:
        assert "nonlocal" not in code  # `t` is `apply`'s own, read by no closure


def test_the_parsed_file_cache_keeps_the_latest_files_only(tmp_path):
    """Each converted file's function nodes are cached by content; an editor or notebook that
    changes files makes new entries, so only `_KEEP_FILES` stay, the latest used."""
    from d2s.pyct import parser
    keep = parser._KEEP_FILES
    names = []
    for k in range(keep + 3):
        path = tmp_path / f"m{k}.py"
        lines = [f"def f{k}(x):", f"    return x + {k}"]
        path.write_text("\n".join(lines) + "\n")
        names.append(str(path))
        index = parser._file_tree(str(path), lines)
        assert [n.name for n in index[1]] == [f"f{k}"]
    cached = [key[0] for key in parser._FILE_TREES]
    assert len(parser._FILE_TREES) <= keep and cached[-1] == names[-1]
    assert names[0] not in cached and names[0] not in parser._BY_LINES
    again = parser._file_tree(names[-3], ["def f(x):", "    return x"])  # a new content
    assert [n.name for n in again[1]] == ["f"] and len(parser._FILE_TREES) <= keep


def test_the_file_index_finds_defs_in_every_kind_of_block_and_lambdas_in_expressions(
        tmp_path):
    """Defs are found from the statement lists alone (a huge file's expressions are not
    walked); lambdas, which any expression can hold, from a walk made on first ask."""
    from d2s.pyct import parser
    src = textwrap.dedent("""\
        import contextlib
        class Box:
            if True:
                def in_if(self, x):
                    return x + 1
        try:
            def in_try(x):
                return x + 2
            raise ValueError
        except ValueError:
            def in_except(x):
                return x + 3
        finally:
            def in_finally(x):
                return x + 4
        for _ in range(1):
            def in_for(x):
                return x + 5
        else:
            def in_for_else(x):
                return x + 6
        with contextlib.nullcontext():
            def in_with(x):
                return x + 7
        match 1:
            case 1:
                def in_case(x):
                    return x + 8
        scale = {"k": (lambda x: x * 9, lambda x: x * 10)}
        """)
    path = tmp_path / "blocks.py"
    path.write_text(src)
    namespace: dict = {}
    exec(compile(src, str(path), "exec"), namespace)  # noqa: S102  (the test's own source)
    fns = [namespace["Box"]().in_if] + [namespace[n] for n in (
        "in_try", "in_except", "in_finally", "in_for", "in_for_else", "in_with", "in_case")]
    assert len(fns) == 8
    for k, fn in enumerate(fns, 1):
        node = parser.parse_function(fn).node
        assert node.name == fn.__name__
        assert parser.unparse(node.body).endswith(f"return x + {k}")
    nine, ten = namespace["scale"]["k"]
    assert parser.unparse(parser.parse_function(nine).node) == "lambda x: x * 9"
    assert parser.unparse(parser.parse_function(ten).node) == "lambda x: x * 10"
    t = rt.to_tensor(np.array([1.0, 2.0], "float32"))
    for k, fn in enumerate(fns, 1):  # and each converts and runs as eager does
        np.testing.assert_allclose(d2s.to_static(fn)(t).numpy(), t.numpy() + k)


def test_a_large_file_keeps_the_places_of_its_defs_and_parses_each_again_alone(tmp_path):
    """A file of over `_LARGE` characters lets its tree go once a function of it is parsed
    (tens of MB for a huge function); a def of it asked for later is parsed from its own
    lines, with the lines and columns it has in the whole file, decorators and nesting
    included."""
    import ast

    from d2s.pyct import parser
    small = [f"def f{k}(x):\n    return x + {k}\n" for k in range(4000)]
    tail = textwrap.dedent("""\
        class Layer:
            @staticmethod
            def forward(x, w):
                if rt.mean(x) > 0:
                    return (x * w
                            + 1.0)  # a continuation line
                return x - w
        scale = lambda x: x * 3
        """)
    src = "import runtime as rt\n" + "".join(small) + tail
    assert len(src) > parser._LARGE
    path = tmp_path / "large.py"
    path.write_text(src)
    namespace: dict = {}
    exec(compile(src, str(path), "exec"), namespace)  # noqa: S102  (the test's own source)
    first = parser.parse_function(namespace["f7"]).node
    assert first.name == "f7" and parser.unparse(first.body) == "return x + 7"
    # (converted a statement at a time, each dropped from the ast tree: the same nodes)
    assert gast.dump(first, include_attributes=True) == gast.dump(
        parser.to_gast(ast.parse(src).body[8]), include_attributes=True)
    index = next(v for k, v in parser._FILE_TREES.items() if k[0] == str(path))
    assert index._tree is None
    assert all(n.__class__ is parser._Place for nodes in index.values() for n in nodes)
    whole = ast.parse(src)
    forward = whole.body[-2].body[0]
    again = index.functions(parser._first_line(forward), "forward")
    assert len(again) == 1
    assert ast.dump(again[0], include_attributes=True) == ast.dump(forward,
                                                                   include_attributes=True)
    layer_forward = parser.parse_function(namespace["Layer"].forward)
    assert layer_forward.node.name == "forward" and layer_forward.node.lineno == forward.lineno
    assert parser.unparse(parser.parse_function(namespace["scale"]).node) == "lambda x: x * 3"
    # and each converts and runs as eager does, on both sides of the tensor `if`
    w = rt.to_tensor(np.array([2.0, 0.5], "float32"))
    for a in (np.array([1.0, 2.0], "float32"), np.array([-3.0, 1.0], "float32")):
        x = rt.to_tensor(a)
        want = a * w.numpy() + 1.0 if a.mean() > 0 else a - w.numpy()
        np.testing.assert_allclose(d2s.to_static(namespace["Layer"].forward)(x, w).numpy(),
                                   want, rtol=1e-6)
        np.testing.assert_allclose(d2s.to_static(namespace["f3999"])(x).numpy(), a + 3999)
        np.testing.assert_allclose(d2s.to_static(namespace["scale"])(x).numpy(), a * 3)
