"""The conversion report: the user's source with each `if`, `while`, `for`, `and`/`or`,
`assert`, `print` and list marked by what it became while tracing, and why.

Operators (`d2s.operators`) decide at trace time from the values they get; each tells this
module what it decided with one call (`record` or `loop`), keyed by the user line of the
generated code that called it. Recording is on only while a StaticFunction traces (and costs
nothing otherwise); at verbosity 3 each decision is also logged.

    >>> import runtime as rt, d2s
    >>> @d2s.to_static
    ... def f(x):
    ...     if rt.mean(x) > 0:
    ...         x = x * 2
    ...     for _ in range(2):
    ...         x = x + 1
    ...     return x
    >>> print(f.report(rt.ones([3])))  # doctest: +SKIP
    Conversion report for f (<doctest>:2)
        2 | def f(x):
        3 |     if rt.mean(x) > 0:
          |     ^ if: graph op (cond): x is a tensor (f32[3])
        5 |     for _ in range(2):
          |     ^ for: plain Python, unrolled 2 times over a range
    ...
"""
from __future__ import annotations

import ast
import os
import re
import sys
import threading
import weakref
from typing import NamedTuple

from runtime import core
from runtime.program.origin import frame_line

from . import logging_utils
from .breakpoints import once_per_trace
from .pyct import loader, origin


class Decision(NamedTuple):
    """What one construct on one user line became, and why."""

    kind: str      # 'if', 'while', 'for', 'and', 'or', 'assert', 'print', 'list'
    outcome: str   # 'graph op (cond)', 'plain Python, unrolled 3 times over a range', ...
    why: str       # 'x is a tensor (f32[2,4])', 'the condition is a Python bool', ...

    def text(self) -> str:
        return f"{self.kind}: {self.outcome}" + (f": {self.why}" if self.why else "")


class Recorder:
    """The decisions of one trace: (file, line) -> ordered distinct decisions."""

    def __init__(self):
        self.lines: dict[tuple, dict[Decision, None]] = {}
        self.functions: dict[tuple, None] = {}  # (file, function name), in order met

    def add(self, src, decision: Decision) -> None:
        line = self.lines.setdefault((src.filename, src.lineno), {})
        if decision.kind == "list":  # a list traced as Python, then as a tensor array, is one
            if decision.outcome == _PYTHON["list"] and any(
                    d.kind == "list" for d in line):
                return
            for d in [d for d in line if d.outcome == _PYTHON["list"]]:
                del line[d]
        line[decision] = None
        self.functions[(src.filename, src.function_name)] = None

    def at(self, filename: str, lineno: int) -> list[Decision]:
        return list(self.lines.get((filename, lineno), ()))


class _PerThread(threading.local):
    """The recorders of the traces running in this thread (a trace in another thread never
    records into them)."""

    def __init__(self):
        self.items: list[Recorder] = []

    def __bool__(self):
        return bool(self.items)

    def __iter__(self):
        return iter(self.items)

    def append(self, rec) -> None:
        self.items.append(rec)

    def remove(self, rec) -> None:
        self.items.remove(rec)


_ACTIVE = _PerThread()
_LATEST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # StaticFunction -> Recorder
_GRAPH_OPS = {"if": "graph op (cond)", "and": "graph op (cond, short-circuit kept)",
              "or": "graph op (cond, short-circuit kept)", "while": "graph op (while)",
              "for": "graph op (while)", "assert": "graph op (assert, checked at run time)",
              "print": "graph op (print, at run time)",
              "list": "tensor array (appended to at run time)"}
_PYTHON = {"if": "plain Python", "and": "plain Python", "or": "plain Python",
           "assert": "plain Python (checked once, while tracing)",
           "print": "graph op (print, at run time)", "list": "Python list"}


def _on() -> bool:
    return bool(_ACTIVE) or logging_utils.verbosity() >= 3


_is_graph = core.is_variable  # a value of the static program being traced
_is_eager = core.is_eager_tensor


def record(kind: str, value) -> None:
    """An operator of `kind` decided on `value` (a graph value: graph op; else Python)."""
    if not _on():
        return
    src, frame = _caller()
    if src is None or not _mentions(kind, src.source_line):
        return
    if _is_graph(value):  # (a tensor array needs no reason: the outcome says it)
        why = "" if kind == "list" else _tensors_named(src, frame, value)
        decision = Decision(kind, _GRAPH_OPS[kind], why)
    else:
        decision = Decision(kind, _PYTHON[kind], _python_why(kind, value))
    _add(src, decision)


