"""`origin.frame_line` (the line an op was built from, read once per op) gives what
`frame.f_lineno` gives, from a kept line table for long functions: reading `f_lineno` decodes
the line table from its start, so a function of n statements building n ops cost n squared."""
import itertools
import linecache
import sys

import numpy as np

import d2s
import runtime as rt
from runtime.program.origin import _LINE_TABLES, frame_line, source_of


def _long_function(n: int):
    lines = ["def long(x, seen):"]
    for i in range(n):
        lines.append(f"    x = x + {i % 5}  # statement {i}")
        if i % 7 == 0:
            lines += ["    if len(seen) < 10 ** 6:",
                      "        seen.append(line_here(sys._getframe()))"]
    lines.append("    return x")
    ns = {"line_here": lambda f: (frame_line(f), f.f_lineno), "sys": sys}
    exec(compile("\n".join(lines) + "\n", "<long test function>", "exec"), ns)  # noqa: S102
    return ns["long"]


def test_frame_line_matches_f_lineno_in_a_long_function():
    fn = _long_function(400)
    seen: list = []
    assert fn(0, seen) == sum(i % 5 for i in range(400))
    assert len(seen) == 58
    assert all(kept == read for kept, read in seen)
    assert len({line for line, _ in seen}) == 58  # distinct lines: not one cached answer
    assert id(fn.__code__) in _LINE_TABLES
    # one entry per run of instructions on one line, not per range the code object lists
    _, starts, lines = _LINE_TABLES[id(fn.__code__)]
    assert len(starts) == len(lines) <= 1 + len({n for _, _, n in fn.__code__.co_lines()}) * 2
    assert all(a != b for a, b in itertools.pairwise(lines))
    assert len(starts) < len(list(fn.__code__.co_lines())) / 2


def test_frame_line_under_a_tracer_reads_the_frame():
    fn = _long_function(200)
    seen: list = []

    def tracer(frame, event, arg):
        return tracer

    sys.settrace(tracer)
    try:
        fn(0, seen)
    finally:
        sys.settrace(None)
    assert seen and all(kept == read for kept, read in seen)


def test_ops_of_a_long_converted_function_name_their_lines():
    body = "\n".join(f"    y = y * 1.5 + {i}.0" for i in range(150))
    src = f"def many(y):\n{body}\n    return rt.log(y - 1e9)\n"
    filename = "<test-many-statements>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"rt": rt}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102
    static_fn = d2s.to_static(ns["many"])
    x = rt.to_tensor(np.ones([2], "float32"))
    program = static_fn.get_concrete_program(x).main_program
    ops = program.global_block().ops
    lines = [program.origin_of(op)[1] for op in ops if op.type == "add"]
    assert lines[:3] == [2, 3, 4] and lines[-1] == 151  # the user's own line numbers
    log = next(op for op in ops if op.type == "log")
    assert program.origin_of(log)[1] == 152
    assert "rt.log" in source_of(program.origin_of(log))
