"""The compiled template builders (d2s/pyct/templates.py) give exactly the trees of the
straightforward implementation they replaced: parse the template, copy the tree, replace
placeholders with a NodeTransformer. That implementation is kept here as the reference, and
both are run on the same templates and replacements (fields, positions, ctx objects, which
replacement nodes are placed as is and which are copies, errors)."""
from __future__ import annotations

import copy
import math
import random
import textwrap

import gast
import pytest

from d2s.pyct import templates

# -- the reference: the implementation before builders -----------------------------------


def _ref_copy(node):
    if isinstance(node, list):
        return [_ref_copy(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = node.__class__.__new__(node.__class__)
    for field in node._fields:
        setattr(new, field, _ref_copy(getattr(node, field, None)))
    for attr in node._attributes:
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    return new


def ref_replace(template, **repl):
    tree = _ref_copy(gast.parse(textwrap.dedent(template), mode="exec"))
    return _RefReplacer(repl).visit_list(tree.body)


def ref_replace_as_expression(template, **repl):
    tree = _ref_copy(gast.parse(textwrap.dedent(template).strip(), mode="eval"))
    return _RefReplacer(repl).visit(tree).body


def ref_parse_expr(text):
    return _ref_copy(gast.parse(text.strip(), mode="eval").body)


def _ref_as_node(value, ctx, fresh):
    if isinstance(value, str):
        return gast.Name(id=value, ctx=ctx(), annotation=None, type_comment=None)
    node = value if fresh else copy.deepcopy(value)
    templates._set_ctx(node, ctx)
    return node


class _RefReplacer(gast.NodeTransformer):
    def __init__(self, repl):
        self.repl = repl
        self.placed = set()

    def _node(self, value, ctx):
        fresh = id(value) not in self.placed
        self.placed.add(id(value))
        return _ref_as_node(value, ctx, fresh)

    def visit_list(self, nodes):
        out = []
        for node in nodes:
            if (isinstance(node, gast.Expr) and isinstance(node.value, gast.Name)
                    and node.value.id in self.repl):
                value = self.repl[node.value.id]
                values = value if isinstance(value, list) else [value]
                out.extend(self._node(v, None) if isinstance(v, gast.stmt)
                           else gast.Expr(value=self._node(v, gast.Load)) for v in values)
                continue
            new = self.visit(node)
            out.extend(new if isinstance(new, list) else [new])
        return out

    def _expand(self, nodes, ctx):
        out = []
        for node in nodes:
            if isinstance(node, gast.Name) and node.id in self.repl:
                value = self.repl[node.id]
                if isinstance(value, list):
                    out.extend(self._node(v, ctx) for v in value)
                    continue
            out.append(self.visit(node))
        return out

    def generic_visit(self, node):
        for field, old in gast.iter_fields(node):
            if isinstance(old, list) and old and isinstance(old[0], gast.stmt):
                setattr(node, field, self.visit_list(old))
            elif isinstance(old, list):
                setattr(node, field, [self.visit(i) if isinstance(i, gast.AST) else i
                                      for i in old])
            elif isinstance(old, gast.AST):
                setattr(node, field, self.visit(old))
        return node

    def visit_Name(self, node):
        if node.id not in self.repl:
            return node
        value = self.repl[node.id]
        if isinstance(value, list):
            raise TypeError(f"template placeholder {node.id!r}: a list cannot go here")
        return self._node(value, type(node.ctx))

    def visit_FunctionDef(self, node):
        if node.name in self.repl:
            node.name = self.repl[node.name]
        return self.generic_visit(node)

    def visit_arguments(self, node):
        node.args = self._expand(node.args, gast.Param)
        return node

    def visit_Call(self, node):
        node.func = self.visit(node.func)
        node.args = self._expand(node.args, gast.Load)
        node.keywords = [self.visit(k) for k in node.keywords]
        return node

    def visit_Tuple(self, node):
        node.elts = self._expand(node.elts, type(node.ctx))
        return node

    visit_List = visit_Tuple


# -- comparing trees exactly ---------------------------------------------------------------


class _Same:
    """Structural equality that also checks object identity: inputs[i] of one run must
    appear exactly where inputs[i] of the other run does, and no two places share a node
    in one tree unless they share it in the other."""

    def __init__(self, inputs_a, inputs_b):
        self.partner = {id(a): b for a, b in zip(inputs_a, inputs_b)}
        self.keep = (inputs_a, inputs_b)  # alive, so no other object takes their ids
        self.seen = {}

    def check(self, a, b, path="result"):
        assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
        if isinstance(a, list):
            assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
            for i, (x, y) in enumerate(zip(a, b)):
                self.check(x, y, f"{path}[{i}]")
        elif isinstance(a, gast.AST):
            if id(a) in self.partner:
                assert self.partner[id(a)] is b, f"{path}: not the same replacement node"
            else:
                assert id(b) not in {id(v) for v in self.partner.values()}, \
                    f"{path}: a replacement node where the reference has a copy"
            if id(a) in self.seen:
                assert self.seen[id(a)] is b, f"{path}: sharing differs"
                return
            self.seen[id(a)] = b
            assert list(vars(a)) == list(vars(b)), f"{path}: {list(vars(a))} != {list(vars(b))}"
            for key in vars(a):
                self.check(getattr(a, key), getattr(b, key), f"{path}.{key}")
        else:
            assert a == b or (_nan(a) and _nan(b)), f"{path}: {a!r} != {b!r}"


def _nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _run(fn, text, repl):
    try:
        return fn(text, **repl), None
    except Exception as e:  # noqa: BLE001  the error is part of the result
        return None, (type(e), str(e))


def _compare(ref_fn, new_fn, text, make_repl):
    repl_a, inputs_a = make_repl()
    repl_b, inputs_b = make_repl()
    out_a, err_a = _run(ref_fn, text, repl_a)
    out_b, err_b = _run(new_fn, text, repl_b)
    assert err_a == err_b
    same = _Same(inputs_a, inputs_b)
    same.check(out_a, out_b)
    same.check(inputs_a, inputs_b, "inputs")  # ctx set on the placed nodes alike


# -- replacement values -------------------------------------------------------------------


def _expr(kind: int):
    return [lambda: templates.parse_expr("a.b"), lambda: templates.parse_expr("(u, v)"),
            lambda: templates.parse_expr("f(x)[0]"), lambda: templates.parse_expr("(*s,)").elts[0],
            lambda: templates.parse_expr("[p, (q, r)]"), lambda: templates.name("w")][kind]()


def _value(rng, inputs):
    """A random replacement: a str, an expression, a statement, or a list of those."""
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice(["y", "z", "_d2s"])
    if kind in (1, 2):
        node = _expr(rng.randrange(6))
    elif kind == 3:
        node = templates.replace("q = 1\nif q:\n    pass")[rng.randrange(2)]
    elif kind == 4 and inputs:
        return inputs[rng.randrange(len(inputs))]  # the same node in two places
    else:
        items = [rng.choice(["m", "n"]) if rng.random() < 0.4 else _expr(rng.randrange(6))
                 for _ in range(rng.randrange(3))]
        inputs.extend(i for i in items if not isinstance(i, str))
        return items
    inputs.append(node)
    return node


def _placeholders(text: str, mode: str) -> tuple[list[str], set[str]]:
    """The names in a template, and those that name a function (their replacement is a
    str: the reference put any other value there and went on replacing inside it)."""
    tree = gast.parse(textwrap.dedent(text).strip() if mode == "eval" else
                      textwrap.dedent(text), mode=mode)
    functions = {n.name for n in gast.walk(tree) if isinstance(n, gast.FunctionDef)}
    names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    return sorted(names | functions), functions


def _repl_maker(keys, seed):
    keys, functions = keys

    def make():
        rng = random.Random(seed)
        inputs: list = []
        repl = {k: rng.choice(["g", "h"]) if k in functions else _value(rng, inputs)
                for k in keys if rng.random() < 0.8}
        return repl, inputs
    return make


STATEMENTS = [
    "def name(params):\n    body",
    "def name(params):\n    return body",
    "return values",
    "target = value",
    "def factory(params):\n    fn\n    return name",
    "if not flag:\n    rest",
    "flag = True\nretval = value",
    "flag = False\nretval = None",
    "if flag:\n    break",
    "_d2s.assert_(test, lambda: msg)",
    "target, result = _d2s.list_pop(target, args)",
    "name = _d2s.Undefined(label)",
    "    x = 1\n    if x:\n        y = [x, *z]\n    else:\n        del y\n",
    "def f(a, b=c, *d, e: T = g, **h) -> R:\n    global q\n    return (a, b)",
    "@deco(d)\ndef f(a):\n    yield a\n    x: int = 1\n    x += f'{a!r:>{w}}'",
    "for i in it:\n    continue\nelse:\n    pass\nwhile x:\n    break",
    "try:\n    s\nexcept E as e:\n    raise X from e\nfinally:\n    s",
    "with cm(a) as (b, c):\n    d[1:2, ::3] = {k: v for k, v in items if k}",
    "class C(B, metaclass=M):\n    x = 1\n    def m(self):\n        return self",
    "f(*a, b, c, **k)\nx = {a, b}\ny = a if b else c\nz = lambda a, *b: (a, b)",
    "x = [1.5, 2j, b'x', ..., -3, 'u', u'v', None, True]\nassert x, msg",
    "import a.b as c\nfrom .m import n as o\nnonlocal_x = (yield)\n(a := b)",
    ("async def f(a):\n    await a\n    async for i in a:\n        async with a as b:\n"
     "            pass"),
    ("match x:\n    case [a, *b] if b:\n        pass\n    case {'k': v, **r}:\n        pass\n"
     "    case C(p, q=r) | None:\n        pass"),
    "x",
    "",
]

EXPRESSIONS = [
    "_d2s.ifelse(test, true_fn, false_fn, args, names)",
    "_d2s.for_loop(iter_, body_fn, args, names, extra)",
    "_d2s.call(f)",
    "lambda: v",
    "(t := v)",
    "not flag and test",
    "_d2s.and_(first, rest)",
    "_d2s.attr(obj, name)",
    "  (a, b, [c, d], {e: f}, g[h], i.j)  ",
    "f(a, *b, c=d, **e)(g)",
    "[x for x in y if z]",
    "lambda a, b=c, *d, **e: a",
]


@pytest.mark.parametrize("text", STATEMENTS)
@pytest.mark.parametrize("seed", range(12))
def test_replace_matches_reference(text, seed):
    keys = _placeholders(text, "exec")
    _compare(ref_replace, templates.replace, text, _repl_maker(keys, seed))


@pytest.mark.parametrize("text", EXPRESSIONS)
@pytest.mark.parametrize("seed", range(12))
def test_replace_as_expression_matches_reference(text, seed):
    keys = _placeholders(text, "eval")
    _compare(ref_replace_as_expression, templates.replace_as_expression, text,
             _repl_maker(keys, seed))


def test_same_template_with_other_keys():
    text = "_d2s.ifelse(test, true_fn, false_fn, args, names)"
    for keys in (["test"], ["args", "names"], [], ["test", "true_fn", "false_fn"]):
        _compare(ref_replace_as_expression, templates.replace_as_expression, text,
                 lambda keys=keys: ({k: "v_" + k for k in keys}, []))


def test_function_name_must_be_a_str():
    with pytest.raises(TypeError, match="function name"):
        templates.replace("def name():\n    pass", name=templates.name("f"))


def test_node_placed_once_then_copied():
    node = templates.parse_expr("a.b")
    out = templates.replace("x = v\ny = v", v=node)
    assert out[0].value is node
    assert out[1].value is not node and gast.dump(out[1].value) == gast.dump(node)


@pytest.mark.parametrize("text", [
    "x", "  _retval ", "self.count", "a.b.c", "None", "True", "'s'", "('a', 'b')", "x + 1",
    "match", "_", "é", "a.é", "a..b", "a.if", "-1", "f(x)", "[a, b]"])
def test_parse_expr_matches_reference(text):
    def run(fn):
        try:
            return fn(text), None
        except SyntaxError as e:
            return None, str(e)
    (a, err_a), (b, err_b) = run(ref_parse_expr), run(templates.parse_expr)
    assert err_a == err_b
    _Same([], []).check(a, b)


@pytest.mark.parametrize("value", [
    None, True, False, 0, 7, 10 ** 30, -1, 1.5, -0.0, float("inf"), 1j, "", "x", "it's",
    'q"', "é\u00e9\n\t\\", "\ud800", (), ("x",), ("a", "b"), ("a", ("b", 1), None),
    ((),), (("x",),), (1, -2), b"raw", ("é", "ü")])
def test_const_matches_reference(value):
    _Same([], []).check(ref_parse_expr(repr(value)), templates.const(value))


def test_name():
    node = templates.name("x")
    assert vars(node).keys() == {"id", "ctx", "annotation", "type_comment"}
    assert isinstance(node.ctx, gast.Load) and node.annotation is None
    store = gast.Store()
    assert templates.name("y", store).ctx is store
