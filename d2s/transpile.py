"""Convert one Python function: parse, run the passes in order, load the generated code.

    >>> import d2s.transpile as t
    >>> def f(x):
    ...     return x if x > 0 else -x
    >>> g = t.convert(f)
    >>> g(-3)
    3

`convert(fn)` returns a new function with `fn`'s globals, closure cells and defaults whose
code is the generated code (cached per function object). `convert_source(fn, level)` gives the
code after `level` passes as text, for `.code`, code levels and the CLI.
"""
from __future__ import annotations

import collections
import contextlib
import gc
import inspect
import os
import sys
import threading
import time
import types
import weakref

import gast

from . import errors, logging_utils
from .errors import ConversionError  # noqa: F401  (d2s.transpile.ConversionError)
from .pyct import (
    activity,
    analysis,
    anno,
    generated_names,
    hoist,
    loader,
    origin,
    parser,
    reads,
    templates,
)
from .pyct.naming import RESERVED, Namer
from .pyct.transformer import Context


class Converted:
    """A converted code object and what describes it."""

    def __init__(self, loaded: loader.Loaded, node, outside=None, assumed=frozenset()):
        self.loaded = loaded
        self.assumed = assumed  # parameters assumed library values (`converters.receivers`)
        self.checks = None  # how `convert` finds them in a call's arguments
        # The tree of a huge function is several times its code's size: the function is
        # printed from the module's text instead, unless that text does not parse.
        self._node = node if loaded.from_tree else None
        self._source = None
        self.reads = outside  # what the user's function reads from outside (pyct/reads.py)

    @property
    def source(self) -> str:
        """The converted function alone (what `.code` shows), printed on first use."""
        if self._source is None:
            with deep_recursion():  # printing a long expression recurses as deep as parsing
                self._source = self.loaded.function_source() if self._node is None else \
                    parser.unparse(self._node)
            self._node = None
        return self._source


# function -> Converted. Keyed by the function object itself, not its code object: CPython's
# code equality ignores the file, so the same text in two modules would share a conversion
# (whose decisions depend on each module's globals). Freed with the function.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()  # one conversion at a time; a second thread waits for it and reuses it


def _unlock_in_child() -> None:
    """A fork while another thread converts copies the lock held, by a thread the child does
    not have: the child starts with a free one (conversions only finish into `_CACHE`)."""
    global _LOCK
    _LOCK = threading.RLock()


os.register_at_fork(after_in_child=_unlock_in_child)
_OPERATORS_CELL = None


def _converters():
    """`d2s.converters`, imported on the first conversion (not by `import d2s`)."""
    from . import converters

    return converters


def _passes() -> list:
    return _converters().PASSES


def use_operators(module) -> None:
    """The module generated code calls as `_d2s` (`d2s.operators` registers itself when it is
    imported, so this module never imports the layer above it)."""
    global _OPERATORS_CELL
    _OPERATORS_CELL = types.CellType(module)


def _operators_cell():
    if _OPERATORS_CELL is None:
        raise RuntimeError("d2s.operators is not imported: import d2s first")
    return _OPERATORS_CELL


# function -> Converted, for calls inside an open `try` body: run-time errors become error
# codes handed to the caller (`converters.try_except`, `operators.try_except`).
_CACHE_ERRORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# function -> Converted that assumes nothing of its parameters (`receivers`): called where a
# parameter the first conversion assumed a library value holds a user object
_CACHE_PLAIN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CACHE_PLAIN_ERRORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def convert(fn, errors: bool = False):
    """The converted version of the Python function `fn` (see the module doc); `errors`: the
    conversion for a call inside a `try` body, whose run-time errors reach its `except`.

    Where the conversion left a Tensor method call on a parameter alone (`x.sum()`: x assumed
    a library value, `converters.receivers`), each call checks those parameters, and one
    holding a user object (`meter.add(v)`) runs the conversion that assumes nothing."""
    converted = _cached(fn, _CACHE_ERRORS if errors else _CACHE, errors, True)
    made = loader.instantiate(converted.loaded, fn, {RESERVED: _operators_cell()})
    if not converted.assumed:
        return made
    if converted.checks is None:
        converted.checks = _parameter_checks(fn, converted.assumed)
    checks, library = converted.checks, _converters().receivers.library_type

    def checked(*args, **kwargs):
        for i, name, default in checks:
            value = args[i] if i is not None and i < len(args) else kwargs.get(name, default)
            if not library(type(value)):
                plain = _cached(fn, _CACHE_PLAIN_ERRORS if errors else _CACHE_PLAIN, errors,
                                False)
                return loader.instantiate(plain.loaded, fn, {RESERVED: _operators_cell()})(
                    *args, **kwargs)
        return made(*args, **kwargs)
    checked.__name__, checked.__qualname__ = made.__name__, made.__qualname__
    checked.__module__, checked.__doc__, checked.__wrapped__ = made.__module__, made.__doc__, made
    return checked


