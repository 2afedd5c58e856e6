"""Generate code from Python text with placeholders instead of building nodes by hand.

A placeholder is any identifier in the template. Its replacement may be:

- a `str`: a name (`x` -> `y`), also for function names and parameters;
- a gast node: copied in place of the placeholder, its `ctx` set to where it lands (placed as
  is on its first use in one call, deep-copied on later uses);
- a list of names/nodes: spliced where a list goes (statements, parameters, call arguments,
  tuple elements). A placeholder standing alone as a statement takes statements, or
  expressions (each becomes an expression statement).

>>> from d2s.pyct.parser import unparse
>>> body = parse_expr('a + 1')
>>> print(unparse(replace('def name(params):\\n    return body', name='f',
...                       params=['a'], body=body)))
def f(a):
    return a + 1

How it works: each template text is parsed once and compiled into a *builder*, a Python
function `build(r, p)` generated from the parsed tree (see `_Emitter`). The builder creates
the result's nodes directly, one statement per node, positions included as parsing gave them.
Where the template has a name, it tests `'name' in r` (the call's replacements) and either
asks a helper for the replacement (`_put`, `_items`, `_stmts`; `p` is the set of nodes
already placed in this call) or builds the plain name. So one use costs one call that builds
exactly the nodes of the result: no copy of the parsed tree and no second walk over it.
"""
from __future__ import annotations

import ast
import copy
import keyword
import textwrap

import gast

_new = ast.AST.__new__  # a node with no fields set (fields are filled in through __dict__)


def parse_expr(text: str):
    """A gast expression from Python text."""
    text = text.strip()
    node = _dotted_name(text)
    if node is None:
        node = _builder(text, "expr")(_NOTHING, None)
    return node


def const(value):
    """A gast node for a Python literal (numbers, strings, None, tuples of those)."""
    literal = _literal(value, 0)
    return literal[0] if literal is not None else parse_expr(repr(value))


def name(id_: str, ctx=None):
    node = _new(gast.Name)
    node.__dict__ = {"id": id_, "ctx": ctx or _new(gast.Load), "annotation": None,
                     "type_comment": None}
    return node


def replace(template: str, **replacements) -> list:
    """The statements of `template` with placeholders replaced."""
    return _builder(template, "exec")(replacements, set())


def replace_as_expression(template: str, **replacements):
    """Like `replace` for a single expression."""
    return _builder(template, "eval")(replacements, set())


# -- what the builders call for a placeholder that has a replacement ----------------------

def _put(repl: dict, placed: set, key: str, ctx):
    """The node for placeholder `key` where one expression goes."""
    value = repl[key]
    if isinstance(value, list):
        raise TypeError(f"template placeholder {key!r}: a list cannot go here")
    return _place(value, ctx, placed)


def _items(repl: dict, placed: set, key: str, ctx) -> list:
    """The nodes for placeholder `key` in a list of parameters, call arguments or elements:
    a list is spliced."""
    value = repl[key]
    if isinstance(value, list):
        return [_place(v, ctx, placed) for v in value]
    return [_place(value, ctx, placed)]


def _stmts(repl: dict, placed: set, key: str) -> list:
    """The statements for placeholder `key` standing alone as a statement."""
    value = repl[key]
    return [_place(v, None, placed) if isinstance(v, gast.stmt)
            else gast.Expr(value=_place(v, gast.Load, placed))
            for v in (value if isinstance(value, list) else [value])]


def _function_name(repl: dict, key: str) -> str:
    """The name of a function whose template name is `key`."""
    value = repl.get(key, key)
    if value.__class__ is not str:
        raise TypeError(f"template placeholder {key!r}: a function name must be a str")
    return value


def _place(value, ctx, placed: set):
    """The node for one replacement value; copied unless this is its first use in the call:
    a node is placed as is once, so converting a function does not copy its statements again
    and again."""
    if value.__class__ is str:
        return name(value, _new(ctx))
    fresh = id(value) not in placed
    placed.add(id(value))
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


# -- fast paths: nodes parsing would give, built directly ---------------------------------

_NOTHING: dict = {}


