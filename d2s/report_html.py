"""The conversion report as one self-contained HTML page (`d2s report`, `f.report_html()`).

The page shows, with nothing fetched when it is viewed (styles and the SVG are inline):

- the user's source, each line marked by what it became: a graph `cond`/`while`/tensor array
  (the decisions `report.py` records while tracing), graph ops (the program's ops whose origin
  is the line), Python run once while tracing, something run at every call (the guards checked
  before each call, the Python values written back after it, `print` ops), or refused (the
  error, with the docs section) -- beside the line, and in full on hover;
- the converted code, each generated line linked to the source line it came from;
- the program drawn as SVG (`report_svg.py`: Graphviz `dot` when installed, else our layout);
- the program cache: one row per kept program (signature, guards, why it was traced);
- timings: conversion, trace, compile, first call and steady call, measured on a fresh copy
  of the function so the user's own cache keeps what it had.

    >>> import runtime as rt, d2s
    >>> @d2s.to_static
    ... def f(x):
    ...     return x * 2 if rt.mean(x) > 0 else x
    >>> page = f.report_html(rt.ones([2]))
    >>> page.startswith('<!DOCTYPE html>') and 'graph op (cond)' in page
    True
"""
from __future__ import annotations

import html
import linecache
import os
import statistics
import sys
import time
from typing import NamedTuple

import numpy as np

import runtime as rt
from runtime.static import InputSpec

from . import converters, errors, guards, report, report_svg, transpile
from .program_cache import build_program, describe_key_part, retrace_diffs
from .pyct import loader, origin

# mark kind -> (legend text, background colour)
KINDS = {
    "graph": ("graph control flow (cond / while / tensor array)", "#d6e8ff"),
    "ops": ("graph ops", "#e4f5dc"),
    "python": ("Python, run once while tracing", "#f1f1f1"),
    "every-call": ("run at every call (guards, written-back values, print)", "#fff1c9"),
    "unreached": ("not reached while tracing", "#ffffff"),
    "refused": ("refused: the error and what to do", "#f9d2d2"),
}
_DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


class Mark(NamedTuple):
    kind: str  # a key of KINDS
    text: str


class Timings(NamedTuple):
    """Seconds: converting (all passes, uncached), tracing, compiling (the first call less
    tracing and a steady call), the first call of a fresh copy and a steady call (median)."""

    conversion: float
    trace: float
    compile: float
    first_call: float
    steady_call: float


def render_page(sf, args: tuple, kwargs: dict, layout: str = "auto") -> str:
    """The page for StaticFunction `sf` traced for `args` (tensors, InputSpecs, Python
    values)."""
    fn = sf._function
    failure, rec, concrete, timings, ran = None, None, None, None, None
    try:
        conversion = _timed(lambda: transpile.convert_with(fn, [n for n, _ in
                                                                converters.PASSES]))
        ran = lines_run(lambda: sf.report(*args, **kwargs))
        rec = report.latest(sf)
        concrete = sf.get_concrete_program(*args, **kwargs)
        timings = _timings(sf, _examples(args), kwargs, conversion)
    except Exception as e:  # noqa: BLE001  (a refusal is what the page then shows)
        failure = e
        rec = report.latest(sf)
    parts = [_HEAD.format(title=html.escape(sf.__qualname__)),
             f"<h1>Conversion report: <code>{html.escape(sf.__qualname__)}</code></h1>",
             _legend(), _source_section(fn, rec, concrete, sf, failure, ran),
             _converted_section(fn), _program_section(concrete, layout),
             _cache_section(sf), _timings_section(timings), "</body></html>"]
    return "\n".join(parts)


# ---- measuring -----------------------------------------------------------------------------

def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _examples(args: tuple) -> tuple:
    """Arguments to call with: an InputSpec becomes a random tensor (a varying dim: 2)."""
    rng = np.random.default_rng(0)

    def example(spec):
        shape = [2 if d in (None, -1) else d for d in spec.shape]
        return rt.to_tensor(rng.standard_normal(shape).astype(spec.dtype.np))
    return tuple(example(a) if isinstance(a, InputSpec) else a for a in args)


