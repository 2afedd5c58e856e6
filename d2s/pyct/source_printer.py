"""Printing a converted tree as Python source, with each statement's lines in the text.

`Printer` is the standard library's `ast.unparse` (`ast._Unparser`) printing gast nodes as
they are: converting the whole tree to `ast` first would cost a walk over every node and a
second tree as large. The base class's methods read a node's fields by name, so a gast node
prints as its `ast` twin would, except where a method asks `isinstance` of an `ast` class
(the same few places in Python 3.10-3.13): those nodes are converted to `ast` as they are
printed (`_AS_AST`: small expressions, and clauses whose statements stay as they are), and
the docstring and `elif` checks accept both kinds of node.

>>> import gast
>>> tree = gast.parse("def f(x: int = 1):\\n    y = x\\n    if x:\\n        return x[1, 2]")
>>> p = Printer()
>>> print(p.visit(tree))
def f(x: int=1):
    y = x
    if x:
        return x[1, 2]
>>> p.spans[id(tree.body[0].body[1])]  # the `if` statement: lines 3 to 4
(3, 4)
"""
from __future__ import annotations

import ast
import contextlib

import gast

from . import anno


def to_ast(node):
    """The standard-library ast of a gast tree, for printing only (no positions), as
    `gast.gast_to_ast` would give it (at several times its speed)."""
    cls = node.__class__
    if cls is gast.Name:
        return ast.Name(node.id, to_ast(node.ctx))
    if cls is gast.arguments:
        return ast.arguments(
            [_arg(a) for a in node.posonlyargs], [_arg(a) for a in node.args],
            _arg(node.vararg), [_arg(a) for a in node.kwonlyargs],
            [None if d is None else to_ast(d) for d in node.kw_defaults], _arg(node.kwarg),
            [to_ast(d) for d in node.defaults])
    target = _AST_CLASSES.get(cls)
    if target is None:
        target = _AST_CLASSES[cls] = getattr(ast, cls.__name__)
    new = target()
    for field in node._fields:
        value = getattr(node, field, _MISSING)
        if value.__class__ is list:
            value = [to_ast(v) if isinstance(v, gast.AST) else v for v in value]
        elif isinstance(value, gast.AST):
            value = to_ast(value)
        elif value is _MISSING:
            continue
        setattr(new, field, value)
    if cls is gast.ExceptHandler and node.name is not None:
        new.name = node.name.id
    return new


def _arg(name):
    return None if name is None else ast.arg(
        name.id, None if name.annotation is None else to_ast(name.annotation))


_AST_CLASSES: dict = {}
_MISSING = object()


