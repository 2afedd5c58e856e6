"""d2s.pyct: parsing, name analysis, templates, naming and the file-backed loader."""
import functools
import inspect
import linecache
import os

import gast
import pytest

from d2s.pyct import analysis, anno, loader, parser, templates
from d2s.pyct.naming import Namer


def _deco(f):
    @functools.wraps(f)
    def wrapper(*a):
        return f(*a) + 1
    return wrapper


@_deco
def decorated(x):
    return x * 2


two = (lambda x: x + 1), (lambda x: x * 3)


class Holder:
    def method(self, x):
        return x - self.k


def test_parse_function_drops_decorators_and_stamps_origin():
    node = parser.parse_function(decorated.__wrapped__).node
    assert node.name == "decorated" and node.decorator_list == []
    ret = node.body[0]
    src = anno.getanno(ret, anno.ORIGIN)
    assert src.filename == __file__ and src.source_line == "return x * 2"
    assert src.lineno == inspect.getsourcelines(decorated.__wrapped__)[1] + 2


def test_wraps_wrapper_gives_the_wrapper_source():
    assert parser.unparse(parser.parse_function(decorated).node).startswith("def wrapper(*a)")


def test_two_lambdas_on_one_line_are_told_apart():
    assert parser.unparse(parser.parse_function(two[0]).node) == "lambda x: x + 1"
    assert parser.unparse(parser.parse_function(two[1]).node) == "lambda x: x * 3"


def test_method_and_missing_source():
    assert parser.parse_function(Holder.method).node.name == "method"
    ns = {}
    exec("def f(x):\n    return x", ns)  # noqa: S102  (a function without a source file)
    with pytest.raises(parser.SourceError, match="exec"):
        parser.parse_function(ns["f"])


def _fn(src):
    return gast.parse(src).body[0]


def test_liveness_and_definedness():
    fn = _fn("def f(x, n):\n"
             "    if x > 0:\n        y = 1\n        t = 2\n    else:\n        y = 2\n"
             "    i = 0\n"
             "    while i < n:\n        y = y + i\n        i += 1\n"
             "    return y\n")
    analysis.analyze(fn)
    if_, assign, while_, _ = fn.body
    assert anno.getanno(if_, anno.LIVE_OUT) == {"y", "n"}  # t is dead after the if
    assert anno.getanno(if_, anno.DEFINED_IN) == {"x", "n"}
    assert anno.getanno(while_, anno.LOOP_LIVE) >= {"i", "y", "n"}
    assert "t" in anno.getanno(assign, anno.DEFINED_IN)


def test_written_read_and_local_names():
    fn = _fn("def f(a, d):\n    global g\n    d[0] = 1\n    self.k = 2\n    (b := a)\n"
             "    for i, j in a:\n        pass\n    g = 3\n")
    assert analysis.written(fn.body) >= {"d", "self.k", "b", "i", "j", "g"}
    assert analysis.local_names(fn) == {"a", "d", "b", "i", "j"}  # g is global, d mutated
    assert analysis.read(fn.body) >= {"a"}
    assert analysis.surely_bound(_fn("def f():\n    if c:\n        x = 1\n        y = 1\n"
                                     "    else:\n        x = 2\n").body) == {"x"}


def test_templates_replace_names_lists_and_nodes():
    out = templates.replace("def name(params):\n    body\n    return value", name="g",
                            params=["a", "b"], body=templates.replace("c = a + b"),
                            value=templates.parse_expr("c * 2"))
    assert parser.unparse(out) == "def g(a, b):\n    c = a + b\n    return c * 2"
    call = templates.replace_as_expression("f(args)", args=["x", templates.const(3)])
    assert parser.unparse(call) == "f(x, 3)"


def test_namer_never_reuses_user_names():
    namer = Namer.for_tree(_fn("def f(_if_true_1):\n    _if_true_2 = 1\n"))
    assert namer.new("if_true") == "_if_true_3"
    assert namer.new_plain("retval") == "_retval"
    assert namer.new_plain("retval") == "_retval_1"


def test_loader_writes_a_real_file_with_a_line_map():
    def user(x, k=2):
        y = x + k
        return y
    node = parser.parse_function(user).node
    loaded = loader.load(node, [])
    fn = loader.instantiate(loaded, user, {})
    assert fn(1) == 3 and fn(1, k=5) == 6
    assert os.path.exists(loaded.filename)
    assert "y = x + k" in inspect.getsource(fn)
    line = fn.__code__.co_firstlineno + 1
    assert "y = x + k" in linecache.getline(loaded.filename, line)
    src = loader.lookup(loaded.filename, line)
    assert src.filename == __file__ and src.source_line == "y = x + k"
    assert loader.is_generated(loaded.filename)