def _timings(sf, args: tuple, kwargs: dict, conversion: float) -> Timings:
    # a new StaticFunction of the same class (one-way imports: `static_function` loads
    # this module for `report_html()`, so this module does not import it)
    fresh = type(sf)(sf._function, sf._input_spec, sf.full_graph, sf.build_strategy,
                     instance=sf._instance)
    trace = _timed(lambda: build_program(fresh.trace_target(), args, kwargs))
    first = _timed(lambda: fresh(*args, **kwargs))
    steady = statistics.median(_timed(lambda: fresh(*args, **kwargs)) for _ in range(5))
    return Timings(conversion, trace, max(first - trace - steady, 0.0), first, steady)


# ---- the source, marked --------------------------------------------------------------------

def line_marks(fn, rec, concrete, sf, failure) -> dict[tuple[str, int], list[Mark]]:
    """(file, line) -> what that line of the user's source became."""
    marks: dict[tuple[str, int], list[Mark]] = {}
    add = lambda where, kind, text: marks.setdefault(where, []).append(Mark(kind, text))
    for where, decisions in (rec.lines.items() if rec is not None else ()):
        for d in decisions:
            add(where, _decision_kind(d), d.text())
    if concrete is not None:
        program = concrete.main_program
        counts: dict[tuple[str, int], dict[str, int]] = {}
        for op in program.ops():
            o = program.origin_of(op)
            if o is not None:
                per = counts.setdefault((o[0], o[1]), {})
                per[op.type] = per.get(op.type, 0) + 1
        for where, per in counts.items():
            add(where, "ops", "graph ops: " + ", ".join(
                f"{t} x{n}" if n > 1 else t for t, n in per.items()))
    code = fn.__code__
    first = (code.co_filename, code.co_firstlineno)
    entry = sf.program_cache.last_entry
    if entry is not None and entry.guards:
        add(first, "every-call", "checked before every call: " + ", ".join(
            dict.fromkeys(guards.describe(g) for g in entry.guards)))
    if entry is not None and entry.effects is not None:
        add(first, "every-call", "written back after every call: " + ", ".join(
            dict.fromkeys(str(getattr(s, "path", s)) for s, _ in entry.effects.writes)))
    if failure is not None:
        where, text = _refusal(failure, first)
        add(where, "refused", text)
    return marks


def _decision_kind(d: report.Decision) -> str:
    if d.outcome.startswith("graph op (print") or d.outcome.startswith("graph op (assert"):
        return "every-call"
    if d.outcome.startswith(("graph op", "tensor array", "kept in the graph")) or \
            "then a graph op" in d.outcome:
        return "graph"
    return "python"


def _refusal(e: BaseException, default: tuple) -> tuple[tuple[str, int], str]:
    """Where an error points in the user's source, and its text with the docs section."""
    where = default
    src = getattr(e, "origin", None)
    frames = errors.user_frames(e)
    if isinstance(src, tuple):  # (an op's origin: file, line, source)
        where = (src[0], src[1])
    elif src is not None:
        where = (src.filename, src.lineno)
    elif frames:
        where = (frames[-1].filename, frames[-1].lineno)
    section = "Converting" if isinstance(e, errors.ConversionError) else "Tracing"
    message = str(e).split("\n  In user code:")[0].strip()
    return where, f"{type(e).__name__}: {message} (see docs/errors.md, section {section})"


def lines_run(call) -> set[tuple[str, int]]:
    """The user lines (file, line) whose generated code ran during `call()` (a trace)."""
    seen: set[tuple[str, int]] = set()

    def on_line(frame, event, arg):
        if event == "line":
            src = loader.lookup(frame.f_code.co_filename, frame.f_lineno)
            if src is not None:
                seen.add((src.filename, src.lineno))
        return on_line

    def on_call(frame, event, arg):
        return on_line if loader.is_generated(frame.f_code.co_filename) else None

    before = sys.gettrace()  # (a debugger's or coverage's tracer: paused for the trace)
    sys.settrace(on_call)
    try:
        call()
    finally:
        sys.settrace(before)
    return seen