class Printer(ast._Unparser):
    """`ast.unparse` that also records each statement's first and last line in its output
    (`spans`: id(stmt) -> (first, last), as `ast.parse` of the text would number them), so
    the text need not be parsed again to map its lines back to the user's."""

    def __init__(self, **kwargs):  # f-strings print their parts with a fresh printer
        super().__init__(**kwargs)
        self.spans: dict[int, tuple[int, int]] = {}
        self._waiting: list = []  # statements whose first line is their next header
        self._marks: list = []  # (id, index in _source of the first line, of the end)
        self.deepest = 0  # the most levels of indentation printed

    def visit(self, node) -> str:
        text = super().visit(node)
        # newlines in _source before each index a mark holds (counted a slice at a time:
        # there are ten times as many parts as marks)
        source = self._source
        starts, count, last = {}, 0, 0
        for index in sorted({i for _, first, end in self._marks for i in (first, end)}):
            count += "".join(source[last:index]).count("\n")
            starts[index], last = count, index
        self.spans = {key: (starts[first] + 1, starts[end] + 1) for key, first, end in
                      self._marks}
        return text

    def get_type_comment(self, node):  # the module has no type-ignore lines to look up
        comment = getattr(node, "type_comment", None)
        return None if comment is None else f" # type: {comment}"

    # The base class writes blocks, brackets and parentheses with generator context managers
    # (`@contextmanager`), a good part of printing time: these give the same text with small
    # objects. A printing error ends the whole print, so skipping the closing text on an
    # exception (as the generators do) or not makes no difference.
    def block(self, *, extra=None):
        self.write(":")
        if extra:
            self.write(extra)
        self._indent += 1
        self.deepest = max(self.deepest, self._indent)
        return _Dedent(self)

    def delimit(self, start, end):
        self.write(start)
        return _Close(self, end)

    def delimit_if(self, start, end, condition):
        if condition:
            self.write(start)
            return _Close(self, end)
        return _NOTHING

    def require_parens(self, precedence, node):
        return self.delimit_if("(", ")", self.get_precedence(node) > precedence)

    def fill(self, text=""):
        self.maybe_newline()
        if self._waiting and text != "@":  # a def's line is `def`, not its decorators'
            first = len(self._source)
            for mark in self._waiting:
                mark[1] = first
            self._waiting.clear()
        self.write("    " * self._indent + text)

    def traverse(self, node):
        # As the base class's (a list: each item; a node: its visit_ method), marking the
        # output span of each statement.
        if node.__class__ is list:
            for item in node:
                self.traverse(item)
        elif isinstance(node, _STATEMENTS):
            mark = [id(node), None, None]
            self._waiting.append(mark)
            store = getattr(node, anno.KEY, None)
            text = None if store is None else store.get(anno.SOURCE_TEXT)
            if text is None:
                self._print(node)
            else:  # the user's own line, as a plain statement that no pass changed has it
                self.fill(text)
            mark[2] = len(self._source)
            if mark[1] is not None:
                self._marks.append(mark)
        else:
            self._print(node)

    def _print(self, node) -> None:
        as_ast = _AS_AST.get(node.__class__)
        if as_ast is not None:
            new = as_ast(node)
            if new is not node and node in self._precedences:  # (set by the parent)
                self._precedences[new] = self._precedences[node]
            node = new
        getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)(node)

    def get_raw_docstring(self, node):
        # As the base class's, for gast nodes too.
        if not isinstance(node, _DOCSTRING_OWNERS) or not node.body:
            return None
        first = node.body[0]
        if not isinstance(first, (ast.Expr, gast.Expr)):
            return None
        value = first.value
        if isinstance(value, (ast.Constant, gast.Constant)) and isinstance(value.value, str):
            return value
        return None

    def _mark(self, node, emit) -> None:
        mark = [id(node), None, None]
        self._waiting.append(mark)
        emit()
        mark[2] = len(self._source)
        if mark[1] is not None:
            self._marks.append(mark)

    def _write_docstring_and_traverse_body(self, node):
        if self.get_raw_docstring(node):
            self._mark(node.body[0], lambda: self._write_docstring(self.get_raw_docstring(node)))
            self.traverse(node.body[1:])
        else:
            self.traverse(node.body)

    def visit_If(self, node):
        # As ast._Unparser.visit_If, which prints an `else: if` as `elif` without traversing
        # the inner `if`: that statement starts at its `elif` and ends with the chain.
        self.fill("if ")
        self.traverse(node.test)
        with self.block():
            self.traverse(node.body)
        chain = []
        while node.orelse and len(node.orelse) == 1 and isinstance(node.orelse[0], _IFS):
            node = node.orelse[0]
            mark = [id(node), None, None]
            self._waiting.append(mark)
            chain.append(mark)
            self.fill("elif ")
            self.traverse(node.test)
            with self.block():
                self.traverse(node.body)
        if node.orelse:
            self.fill("else")
            with self.block():
                self.traverse(node.orelse)
        for mark in chain:
            mark[2] = len(self._source)
            self._marks.append(mark)


class _Dedent:
    __slots__ = ("printer",)

    def __init__(self, printer):
        self.printer = printer

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self.printer._indent -= 1


class _Close:
    __slots__ = ("end", "printer")

    def __init__(self, printer, end):
        self.printer = printer
        self.end = end

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self.printer._source.append(self.end)


_NOTHING = contextlib.nullcontext()  # reusable: it keeps no state
_STATEMENTS = (ast.stmt, gast.stmt)
_IFS = (ast.If, gast.If)
_DOCSTRING_OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module,
                     gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Module)


def _handler_as_ast(node):
    """An `except` clause whose name is a string (gast's is a Name), its type and statements
    left as they are (printed as gast nodes, each with its span)."""
    return ast.ExceptHandler(node.type, None if node.name is None else node.name.id, node.body)


# gast node class -> the node to print in its place, where a method of `ast._Unparser` asks
# `isinstance` of the node or its parts (an `ast` class), or reads a field gast names or
# types differently (parameters are `arg` nodes, an `except` name a string). What is
# converted here holds no statement (printed with its span) but the handler's, kept as is.
_AS_AST = {
    gast.arguments: to_ast,  # (`vararg.arg`, `kwarg.arg`)
    gast.JoinedStr: to_ast,  # (its parts: Constant, FormattedValue, JoinedStr)
    gast.AnnAssign: to_ast,  # (a Name target: parenthesised unless simple)
    gast.ExceptHandler: _handler_as_ast,
    # (a number before `.attr` is followed by a space; a tuple index prints without
    # parentheses)
    gast.Attribute: lambda n: to_ast(n) if n.value.__class__ is gast.Constant else n,
    gast.Subscript: lambda n: to_ast(n) if n.slice.__class__ is gast.Tuple else n,
}