def _cached(fn, cache, errors: bool, assume: bool) -> Converted:
    converted = cache.get(fn)
    if converted is None:
        with _LOCK:
            converted = cache.get(fn)
            if converted is None:
                converted = cache[fn] = _convert(fn, errors, assume)
    return converted


def _parameter_checks(fn, names) -> list:
    """(position or None, name, default) of each parameter of `fn` in `names`."""
    out = []
    for i, p in enumerate(inspect.signature(fn, follow_wrapped=False).parameters.values()):
        if p.name in names:
            out.append((None if p.kind is p.KEYWORD_ONLY else i, p.name,
                        None if p.default is p.empty else p.default))
    return out


def _convert(fn, errors: bool = False, assume: bool = True) -> Converted:
    code = fn.__code__
    logging_utils.log(1, f"converting {fn.__qualname__} ({code.co_filename}:"
                         f"{code.co_firstlineno})")
    # Converting allocates many short-lived, acyclic nodes: cyclic GC passes over them cost a
    # good part of a first call and would free nothing.
    paused = gc.isenabled()
    gc.disable()
    try:
        with deep_recursion():
            node, ctx, present = _prepare(fn, assume)
            if errors:
                ctx.errors = True
                present = set(present) | {gast.Try}  # the try pass wraps the whole body
            outside = reads.outside_reads(node)
            with _walrus_free(present):
                node = _run_passes(node, ctx, len(_passes()), present, keep_folded=True)
                _finalize(node)
            written = loader.write(node, [RESERVED] + list(code.co_freevars))
            # The tree is freed before the text is compiled (compiling a huge function's text
            # takes as much memory as its tree), and while collection is paused: every object
            # made since the pause is in the youngest generation, and the first collection
            # after it scans them all (a quarter of a second for a 10,000-line function's).
            tree = None if written.module is None else node  # (`.code` prints it)
            assumed = frozenset(ctx.receivers.assumed)
            del node, ctx
            converted = Converted(loader.compile_written(written), tree, outside, assumed)
            del written, tree
    finally:
        if paused:
            gc.enable()
    return converted


def reads_of(fn):
    """What the converted function `fn` reads from outside its arguments (None if `fn` has
    not been converted)."""
    converted = _CACHE.get(fn) or _CACHE_ERRORS.get(fn)
    return None if converted is None else converted.reads


# What Python compiles, d2s converts: the AST walks recurse once per level of nesting, and an
# expression such as a sum of 2,000 terms nests 2,000 deep. Python 3.11+ runs Python-to-Python
# calls without growing the C stack, so a higher limit while converting is safe.
_CONVERSION_RECURSION_LIMIT = 30_000 if sys.version_info >= (3, 11) else 6_000


@contextlib.contextmanager
def deep_recursion(limit: int = _CONVERSION_RECURSION_LIMIT):
    """Allow recursion `limit` deep while converting or tracing (restored afterwards)."""
    old = sys.getrecursionlimit()
    if old >= limit:
        yield
        return
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def convert_with(fn, pass_names: list[str]):
    """`fn` converted by the named passes only (uncached; for testing one converter)."""
    with deep_recursion():
        node, ctx, present = _prepare(fn)
        with _walrus_free(present):
            for name, module in _passes():
                if name in pass_names:
                    if module.NEEDS_ANALYSIS:
                        analysis.analyze(node)
                    node = module.transform(node, ctx)
            _finalize(node)
        loaded = loader.load(node, [RESERVED] + list(fn.__code__.co_freevars))
    return loader.instantiate(loaded, fn, {RESERVED: _operators_cell()})


def converted_source(fn) -> str:
    """The converted source of `fn` (after all passes)."""
    convert(fn)
    plain = _CACHE_PLAIN.get(fn)  # (what ran where a parameter held a user object: `convert`)
    return (_CACHE[fn] if plain is None else plain).source


