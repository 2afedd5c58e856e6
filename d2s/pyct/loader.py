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
import contextlib
import hashlib
import linecache
import os
import shutil
import sys
import tempfile
import types
import weakref

import gast

from . import anno, origin, templates
from .source_printer import Printer, to_ast

_DIR: str | None = None
_LINE_MAPS: dict[str, origin.LineMap] = {}
_USERS: dict[str, int] = {}  # generated file -> how many live conversions were loaded from it
FACTORY = "_d2s_factory"


def _directory() -> str:
    global _DIR
    if _DIR is None:
        # A memory-backed directory where there is one: writing a file per converted function
        # to disk costs more than converting it. Named by the process id, so that a process
        # killed before its exit handler ran leaves a folder the next process removes.
        shm = "/dev/shm"
        memory = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
        parent = memory or tempfile.gettempdir()
        remove_stale(parent)
        _DIR = tempfile.mkdtemp(prefix=f"d2s_{os.getpid()}_", dir=parent)
        atexit.register(_remove, _DIR, os.getpid())
    return _DIR


def _remove(folder: str, pid: int) -> None:
    if os.getpid() == pid:  # (not from a forked child, which inherits the exit handler)
        shutil.rmtree(folder, True)


def _forget_in_child() -> None:
    """A forked child writes its files in a folder of its own (the parent removes its own)."""
    global _DIR
    _DIR = None


os.register_at_fork(after_in_child=_forget_in_child)


def remove_stale(parent: str) -> list[str]:
    """Remove the `d2s_PID_*` folders in `parent` of this user's processes that are no longer
    running (killed before their exit handler ran); returns what was removed."""
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        pid = name.split("_")[1] if name.startswith("d2s_") and name.count("_") >= 2 else ""
        if not pid.isdigit() or int(pid) == os.getpid() or _running(int(pid)):
            continue
        path = os.path.join(parent, name)
        try:
            if os.stat(path).st_uid != os.getuid() or not os.path.isdir(path):
                continue
        except OSError:
            continue
        shutil.rmtree(path, True)
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def is_generated(filename: str) -> bool:
    """Whether `filename` is a file this loader wrote."""
    return filename in _LINE_MAPS


def line_map(filename: str) -> origin.LineMap | None:
    """The line map of a generated file (None for any other file)."""
    return _LINE_MAPS.get(filename)


def line_maps() -> list[origin.LineMap]:
    """The line maps of every file written so far."""
    return list(_LINE_MAPS.values())


_ON_LOAD: list = []


def on_load(fn) -> None:
    """Call `fn(line_map)` each time a generated file is written (before its code runs)."""
    if fn not in _ON_LOAD:
        _ON_LOAD.append(fn)


def lookup(filename: str, lineno: int) -> origin.OriginInfo | None:
    """The user origin of line `lineno` of a generated file (None if unknown)."""
    line_map = _LINE_MAPS.get(filename)
    return None if line_map is None else line_map.get(lineno)


class Loaded:
    """The result of `load`: the code object of the converted function and its source."""

    def __init__(self, code: types.CodeType, source: str, filename: str,
                 from_tree: bool = False):
        self.code = code
        self.source = source
        self.filename = filename
        self.from_tree = from_tree  # compiled from its tree: the text does not parse

    def function_source(self) -> str | None:
        """The converted function alone, printed from the module's text (None where the text
        does not parse: code nested deeper than Python's tokenizer reads)."""
        if self.from_tree:
            return None
        factory = ast.parse(self.source).body[0]
        name = self.code.co_name
        fn = next(s for s in factory.body if isinstance(s, ast.FunctionDef) and s.name == name)
        return ast.unparse(fn)


def load(fn_node: gast.FunctionDef, freevars: list[str]) -> Loaded:
    """Compile `fn_node` inside a factory taking `freevars`; return its code object."""
    return compile_written(write(fn_node, freevars))


class Written:
    """A converted function printed inside its factory and written to its file, not yet
    compiled (`write`): `module` is its tree where the text is nested too deep for Python's
    tokenizer (`_compile`), else None, and the caller may free the tree before compiling
    (CPython's compiling of the text of a huge function takes as much memory again)."""

    __slots__ = ("filename", "module", "name", "text")

    def __init__(self, text: str, filename: str, name: str, module: gast.Module | None):
        self.text, self.filename, self.name, self.module = text, filename, name, module


# Levels of indentation of the printed text from which its tree is kept for `_compile`
# (Python's tokenizer reads 100; the factory around the function adds one)
_DEEP = 90