def _dotted_name(text: str):
    """`x` or `a.b.c` as parsing gives it, or None for other text."""
    if not text.isascii():  # non-ASCII names are normalized by the parser
        return None
    parts = text.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return None
    node = _new(gast.Name)
    node.__dict__ = {"id": parts[0], "ctx": _new(gast.Load), "annotation": None,
                     "type_comment": None, **_position(0, len(parts[0]))}
    end = len(parts[0])
    for attr in parts[1:]:
        end += 1 + len(attr)
        value, node = node, _new(gast.Attribute)
        node.__dict__ = {"value": value, "attr": attr, "ctx": _new(gast.Load),
                         **_position(0, end)}
    return node


def _literal(value, col: int):
    """(node, end column) for `value` as parsing `repr(value)` at column `col` gives it, for
    None, bools, strings, non-negative ints and tuples of those; None for other values."""
    cls = value.__class__
    if value is None or cls is bool or cls is str or (cls is int and value >= 0):
        end = col + len(repr(value).encode())
        node = _new(gast.Constant)
        node.__dict__ = {"value": value, "kind": None, **_position(col, end)}
        return node, end
    if cls is not tuple:
        return None
    elts, last = [], col + 1  # `last`: where the last element ends; the first starts after "("
    for item in value:
        literal = _literal(item, last + 2 if elts else last)  # after ", "
        if literal is None:
            return None
        elts.append(literal[0])
        last = literal[1]
    end = last + (2 if len(elts) == 1 else 1)  # "(x,)", "(x, y)", "()"
    node = _new(gast.Tuple)
    node.__dict__ = {"elts": elts, "ctx": _new(gast.Load), **_position(col, end)}
    return node, end


def _position(col: int, end: int) -> dict:
    return {"lineno": 1, "col_offset": col, "end_lineno": 1, "end_col_offset": end}


# -- builders ---------------------------------------------------------------------------

_BUILDERS: dict = {}  # (template text, kind) -> build(r, p)


def _builder(text: str, kind: str):
    """The builder for `text`: kind "exec" (statements, dedented), "eval" (an expression,
    dedented and stripped) or "expr" (an expression, already stripped)."""
    build = _BUILDERS.get((text, kind))
    if build is None:
        source = text if kind == "expr" else textwrap.dedent(text)
        if kind == "exec":
            tree = gast.parse(source, mode="exec")
            build = _Emitter().compile(tree.body, statements=True)
        else:
            tree = gast.parse(source.strip(), mode="eval")
            build = _Emitter().compile(tree.body, statements=False)
        _BUILDERS[(text, kind)] = build
    return build