def convert_source(fn, level: int) -> str:
    """The source of `fn` after the first `level` passes (0: as parsed; >= len: all)."""
    with deep_recursion():
        node, ctx, present = _prepare(fn)
        last = level >= len(_passes())  # the last level is the code that runs
        with _walrus_free(present):
            node = _run_passes(node, ctx, min(level, len(_passes())), present,
                               keep_folded=last)
            if last:
                _finalize(node)
        return parser.unparse(node)


def _walrus_free(present: set):
    """The analyses of a conversion skip expressions where the function holds no walrus
    (`activity.no_walrus`; `present`: its node types, as `_prepare` found them)."""
    return activity.no_walrus(gast.NamedExpr not in present)


def _prepare(fn, assume: bool = True):
    """Parse `fn` and learn what converting it needs: (FunctionDef node, Context, the node
    types present). One survey walk answers the questions about the whole tree; the checks
    that need another walk run only when the survey shows they can find something."""
    errors.check_function_kind(fn)
    parsed = parser.parse_function(fn)
    node = parsed.node
    if isinstance(node, gast.Lambda):
        node = _lambda_as_def(node)
    found = analysis.survey(node)
    if not found.types.isdisjoint(_UNSUPPORTED):
        _check_supported(node)
    if not found.names.isdisjoint(_FRAME_READS):
        _check_frame_reads(node, fn)
    if gast.Yield in found.types or gast.YieldFrom in found.types:
        _mark_generators(node)
    code = fn.__code__
    closure = {}
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell (the variable is not assigned yet)
                pass
    namespace = collections.ChainMap(closure, fn.__globals__)
    args = analysis.params(node)
    owner = args[0] if args and _is_method(fn) else None
    # Without a nested function or lambda, nothing can read a closure cell.
    cells = analysis.closure_cells(node) if found.scopes > 1 else frozenset()
    ctx = Context(Namer(found.names), namespace, owner=owner, cells=cells)
    ctx.receivers = _converters().receivers.Receivers(node, namespace, assume, owner,
                                                      origin.user_source(parsed.filename))
    return node, ctx, found.types


def _is_method(fn) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


def _run_passes(node, ctx, count: int, present: set | None = None, keep_folded: bool = False):
    """Run the first `count` passes over `node`. `present` holds the node types in `node`
    (from `_prepare`'s survey; computed here if not given) and grows by what passes create.
    Statement runs no pass changes are folded while the passes run (`plain_runs`), and put
    back at the end, or with `keep_folded` by `_finalize` (whose walks skip them too)."""
    # (the settings are read once: `after_pass` reads them again when there is anything to log)
    logs = logging_utils.code_level() >= 0 or logging_utils.verbosity() >= 2
    if logs:
        logging_utils.after_pass(node, 0, _passes())
    present = {type(n) for n in analysis.walk(node)} if present is None else set(present)
    ctx.present = present  # (a superset of the node types in `node` while the passes run)
    passes = _passes()[:count]
    done = set()  # (passes run by a fused pass)
    plain_runs, folded = _converters().plain_runs, False
    analysed = max((i for i, (_, m) in enumerate(passes, 1) if m.NEEDS_ANALYSIS), default=0)
    for i, (name, module) in enumerate(passes, 1):
        start = time.perf_counter() if logs else 0.0
        if name not in done and present.intersection(module.HANDLES):  # else: no change
            if not logs:
                module = _fused(name, module, passes[i:], present)
                done.update(getattr(module, "FUSES", ()))
            if module.NEEDS_ANALYSIS:
                analysis.analyze(node)
            node = module.transform(node, ctx)
            present.update(module.CREATES)
            if i == analysed:  # (the last pass that reads the analyses: `analysis.forget`)
                analysis.forget(node)
        if logs:
            logging_utils.after_pass(node, i, _passes(), time.perf_counter() - start)
        elif name == plain_runs.AFTER_PASS and i < len(passes):
            # the statements no later pass changes skip them (each level of code levels
            # and pass logs shows the whole code: they are never folded there)
            folded = plain_runs.fold(node, ctx) > 0
    if folded and not keep_folded:
        plain_runs.unfold(node)
    return node


def _fused(name, module, rest, present):
    """`module`, or the pass that runs it and the next one (`rest[0]`) in one walk where the
    next one runs too (`converters.FUSED`)."""
    fused = _converters().FUSED.get(name)
    if fused is None or not rest or not present.intersection(rest[0][1].HANDLES):
        return module
    return fused


def _lambda_as_def(node):
    fn = templates.replace("def _lambda():\n    return body", body=node.body)[0]
    fn.args = node.args
    anno.copyanno(node, fn, anno.ORIGIN)
    origin.inherit(fn, anno.getanno(node, anno.ORIGIN, None))
    return fn


