"""Generate code from Python text with placeholders instead of building nodes by hand.

A placeholder is any identifier in the template. Its replacement may be:

- a `str`: a name (`x` -> `y`), also for function names and parameters;
- a gast node: copied in place of the placeholder, its `ctx` set to where it lands;
- a list of names/nodes: spliced where a list goes (statements, parameters, call arguments,
  tuple elements).

>>> from d2s.pyct.parser import unparse
>>> body = parse_expr('a + 1')
>>> print(unparse(replace('def name(params):\\n    return body', name='f',
...                       params=['a'], body=body)))
def f(a):
    return a + 1
"""
from __future__ import annotations

import copy
import textwrap

import gast

_PARSED: dict = {}


def _parse(text: str, mode: str):
    """Parse once per text (parsing dominates conversion time); callers get a copy."""
    key = (text, mode)
    tree = _PARSED.get(key)
    if tree is None:
        tree = _PARSED[key] = gast.parse(text, mode=mode)
    return _copy(tree)


def _copy(node):
    """A copy of a template tree (plain nodes without annotations; faster than deepcopy)."""
    if isinstance(node, list):
        return [_copy(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = node.__class__.__new__(node.__class__)
    for field in node._fields:
        setattr(new, field, _copy(getattr(node, field, None)))
    for attr in node._attributes:
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    return new


def parse_expr(text: str):
    """A gast expression from Python text."""
    return _parse(text.strip(), "eval").body


def const(value):
    """A gast node for a Python literal (numbers, strings, None, tuples of those)."""
    return parse_expr(repr(value))


def name(id_: str, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def replace(template: str, **replacements) -> list:
    """The statements of `template` with placeholders replaced."""
    tree = _parse(textwrap.dedent(template), "exec")
    return _Replacer(replacements).visit_list(tree.body)


def replace_as_expression(template: str, **replacements):
    """Like `replace` for a single expression."""
    tree = _parse(textwrap.dedent(template).strip(), "eval")
    return _Replacer(replacements).visit(tree).body


def _as_node(value, ctx, fresh: bool = True):
    """The node for a replacement; copied unless this is its first use (`fresh`): a node is
    placed as is once, so converting a function does not copy its statements again and
    again."""
    if isinstance(value, str):
        return name(value, ctx())
    node = value if fresh else copy.deepcopy(value)
    _set_ctx(node, ctx)
    return node


def _set_ctx(node, ctx) -> None:
    if ctx is None:
        return
    if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript, gast.Starred)):
        node.ctx = ctx()
    if isinstance(node, (gast.Tuple, gast.List)):
        node.ctx = ctx()
        for elt in node.elts:
            _set_ctx(elt, ctx)
    elif isinstance(node, gast.Starred):
        _set_ctx(node.value, ctx)


class _Replacer(gast.NodeTransformer):
    def __init__(self, replacements: dict):
        self.repl = replacements
        self.placed: set[int] = set()

    def _node(self, value, ctx):
        fresh = id(value) not in self.placed
        self.placed.add(id(value))
        return _as_node(value, ctx, fresh)

    def visit_list(self, nodes: list) -> list:
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

    def _expand(self, nodes: list, ctx) -> list:
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
                new = []
                for item in old:
                    if isinstance(item, gast.AST):
                        item = self.visit(item)
                    new.append(item)
                setattr(node, field, new)
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