def _source_section(fn, rec, concrete, sf, failure, ran) -> str:
    marks = line_marks(fn, rec, concrete, sf, failure)
    out = ["<h2>Source</h2>"]
    for filename, node in report.functions(fn, rec):
        lines = origin.user_source(filename)
        constructs = report.constructs(node)
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        out.append(f'<p class="file">{html.escape(filename)}</p><table class="source">')
        for i in range(first, node.end_lineno + 1):
            text = lines[i - 1] if i <= len(lines) else ""
            got = list(marks.get((filename, i), []))
            kinds_seen = {m.text.split(":")[0] for m in got}
            for _, kind in constructs.get(i, []):
                if kind not in kinds_seen and rec is not None:
                    got.append(Mark("unreached", f"{kind}: not reached while tracing"))
                    kinds_seen.add(kind)
            if not got and ran is not None and _is_statement(text):
                got.append(Mark("python", "Python, run once while tracing (no op in the "
                                          "program)") if (filename, i) in ran else
                           Mark("unreached", "not run while tracing"))
            out.append(_source_row(filename, i, text, got))
        out.append("</table>")
    if failure is not None:
        out.append(f'<pre class="error">{_esc(str(failure))}</pre>')
        docs = os.path.join(_DOCS, "errors.md")
        out.append(f'<p>What each error means and what to do: <a href="file://{_esc(docs)}">'
                   "docs/errors.md</a>.</p>")
    return "\n".join(out)


def _is_statement(text: str) -> bool:
    s = text.strip()
    return bool(s) and not s.startswith(("#", "@", "def ", "else", "elif", "try", "finally",
                                         '"""', "'''", ")", "]", "}"))


def _source_row(filename: str, lineno: int, text: str, marks: list[Mark]) -> str:
    kind = marks[0].kind if marks else "none"
    for k in ("refused", "graph", "every-call", "ops", "python", "unreached"):
        if any(m.kind == k for m in marks):
            kind = k
            break
    hover = "\n".join(m.text for m in marks)
    beside = "; ".join(m.text for m in marks)
    return (f'<tr id="{_anchor(filename, lineno)}" class="line {kind}" title="{_esc(hover)}">'
            f'<td class="n">{lineno}</td><td class="code"><pre>{_esc(text)}</pre></td>'
            f'<td class="mark">{_esc(beside)}</td></tr>')


def _anchor(filename: str, lineno: int) -> str:
    return f"src-{os.path.basename(filename).replace('.', '_')}-{lineno}"


# ---- the converted code --------------------------------------------------------------------