def loop(kind: str, iterations: int, graph=None, over=None) -> None:
    """A `while`/`for` ran `iterations` times as Python, then (if `graph` is a graph value:
    the test, index or iterable that made it so) handed the rest to a while op."""
    if not _on():
        return
    src, frame = _caller()
    if src is None:
        return
    if graph is not None:
        outcome = _GRAPH_OPS[kind] if not iterations else \
            f"unrolled {iterations} times, then a graph op (while)"
        why = _tensors_named(src, frame, graph) if _is_graph(graph) else \
            "its length is a tensor"
    else:
        outcome = f"plain Python, unrolled {iterations} time{'s' * (iterations != 1)}"
        why = _iterable_text(over) if kind == "for" else "the condition is a Python value"
    _add(src, Decision(kind, outcome, why))


def arrays(names, values) -> None:
    """Lists carried by a graph while loop become tensor arrays."""
    if not _on():
        return
    lists = [n for n, v in zip(names, values) if isinstance(v, list)]
    if lists:
        src, _ = _caller()
        if src is not None:
            _add(src, Decision("list", "tensor array", f"{', '.join(lists)} changes in a loop "
                                                       "whose condition is a tensor"))


def kept(variable, what: str) -> None:
    """`v.numpy()` / `v.item()` on a graph value kept it in the graph (noted once per line)."""
    if not _on():
        return
    src, _ = _caller()
    if src is not None:
        _add(src, Decision(f".{what}()", "kept in the graph",
                           f"the value stays a tensor of the program ({variable.type_str()}), "
                           "as in Paddle's converted code; using it as a Python value raises"))


def _add(src, decision: Decision) -> None:
    for rec in _ACTIVE:
        rec.add(src, decision)
    if logging_utils.verbosity() >= 3:  # (the text only made when it is logged)
        logging_utils.log(3, f"{src.short()} {decision.text()}")


def _caller():
    """The user origin and frame of the innermost generated code on the stack."""
    f = sys._getframe(2)
    while f is not None:
        src = loader.lookup(f.f_code.co_filename, frame_line(f))
        if src is not None:
            return src, f
        f = f.f_back
    return None, None


def _mentions(kind: str, line: str) -> bool:
    """and/or from the user's own text (not flags the jump converters wrote)."""
    word = _WORDS.get(kind)
    return word is None or word.search(line) is not None


_WORDS = {kind: re.compile(rf"\b{kind}\b") for kind in ("and", "or")}
_NAMES = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?")  # names and attributes, as `x.w`


def _describe(v) -> str:
    return v.type_str() if _is_graph(v) else type(v).__name__


def _tensors_named(src, frame, value) -> str:
    """'x is a tensor (f32[2,4])': graph values the user's line names, as seen by the
    generated code that ran it."""
    found: dict[str, str] = {}
    names = (_locals_of(frame), frame.f_globals)
    for name in _NAMES.findall(src.source_line):
        root, _, attr = name.partition(".")
        v = _lookup(names, root)
        if not _is_graph(v) and attr and v is not _MISSING:
            root, v = name, getattr(v, "__dict__", {}).get(attr)  # no properties run here
        if _is_graph(v):
            found.setdefault(root, _describe(v))
    if not found:
        return f"the value is a tensor ({_describe(value)})"
    if len(found) == 1:
        (name, kind), = found.items()
        return f"{name} is a tensor ({kind})"
    return ", ".join(f"{n} ({k})" for n, k in list(found.items())[:4]) + " are tensors"


_MISSING = object()
# Before Python 3.13, `frame.f_locals` copies every local of the frame: once per tensor `if`
# of a function with thousands of locals (a huge unrolled model) that makes tracing quadratic.
# Frames with more locals than this name none of them in the report's reasons.
_LOCALS_COPIED_AT_MOST = 256


def _locals_of(frame):
    """The frame's locals to look names up in (copied once per decision), or, where copying
    them would cost too much, a mapping that hides the globals they shadow."""
    code = frame.f_code
    if sys.version_info >= (3, 13) or code.co_nlocals + len(code.co_cellvars) + len(
            code.co_freevars) <= _LOCALS_COPIED_AT_MOST:
        return frame.f_locals
    entry = _HIDDEN_LOCALS.get(id(code))
    if entry is None or entry[0]() is not code:
        names = code.co_varnames + code.co_cellvars + code.co_freevars
        key = id(code)
        entry = _HIDDEN_LOCALS[key] = (
            weakref.ref(code, lambda _r, k=key: _HIDDEN_LOCALS.pop(k, None)),
            dict.fromkeys(names, _UNKNOWN))
    return entry[1]


_UNKNOWN = object()  # a local whose value is not read (neither missing nor a tensor)
# id(code) -> (a weak reference to the code, its names): by identity, since hashing a code
# object hashes all its bytecode and constants (milliseconds for a huge function, per `if`)
_HIDDEN_LOCALS: dict = {}


