"""Get the source of a function, method or lambda and parse it with gast.

The file is parsed once (cached) and the function is found through its code object (name and
first line), so a `functools.wraps` wrapper gives the wrapper's own source, not the wrapped
function's, and line numbers are the file's own. Of several lambdas on one line, the one whose
compiled code equals the code object is chosen.

>>> def f(x):
...     return x + 1
>>> parse_function(f).node.name
'f'
"""
from __future__ import annotations

import ast
import collections
import textwrap
import types
from typing import NamedTuple

import gast

from . import anno, origin


class ParsedFunction(NamedTuple):
    """A parsed function: its gast node (FunctionDef or Lambda) and where it came from."""

    node: gast.AST
    filename: str
    first_line: int


class SourceError(Exception):
    """The source of a function cannot be found or parsed (built-ins, exec'd code, ...)."""


def parse_function(fn) -> ParsedFunction:
    """Parse `fn` (a Python function or lambda) into a gast node stamped with origin info."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise SourceError(f"{fn!r} is not a Python function")
    filename = code.co_filename
    lines = origin.user_source(filename)
    if not lines:
        raise SourceError(f"no source for {code.co_qualname} (file {filename!r} is not readable;"
                          f" functions defined with exec() or in a REPL cannot be converted)")
    index = _file_tree(filename, lines)
    if code.co_name == "<lambda>":
        found = index.lambdas().get(code.co_firstlineno, [])
        if len(found) > 1:
            found = [n for n in found if _same_code(n, code)]
    else:
        found = index.functions(code.co_firstlineno, code.co_name)
    if not found:
        raise SourceError(f"cannot find the source of {code.co_qualname} at "
                          f"{filename}:{code.co_firstlineno}")
    if isinstance(found[0], ast.AsyncFunctionDef):
        raise SourceError(f"async function {code.co_qualname} cannot be converted")
    locator = origin.locator(filename, 0, code.co_name, lines)
    if index.large and not isinstance(found[0], ast.Lambda):
        node = _to_gast_taking(found[0], locator)
    else:
        node = to_gast(found[0], locator)
    if not isinstance(found[0], ast.Lambda):
        node.decorator_list = []  # decorators have already been applied to the object we got
    del found
    index.forget_tree()  # (a large file's: its functions are parsed one at a time from now)
    _POSITIONS.clear()  # (the tree holds them: kept, they would pin the parser's memory)
    return ParsedFunction(node, filename, code.co_firstlineno)


def _to_gast_taking(fn, origin_of):
    """`to_gast(fn)` for a def of a large file, whose tree is let go afterwards: each
    statement of its body is dropped from the ast tree once converted, so the two trees are
    never whole at once (a 10,000-line function's ast is 27 MB)."""
    body, fn.body = fn.body, []
    try:
        node = to_gast(fn, origin_of)
    finally:
        fn.body = body
    for i, stmt in enumerate(body):
        node.body.append(to_gast(stmt, origin_of))
        body[i] = None
    return node


def to_gast(node, origin_of=None):
    """The gast form of a standard-library ast node, as `gast.ast_to_gast` gives it (with
    positions), at several times its speed: converting is a large part of a first call.
    Each new node's __dict__ is built whole, in the order gast's constructor and setattr
    would fill it (fields, then positions), and set without running gast's Python __init__.

    With `origin_of` (see `origin.locator`), each new node that has a position also gets
    the origin `origin.stamp` would give it afterwards, without another walk: made from its
    position when first read (`anno.LAZY_ORIGIN`)."""
    cls = node.__class__
    given = node.__dict__  # the parser sets every field and position there
    if cls is ast.Name:
        target = gast.Name
        fields = {"id": given["id"], "ctx": _CTX[given["ctx"].__class__],
                  "annotation": None, "type_comment": None}
    elif cls is ast.arg:
        target = gast.Name
        annotation = given["annotation"]
        fields = {"id": given["arg"], "ctx": _new(gast.Param),
                  "annotation": None if annotation is None else to_gast(annotation, origin_of),
                  "type_comment": given["type_comment"]}
    else:
        target = _GAST_CLASSES.get(cls)
        if target is None:
            target = _GAST_CLASSES[cls] = getattr(gast, cls.__name__)
        fields = {}
        for field in node._fields:
            value = given[field]
            if value.__class__ is list:
                items = []
                for v in value:
                    items.append(to_gast(v, origin_of) if isinstance(v, ast.AST) else v)
                value = items
            elif isinstance(value, ast.AST):
                value = to_gast(value, origin_of)
            fields[field] = value
        if cls in _TYPE_PARAMS:
            fields["type_params"] = []
        elif cls is ast.ExceptHandler and node.name:
            fields["name"] = gast.Name(node.name, gast.Store(), None, None)
    for attr in node._attributes:  # (an unset position reads as None: not copied)
        if attr in given:
            value = given[attr]
            # (one int object per line number: the parser makes one per node and position)
            fields[attr] = _POSITIONS.setdefault(value, value)
    if origin_of is not None and fields.get("lineno") is not None:
        fields[anno.LAZY_ORIGIN] = origin_of
    new = _new(target)
    new.__dict__.update(fields)
    return new


_new = ast.AST.__new__  # a node with nothing set (gast's __init__ would only set fields)
# Position -> the one int object for it that the nodes converted by one `parse_function` share
# (a line number past 256 is a new int object per node and position: 4 MB of a 10,000-line
# function's tree)
_POSITIONS: dict = {}
_GAST_CLASSES: dict = {}
_TYPE_PARAMS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# One context node of each kind for every parsed name, as Python's own parser gives them (a
# node each was 38,000 objects of a 10,000-line function's tree): passes replace a name's
# context, never change it
_CTX = {ast.Load: gast.Load(), ast.Store: gast.Store(), ast.Del: gast.Del()}
# The function nodes of the files parsed lately, by (file, content): an editor or notebook
# that changes a file makes a new entry, so only the `_KEEP_FILES` most recent stay (a file of
# a 10,000-line function keeps tens of MB of nodes).
_FILE_TREES: collections.OrderedDict = collections.OrderedDict()
_BY_LINES: dict = {}  # filename -> (the lines list it was built from, index)
_KEEP_FILES = 16
# A file of more characters keeps the places of its functions, not its tree (27 MB for a file
# of one 10,000-line function): a function of it converted again is parsed alone.
_LARGE = 100_000


def _file_tree(filename: str, lines: list[str]):
    """The file's ast, parsed once per file content, with an index of nodes by first line."""
    known = _BY_LINES.get(filename)
    if known is not None and known[0] is lines:  # the same lines as last time (user_source)
        return known[1]
    source = "\n".join(lines) + "\n"
    key = (filename, len(source), hash(source))
    entry = _FILE_TREES.get(key)
    if entry is None:
        try:
            tree = ast.parse(source)
        except SyntaxError as e:
            raise SourceError(f"cannot parse {filename}: {e}") from e
        entry = _FILE_TREES[key] = _FileIndex(tree, lines if len(source) > _LARGE else None)
        while len(_FILE_TREES) > _KEEP_FILES:
            (old_name, _, _), _ = _FILE_TREES.popitem(last=False)
            if all(k[0] != old_name for k in _FILE_TREES):  # (nor its last-lines shortcut)
                _BY_LINES.pop(old_name, None)
    else:
        _FILE_TREES.move_to_end(key)
    _BY_LINES[filename] = (lines, entry)
    return entry


class _FileIndex(dict):
    """A file's function definitions by first line; its lambdas, found on first ask.

    A def is a statement: only statement lists are searched for them, not the expressions
    that make up most of a file's nodes (a lambda can be in any expression). A large file
    (`lines` given) keeps its tree until `forget_tree`, then the place of each def only
    (`_Place`): its source is parsed again alone when it is asked for."""

    def __init__(self, tree: ast.Module, lines: list[str] | None = None):
        super().__init__()
        self._tree = tree
        self._lines = lines
        self._lambdas: dict | None = None
        stack = list(tree.body)
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.setdefault(_first_line(n), []).append(n)
            for field in _BLOCK_FIELDS:
                block = getattr(n, field, None)
                if block:
                    stack.extend(block)

    def functions(self, first_line: int, name: str) -> list:
        """The defs (async ones too) of `name` whose first line is `first_line`."""
        found = []
        for n in self.get(first_line, []):
            if n.__class__ is _Place:
                if n.name != name:
                    continue
                n = n.parse(self._lines)
            if n.name == name and _first_line(n) == first_line:
                found.append(n)
        return found

    @property
    def large(self) -> bool:
        """Whether the file keeps the places of its defs only, once a def is parsed."""
        return self._lines is not None

    def forget_tree(self) -> None:
        """A large file's tree is let go: its defs are kept as places."""
        if self._lines is None or self._tree is None:
            return
        self._tree = None
        for first_line, nodes in self.items():
            self[first_line] = [n if n.__class__ is _Place else _Place(
                n.name, first_line, n.end_lineno, n.col_offset) for n in nodes]

    def lambdas(self) -> dict:
        if self._lambdas is None:
            tree = self._tree
            if tree is None:  # (a large file whose tree was let go)
                tree = ast.parse("\n".join(self._lines) + "\n")
            self._lambdas = {}
            for n in ast.walk(tree):
                if isinstance(n, ast.Lambda):
                    self._lambdas.setdefault(n.lineno, []).append(n)
        return self._lambdas


class _Place(NamedTuple):
    """Where a def is in its file's lines (its decorators included)."""

    name: str
    first_line: int
    last_line: int
    col_offset: int

    def parse(self, lines: list[str]):
        """The def's ast, parsed from its own lines at their place in the file: the lines
        before it blank and, where it is indented, an `if 1:` on the line before it."""
        if self.col_offset:
            head = "\n" * (self.first_line - 2) + "if 1:\n"
        else:
            head = "\n" * (self.first_line - 1)
        tree = ast.parse(head + "\n".join(lines[self.first_line - 1:self.last_line]) + "\n")
        return tree.body[0].body[0] if self.col_offset else tree.body[0]


# the fields of statements that hold statement lists (an `except`'s and a `case`'s
# statements are in the `body` of the handler or case node in `handlers` or `cases`)
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", None)
    return decorators[0].lineno if decorators else node.lineno


def _same_code(node: ast.Lambda, code: types.CodeType) -> bool:
    compiled = compile(ast.Expression(body=node), "<lambda>", "eval")
    for const in compiled.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == "<lambda>":
            return (const.co_code == code.co_code and const.co_names == code.co_names
                    and const.co_varnames == code.co_varnames
                    and const.co_consts == code.co_consts)
    return False


def parse_text(source: str) -> list:
    """Parse a snippet of statements (dedented) into a list of gast statements."""
    return gast.parse(textwrap.dedent(source)).body


def unparse(node) -> str:
    """Print gast nodes as Python source with the standard library's `ast.unparse`."""
    if isinstance(node, list):
        return "\n".join(unparse(n) for n in node)
    tree = gast.gast_to_ast(node)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)
