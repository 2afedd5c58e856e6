"""Load generated code as a real function, from a real file.

The converted function is written to a file in a private temporary directory (removed at
exit) so that tracebacks, `inspect.getsource`, `linecache` and `pdb` all show the generated
code. Each line of the file that starts a statement ends with a comment naming the user's
`file:line` it came from; `lookup(filename, lineno)` gives the full `OriginInfo`.

The function is defined inside a factory whose parameters are the original function's free
variables, so the generated code object has the same free variables; it is then instantiated
with the original closure cells and globals (`types.FunctionType`), so closures and globals
behave exactly as in the user's function (writes to `nonlocal`/`global` names included).
"""
from __future__ import annotations

import ast
import atexit
import hashlib
import os
import shutil
import tempfile
import types

import gast

from . import anno, origin, templates

_DIR: str | None = None
_LINE_MAPS: dict[str, origin.LineMap] = {}
FACTORY = "_d2s_factory"


def _directory() -> str:
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="d2s_")
        atexit.register(shutil.rmtree, _DIR, True)
    return _DIR


def is_generated(filename: str) -> bool:
    """Whether `filename` is a file this loader wrote."""
    return filename in _LINE_MAPS


def lookup(filename: str, lineno: int) -> origin.OriginInfo | None:
    """The user origin of line `lineno` of a generated file (None if unknown)."""
    line_map = _LINE_MAPS.get(filename)
    return None if line_map is None else line_map.get(lineno)


class Loaded:
    """The result of `load`: the code object of the converted function and its source."""

    def __init__(self, code: types.CodeType, source: str, filename: str):
        self.code = code
        self.source = source
        self.filename = filename


def load(fn_node: gast.FunctionDef, freevars: list[str]) -> Loaded:
    """Compile `fn_node` inside a factory taking `freevars`; return its code object."""
    factory = templates.replace("def factory(params):\n    fn\n    return name",
                                factory=FACTORY, params=list(freevars), fn=fn_node,
                                name=fn_node.name)[0]
    tree = gast.gast_to_ast(gast.Module(body=[factory], type_ignores=[]))
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree)
    reparsed = ast.parse(text)
    line_map = _line_map(factory, reparsed.body[0])
    digest = hashlib.sha1(text.encode()).hexdigest()[:10]
    filename = os.path.join(_directory(), f"{fn_node.name}_{digest}.py")
    annotated = _annotate(text, line_map, reparsed)
    with open(filename, "w") as f:
        f.write(annotated)
    _LINE_MAPS[filename] = origin.LineMap(filename, line_map)
    module_code = compile(reparsed, filename, "exec")  # same lines as the file, parsed once
    factory_code = _const_code(module_code, FACTORY)
    return Loaded(_const_code(factory_code, fn_node.name), text, filename)


def instantiate(loaded: Loaded, original, cells: dict):
    """A function from `loaded.code` with `original`'s globals, defaults and closure cells
    (`cells` maps the extra free variables, e.g. the operators module, to cells)."""
    code = loaded.code
    orig_cells = {}
    if getattr(original, "__closure__", None):
        orig_cells = dict(zip(original.__code__.co_freevars, original.__closure__))
    closure = tuple(cells[n] if n in cells else orig_cells[n] for n in code.co_freevars)
    fn = types.FunctionType(code, original.__globals__, original.__name__,
                            original.__defaults__, closure or None)
    fn.__kwdefaults__ = original.__kwdefaults__
    fn.__qualname__ = original.__qualname__
    fn.__module__ = original.__module__
    fn.__doc__ = original.__doc__
    return fn


def _const_code(code: types.CodeType, name: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise RuntimeError(f"d2s bug: compiled code has no function {name!r}")


_STMT_LISTS = ("body", "handlers", "orelse", "finalbody", "cases")


def _statements(node):
    """Statements in pre-order (the same order for a gast tree and its re-parsed ast)."""
    for field in _STMT_LISTS:
        for child in getattr(node, field, None) or []:
            if isinstance(child, (ast.stmt, gast.stmt)):
                yield child
            yield from _statements(child)


def _line_map(gast_root, ast_root) -> dict:
    mapping: dict[int, origin.OriginInfo] = {}
    for g, a in zip(_statements(gast_root), _statements(ast_root)):
        src = anno.getanno(g, anno.ORIGIN, None)
        if src is not None:
            for line in range(a.lineno, (a.end_lineno or a.lineno) + 1):
                mapping[line] = src
    return mapping


def _annotate(text: str, line_map: dict, tree) -> str:
    """Append '# user.py:12' to each one-line statement of the generated code."""
    lines = text.split("\n")
    for node in _statements(tree):
        src = line_map.get(node.lineno)
        if src is not None and node.end_lineno == node.lineno and "#" not in lines[
                node.lineno - 1]:
            lines[node.lineno - 1] += f"  # {src.short()}"
    return "\n".join(lines) + "\n"