def _converted_section(fn) -> str:
    """The generated file's lines of the function (as tracebacks and pdb show them), each
    linked to its user line by the loader's line map."""
    try:
        converted = transpile.convert(fn)
        code = getattr(converted, "__wrapped__", converted).__code__  # (`convert`'s checks)
    except Exception as e:  # noqa: BLE001  (the source section shows the refusal)
        return f"<h2>Converted code</h2><p>Not converted: {_esc(str(e).splitlines()[0])}</p>"
    line_map = loader.line_map(code.co_filename)
    lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1:]
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    out = ["<h2>Converted code</h2>", f'<p class="file">{_esc(code.co_filename)}</p>',
           '<table class="converted">']
    for i, line in enumerate((ln.rstrip("\n")[indent:] for ln in lines), code.co_firstlineno):
        src = line_map.get(i) if line_map is not None else None
        link = "" if src is None else (f'<a href="#{_anchor(src.filename, src.lineno)}">'
                                        f"{_esc(os.path.basename(src.filename))}:{src.lineno}"
                                        "</a>")
        out.append(f'<tr class="generated"><td class="n">{i}</td><td class="code"><pre>'
                   f'{_esc(line)}</pre></td><td class="from">{link}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


# ---- the program, the cache, the timings ---------------------------------------------------

def _program_section(concrete, layout: str) -> str:
    if concrete is None:
        return "<h2>Program</h2><p>No program: the trace did not finish.</p>"
    program = concrete.main_program
    svg = report_svg.draw(program, [v.name for v in concrete.inputs],
                          [v.name for v in concrete.outputs], layout)
    how = "Graphviz dot" if layout != "layered" and report_svg.has_dot() else \
        "the layered layout of d2s"
    n = sum(1 for _ in program.ops())
    return (f"<h2>Program</h2><p>{n} ops, drawn by {how}. Blue: feeds; green: parameters; "
            "red: fetches; shaded: ops the executor fuses into one run; dashed boxes: cond/"
            f"while with their sub-blocks. Hover an op for its line.</p>"
            f'<div class="svg">{svg}</div><details><summary>The program as text</summary>'
            f"<pre>{_esc(program.to_string(with_origin=True))}</pre></details>")


def _cache_section(sf) -> str:
    rows = []
    for key, entry in sorted(sf.program_cache.items(),
                             key=lambda ke: getattr(ke[1], "trace_number", 0)):
        signature = ", ".join(describe_key_part(p) for p in key[:-1])
        checks = ", ".join(dict.fromkeys(guards.describe(g) for g in entry.guards)) or "none"
        number = getattr(entry, "trace_number", None)
        if number == 1 or getattr(entry, "previous_key", None) is None:
            why = "first call"
        else:
            changed = None if entry.changed is None else guards.describe(entry.changed)
            why = "; ".join(retrace_diffs(sf.spec.arg_names, entry.previous_key, key, changed)) or \
                "the argument structure changed"
        rows.append(f"<tr><td>{number or ''}</td><td>{_esc(signature)}</td>"
                    f"<td>{_esc(checks)}</td><td>{_esc(why)}</td></tr>")
    return ("<h2>Program cache</h2><table class='cache'><tr><th>trace</th><th>signature</th>"
            "<th>guards (checked each call)</th><th>why it was traced</th></tr>"
            + "".join(rows) + "</table>")


def _timings_section(t: Timings | None) -> str:
    if t is None:
        return "<h2>Timings</h2><p>Not measured: the trace did not finish.</p>"
    rows = "".join(f"<tr><td>{name.replace('_', ' ')}</td><td>{value * 1e3:.3f} ms</td></tr>"
                   for name, value in t._asdict().items())
    return (f"<h2>Timings</h2><table class='timings'>{rows}</table><p>{_esc(Timings.__doc__)}"
            "</p>")


def _legend() -> str:
    items = "".join(f'<span class="line {k}">{_esc(text)}</span> '
                    for k, (text, _) in KINDS.items())
    return f'<p class="legend">{items}</p>'


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


_STYLE = "\n".join(f".line.{k} {{ background: {colour}; }}" for k, (_, colour) in KINDS.items())
_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>d2s report: {title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; }} td {{ vertical-align: top; padding: 0 .5em; }}
pre {{ margin: 0; font-size: 13px; }} td.n {{ color: #999; text-align: right; }}
td.mark {{ font-size: 12px; color: #334; max-width: 40em; }}
.legend span {{ padding: 2px 6px; border: 1px solid #ccc; margin-right: 4px; }}
.cache td, .cache th, .timings td {{ border: 1px solid #ccc; padding: 2px 6px; }}
tr.line:hover {{ outline: 1px solid #66a; }} pre.error {{ background: #fbe3e3; padding: 6px; }}
.svg {{ overflow: auto; border: 1px solid #ddd; }} .svg text {{ font: 12px sans-serif; }}
"""
_HEAD += _STYLE.replace("{", "{{").replace("}", "}}") + "\n</style></head><body>"