def write(fn_node: gast.FunctionDef, freevars: list[str]) -> Written:
    """Print `fn_node` inside a factory taking `freevars` and write it to its file, with the
    map of its lines to the user's."""
    factory = templates.replace("def factory(params):\n    fn\n    return name",
                                factory=FACTORY, params=list(freevars), fn=fn_node,
                                name=fn_node.name)[0]
    if fn_node.name not in freevars:
        # The def binds its name in the factory, which would turn the function's own name
        # (a recursive call) into a cell of the factory; as in the user's module, it is global.
        factory.body.insert(0, gast.Global(names=[fn_node.name]))
    module = gast.Module(body=[factory], type_ignores=[])
    printer = Printer()
    text = printer.visit(module)
    spans = printer.spans
    line_map = {}
    returns = set()
    for g in _statements(factory):
        if isinstance(g, gast.FunctionDef) and anno.hasanno(g, anno.RETURN_VALUE):
            returns.add(anno.getanno(g, anno.RETURN_VALUE))
        src = anno.getanno(g, anno.ORIGIN, None)
        span = spans.get(id(g))
        if src is not None and span is not None:
            for line in range(span[0], span[1] + 1):
                line_map[line] = src
    deep = printer.deepest >= _DEEP
    del printer
    # the user lines are part of the name: two functions whose converted text is the same
    # (same body, other place) must not share one file and one line map
    where = "".join(f"\n{n}:{o.filename}:{o.lineno}" for n, o in sorted(line_map.items()))
    digest = hashlib.sha1((text + where).encode()).hexdigest()[:10]
    filename = os.path.join(_directory(), f"{fn_node.name}_{digest}.py")
    annotated = _annotate(text, line_map, spans.values())
    users = _USERS.get(filename, 0)
    if not users:
        with open(filename, "w") as f:
            f.write(annotated)
        _LINE_MAPS[filename] = origin.LineMap(filename, line_map, frozenset(returns))
    _USERS[filename] = users + 1
    return Written(text, filename, fn_node.name, module if deep else None)


def compile_written(written: Written) -> Loaded:
    """Compile what `write` wrote; return its code object."""
    large = len(written.text) >= _TRIM_FROM
    if large:  # (the caller has freed the tree by now)
        _LINE_MAPS[written.filename].compact()
    module_code, from_tree = _compile(written.text, written.module, written.filename)
    if large:
        _return_freed_memory()
    filename = written.filename
    for fn in _ON_LOAD:  # (before any code of the file runs)
        fn(_LINE_MAPS[filename])
    factory_code = _const_code(module_code, FACTORY)
    code = _const_code(factory_code, written.name)
    # the file lives as long as the code (every function made from it, every frame running it)
    weakref.finalize(code, _release, filename)
    return Loaded(code, written.text, filename, from_tree)


def _compile(text: str, module: gast.Module | None, filename: str):
    """(The module's code, whether it was compiled from its tree). Compiled from the text, as
    Python would import the file: cheaper than re-parsing it into an AST, and the lines are
    the file's by construction.
    Python's tokenizer reads at most 100 levels of indentation, and the factory around the
    function adds one to the user's: code nested as deep as Python compiles the user's source
    is compiled from its tree instead (kept by `write` for such text), each statement placed
    at its lines in the text."""
    try:
        return compile(text, filename, "exec"), False
    except IndentationError as e:
        if "too many levels of indentation" not in str(e) or module is None:
            raise
    tree = to_ast(module)
    printer = Printer()
    printer.visit(tree)  # (the same text again, for each statement's lines in it)
    for node in ast.walk(tree):
        span = printer.spans.get(id(node)) if isinstance(node, ast.stmt) else None
        if span is not None:
            node.lineno, node.end_lineno = span
            node.col_offset = node.end_col_offset = 0
    ast.fix_missing_locations(tree)  # the rest: their statement's lines (or line 1)
    return compile(tree, filename, "exec"), True


# Characters of generated text from which its compiling is followed by `_return_freed_memory`
# (CPython's compiler takes about 100 bytes of C heap per character of the text it compiles)
_TRIM_FROM = 100_000


def _return_freed_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's `malloc_trim`; elsewhere
    nothing): the compiler frees what it took for a large text (57 MB for a 10,000-line
    function's), and glibc keeps freed pages below a live allocation mapped, so the process
    would stay that much larger for good. Costs a few milliseconds."""
    global _TRIM
    if _TRIM is None:
        _TRIM = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                trim = ctypes.CDLL(None).malloc_trim
            except (OSError, AttributeError, ImportError):  # (not glibc: musl, ...)
                pass
            else:
                trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
                _TRIM = trim
    if _TRIM:
        _TRIM(0)


_TRIM = None  # glibc's malloc_trim, False where there is none (found on first use)


def _release(filename: str) -> None:
    """The last conversion written to `filename` is gone: remove the file and its line map
    (a process converting fresh closures in a loop keeps a bounded number of files)."""
    users = _USERS.get(filename, 0) - 1
    if users > 0:
        _USERS[filename] = users
        return
    _USERS.pop(filename, None)
    _LINE_MAPS.pop(filename, None)
    linecache.cache.pop(filename, None)
    with contextlib.suppress(OSError):
        os.remove(filename)



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
    """The statements under `node` in pre-order (iterative: a generator per level would
    pass each statement up through every level above it)."""
    stack = [node]
    pop, push, stmt = stack.pop, stack.append, gast.stmt
    while stack:
        n = pop()
        if n is not node and isinstance(n, stmt):
            yield n
        for field in reversed(_STMT_LISTS):
            children = getattr(n, field, None)
            if children:
                for child in reversed(children):
                    push(child)


def _annotate(text: str, line_map: dict, spans) -> str:
    """Append '# user.py:12' to each one-line statement of the generated code."""
    lines = text.split("\n")
    names: dict = {}  # file -> its base name (as `OriginInfo.short` writes it)
    for first, last in spans:
        src = line_map.get(first)
        if src is not None and first == last and "#" not in lines[first - 1]:
            name = names.get(src.filename)
            if name is None:
                name = names[src.filename] = os.path.basename(src.filename)
            lines[first - 1] += f"  # {name}:{src.lineno}"
    return "\n".join(lines) + "\n"