def _lookup(names: tuple, name: str):
    local, global_ = names
    v = local.get(name, _MISSING)
    return global_.get(name, _MISSING) if v is _MISSING else v


def _python_why(kind: str, value) -> str:
    if _is_eager(value):
        return ("the condition is an eager Tensor: its value while tracing is baked into the "
                "program")
    if kind == "list":
        return ""
    what = "the condition" if kind in ("if", "assert") else "the value"
    return f"{what} is a Python {type(value).__name__}" if kind != "print" else \
        "no argument is a tensor"


def _iterable_text(over) -> str:
    if _is_graph(over):
        return f"over the first dim of a tensor ({over.type_str()})"
    if _is_eager(over):
        return f"over the first dim of an eager Tensor {list(over.shape)}"
    return f"over a {type(over).__name__}" if over is not None else ""


# ---- the report ------------------------------------------------------------------------------

def recording(owner, fn):
    """`fn` (a trace function of StaticFunction `owner`) recording its decisions."""
    def traced(*args, **kwargs):
        rec = Recorder()
        _ACTIVE.append(rec)
        try:
            with once_per_trace():  # breakpoint(): once per line per trace
                return fn(*args, **kwargs)
        finally:
            _ACTIVE.remove(rec)
            _LATEST[owner] = rec
    return traced


_CONSTRUCTS = {ast.If: "if", ast.IfExp: "if", ast.While: "while", ast.For: "for",
               ast.Assert: "assert"}


class ConversionReport:
    """The report of one trace (`str()` is the text; `.decisions` the data)."""

    def __init__(self, text: str, decisions: dict):
        self.text = text
        self.decisions = decisions

    def __str__(self):
        return self.text

    __repr__ = __str__


def latest(owner) -> Recorder | None:
    return _LATEST.get(owner)


def render(function, rec: Recorder) -> ConversionReport:
    """The report for Python function `function` and the functions it called."""
    parts = [_render_function(filename, node, rec) for filename, node in functions(function,
                                                                                  rec)]
    decisions = {k: list(v) for k, v in rec.lines.items()}
    return ConversionReport("\n\n".join(p for p in parts if p), decisions)


def functions(function, rec: Recorder | None) -> list[tuple[str, ast.FunctionDef]]:
    """(file, def node) of `function` and of each user function it called while tracing (as
    far as the trace recorded their decisions), in the order met."""
    code = function.__code__
    found = [(code.co_filename, _function_node(code.co_filename, code.co_name,
                                                code.co_firstlineno, False))]
    for filename, name in rec.functions if rec is not None else ():
        if (filename, name) != (code.co_filename, code.co_name):
            lines = [ln for (f, ln) in rec.lines if f == filename]
            found.append((filename, _function_node(filename, name, min(lines), True)))
    return [(f, node) for f, node in found if node is not None]


def _function_node(filename: str, name: str, line: int, inside: bool):
    tree = ast.parse("\n".join(origin.user_source(filename)))
    best = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
            first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
            hit = first <= line <= n.end_lineno if inside else first == line
            if hit and (best is None or n.lineno > best.lineno):
                best = n
    return best


def _render_function(filename, node, rec: Recorder) -> str:
    name = node.name
    source = origin.user_source(filename)
    marks = constructs(node)
    out = [f"Conversion report for {name} ({os.path.basename(filename)}:{node.lineno})"]
    for i in range(node.lineno, node.end_lineno + 1):
        text = source[i - 1] if i <= len(source) else ""
        out.append(f"{i:5d} | {text}")
        decided = rec.at(filename, i)
        col = min((c for c, _ in marks.get(i, [])), default=len(text) - len(text.lstrip()))
        for d in decided:
            out.append(f"      | {' ' * col}^ {d.text()}")
        kinds = {d.kind for d in decided}
        for _, kind in marks.get(i, []):
            if kind not in kinds:
                out.append(f"      | {' ' * col}^ {kind}: not reached while tracing")
                kinds.add(kind)
    return "\n".join(out)


def constructs(node) -> dict[int, list[tuple[int, str]]]:
    """line -> [(column, kind)] of the constructs the report describes inside def `node`."""
    marks: dict[int, list[tuple[int, str]]] = {}
    for n in ast.walk(node):
        kind = _construct(n)
        if kind is not None and n is not node:
            marks.setdefault(n.lineno, []).append((n.col_offset, kind))
    return marks


def _construct(n) -> str | None:
    kind = _CONSTRUCTS.get(type(n))
    if kind is not None:
        return kind
    if isinstance(n, ast.BoolOp):
        return "and" if isinstance(n.op, ast.And) else "or"
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print":
        return "print"
    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "append"):
        return "list"
    return None