class _Emitter:
    """Writes the source of a builder for a parsed template.

    Each template node becomes `nK = _new(Class); nK.__dict__ = {**sK, field: code, ...}`,
    emitted after its children, in the order of the node's fields, so placeholders are met
    (and their first use decided) in the order of the template text. `sK`, made once, holds
    what is the same in every build: constant fields and positions, in the parsed node's
    order (the other fields keep their place in it). Nodes with nothing in their __dict__
    (contexts, operators) are created inline. Which fields may hold placeholders, and how
    they are replaced, follows the module docstring: any name in an expression; the
    parameters of a function (not their defaults or annotations); lists spliced into
    parameters, call arguments, tuple/list elements and statement lists; function names.
    """

    def __init__(self):
        self.lines: list[str] = []
        self.indent = 1
        self.names = {"_new": _new, "_put": _put, "_items": _items, "_stmts": _stmts,
                      "_function_name": _function_name}
        self.count = 0

    def compile(self, tree, statements: bool):
        result = self.statements(tree) if statements else self.visit(tree)
        source = "\n".join(["def build(r, p):", *self.lines, f"    return {result}"])
        # The source is generated here from a parsed template, never taken from input.
        exec(compile(source, "<template builder>", "exec"), self.names)  # noqa: S102
        return self.names["build"]

    # The result of a node, as the template's replacement semantics give it.

    def visit(self, node) -> str:
        if node.__class__ is gast.Name:
            return self.placeholder(node)
        return self.make(node, {f: self.field(node, f, getattr(node, f, None))
                                for f in node._fields})

    def field(self, node, field: str, value):
        cls = node.__class__
        if cls is gast.FunctionDef and field == "name":
            return f"_function_name(r, {value!r})"
        if cls is gast.arguments:
            return self.spliced(value) if field == "args" else self.copy(value)
        if (cls is gast.Call and field == "args"
                or cls in (gast.Tuple, gast.List) and field == "elts"):
            return self.spliced(value)
        if isinstance(value, list) and value and isinstance(value[0], gast.stmt):
            return self.statements(value)
        if isinstance(value, list):
            return "[" + ", ".join(self.visit(v) if isinstance(v, gast.AST)
                                   else self.literal(v) for v in value) + "]"
        return self.visit(value) if isinstance(value, gast.AST) else _Const(value)

    def placeholder(self, node, spliced=False) -> str:
        """A name: its replacement if the call has one, else the name (a list to splice if
        `spliced`). The replacement gets the name's ctx (Param for a parameter)."""
        key, ctx, var = node.id, self.cls(node.ctx.__class__), self.var()
        helper = "_items" if spliced else "_put"
        self.emit(f"if {key!r} in r: {var} = {helper}(r, p, {key!r}, {ctx})")
        self.emit_else(var, node, as_list=spliced)
        return var

    def spliced(self, nodes: list) -> str:
        """A list of parameters, call arguments or elements: names may take lists."""
        return "[" + ", ".join("*" + self.placeholder(n, spliced=True)
                               if n.__class__ is gast.Name else self.visit(n)
                               for n in nodes) + "]"

    def statements(self, nodes: list) -> str:
        """A statement list: a name standing alone as a statement takes statements."""
        parts = []
        for node in nodes:
            if node.__class__ is gast.Expr and node.value.__class__ is gast.Name:
                key, var = node.value.id, self.var()
                self.emit(f"if {key!r} in r: {var} = _stmts(r, p, {key!r})")
                self.emit_else(var, node, as_list=True)
                parts.append("*" + var)
            else:
                parts.append(self.visit(node))
        return "[" + ", ".join(parts) + "]"

    def emit_else(self, var: str, node, as_list: bool) -> None:
        self.emit("else:")
        self.indent += 1
        if as_list:
            self.emit(f"{var} = [{self.copy(node)}]")
        else:
            self.copy(node, var)
        self.indent -= 1

    # A node as the template has it, no placeholders replaced.

    def copy(self, value, var=None):
        if isinstance(value, list):
            return "[" + ", ".join(self.code(self.copy(v)) for v in value) + "]"
        if not isinstance(value, gast.AST):
            return _Const(value)
        return self.make(value, {f: self.copy(getattr(value, f, None)) for f in value._fields},
                         var)

    # Writing the code.

    def make(self, node, fields: dict, var=None) -> str:
        """Code creating `node`'s class with these fields (code or _Const) and `node`'s
        positions; into `var` if given."""
        static, dynamic = {}, []
        for field, value in fields.items():
            static[field] = value.value if isinstance(value, _Const) else None
            if not isinstance(value, _Const):
                dynamic.append(f"{field!r}: {value}")
        for attr in node._attributes:
            if hasattr(node, attr):
                static[attr] = getattr(node, attr)
        cls = self.cls(node.__class__)
        if not static:
            return self.assign(var, f"_new({cls})") if var else f"_new({cls})"
        var = var or self.var()
        content = ", ".join([f"**{self.bind(static)}", *dynamic])
        self.emit(f"{var} = _new({cls}); {var}.__dict__ = {{{content}}}")
        return var

    def code(self, value) -> str:
        return self.literal(value.value) if isinstance(value, _Const) else value

    def literal(self, value) -> str:
        if value is None or value.__class__ in (bool, int, str):
            return repr(value)
        return self.bind(value)  # other values (bytes, floats...) are passed in

    def bind(self, value) -> str:
        key = f"k{len(self.names)}"
        self.names[key] = value
        return key

    def cls(self, cls) -> str:
        self.names["C_" + cls.__name__] = cls
        return "C_" + cls.__name__

    def assign(self, var: str, code: str) -> str:
        self.emit(f"{var} = {code}")
        return var

    def var(self) -> str:
        self.count += 1
        return f"n{self.count}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)


class _Const:
    """A field value that is the same in every build."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value