_UNSUPPORTED = {
    gast.Yield: "a generator (yield)",
    gast.YieldFrom: "a generator (yield from)",
    gast.Await: "await",
    gast.AsyncFor: "async for",
    gast.AsyncWith: "async with",
}


# Builtins that read the calling frame's names when called without arguments: converted code
# keeps some of the user's names in functions of its own (branches, loop bodies) and adds its
# own (`_d2s`), so what they return would differ from eager's.
_FRAME_READS = ("locals", "vars", "dir")


def _check_frame_reads(node, fn) -> None:
    """Refuse `locals()`, `vars()` and `dir()` without arguments (unless the name is the
    user's own) at the user's line."""
    bound = {n.id for n in analysis.walk(node) if isinstance(n, gast.Name)
             and not isinstance(n.ctx, gast.Load)}
    free = set(fn.__code__.co_freevars) | set(fn.__globals__)
    for n in analysis.walk(node):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in \
                _FRAME_READS and not n.args and not n.keywords and n.func.id not in bound \
                and n.func.id not in free:
            src = anno.getanno(n, anno.ORIGIN, None)
            at = f'File "{src.filename}", line {src.lineno}: {src.source_line.strip()}' \
                if src is not None else "unknown line"
            raise errors.conversion_error(
                f"{n.func.id}() without arguments ({at}), the function's local names",
                node.name, src,
                "Converted code keeps some of its names in functions of its own, so the "
                "names it would list differ from eager's. Name the variables you need "
                "instead (`{\"t\": t, \"x\": x}`), or move this code into a function "
                "decorated with @d2s.not_to_static.")


def _mark_generators(fn) -> None:
    """Nested generator functions stay exactly as written: a generator's body runs lazily, one
    `next()` at a time, which branch and loop functions cannot express."""
    for node in analysis.walk(fn):
        if node is not fn and isinstance(node, gast.FunctionDef) and any(
                isinstance(n, (gast.Yield, gast.YieldFrom)) for n in analysis.walk(node)):
            anno.setanno(node, anno.OPAQUE, True)


def _check_supported(fn) -> None:
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        what = _UNSUPPORTED.get(type(n))
        if what is not None:
            raise errors.conversion_error(
                what, fn.name, anno.getanno(n, anno.ORIGIN, None),
                "Move this code into a function decorated with @d2s.not_to_static, or run it "
                "eagerly.")
        if not isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            stack.extend(gast.iter_child_nodes(n))


def _finalize(fn) -> None:
    """Generated functions move out of generated functions where that changes nothing (so
    generated code nests no deeper than the user's: `pyct/hoist.py`), and generated functions
    inside a function with `global`/`nonlocal` names declare them too, so assignments in a
    branch or loop body still reach the right variable. A scope with many generated
    functions reuses their names (`pyct/generated_names.py`: CPython compiles it in linear
    time then). Last, the statement runs `_run_passes` left folded are put back (hoisting and
    renaming find the names of a run in its placeholder, where the run reads and binds
    them)."""
    hoist.hoist_generated(fn)
    generated_names.reuse_generated_names(fn)
    _declare_scopes(fn)
    _converters().plain_runs.unfold(fn)


def _declare_scopes(fn) -> None:
    decls = anno.getanno(fn, anno.SCOPE_DECL, None)
    if decls is None:
        decls = analysis.scope_declarations(fn.body)
    for child in _direct_functions(fn.body):
        if anno.getanno(child, anno.GENERATED, False):
            if decls:
                used = {n.id for n in analysis.walk(child) if isinstance(n, gast.Name)}
                wanted = sorted(n for n in decls if n in used)
                glob = [n for n in wanted if decls[n] == "global"]
                nonloc = [n for n in wanted if decls[n] == "nonlocal"]
                header = []
                if glob:
                    header.append(gast.Global(names=glob))
                if nonloc:
                    header.append(gast.Nonlocal(names=nonloc))
                child.body = header + child.body
            anno.setanno(child, anno.SCOPE_DECL, decls)
        _declare_scopes(child)


def _direct_functions(stmts):
    stack = list(stmts)
    while stack:  # a def is a statement: only statement lists can hold one
        n = stack.pop()
        if n.__class__ is gast.FunctionDef:
            yield n
        elif n.__class__ is not gast.ClassDef:
            for field in _BLOCK_FIELDS:
                block = getattr(n, field, None)
                if block:
                    stack.extend(block)


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
