"""StaticFunction.report(): each construct marked by what it became while tracing, and why."""
import logging
import os

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import logging_utils

FLAG = rt.to_tensor(np.array(True))  # an eager Tensor whose truth is read while tracing


def helper(h, k):
    out = []
    for i in range(k):
        out.append(h * i)
    return out


def forward(x, n):
    if rt.mean(x) > 0 and rt.max(x) < 10:
        y = x * 2
    else:
        y = -x
    i = 0
    acc = []
    while i < n:
        y = y + 1
        acc.append(y)
        i += 1
    assert rt.min(y) > -100, "too small"
    print("y is", y)
    hs = helper(y, 3)
    if isinstance(n, int) and n > 100:
        y = y * 0
    return y + hs[-1]


def baked(x):
    if FLAG:
        x = x + 1
    return x


def line_of(fn_text: str) -> int:
    with open(__file__) as f:
        lines = f.read().splitlines()
    return lines.index(fn_text) + 1


def decisions(rep, text):
    return [d.text() for d in rep.decisions.get((os.path.abspath(__file__), line_of(text)), [])]


def x24(v=1.0):
    return rt.to_tensor(np.full((2, 4), v, "float32"))


def test_tensor_predicates_become_graph_ops_and_say_which_value_was_a_tensor():
    rep = d2s.to_static(forward).report(x24(), rt.to_tensor(np.array(3, "int64")))
    assert decisions(rep, "    if rt.mean(x) > 0 and rt.max(x) < 10:") == [
        "and: graph op (cond, short-circuit kept): x is a tensor (f32[2,4])",
        "if: graph op (cond): x is a tensor (f32[2,4])"]
    assert decisions(rep, "    while i < n:") == [
        "while: graph op (while): n is a tensor (i64[])",
        "list: tensor array: acc changes in a loop whose condition is a tensor"]
    assert decisions(rep, "        acc.append(y)") == [
        "list: tensor array (appended to at run time)"]
    assert decisions(rep, '    assert rt.min(y) > -100, "too small"') == [
        "assert: graph op (assert, checked at run time): y is a tensor (f32[2,4])"]
    assert decisions(rep, '    print("y is", y)') == [
        "print: graph op (print, at run time): y is a tensor (f32[2,4])"]
    assert decisions(rep, "    for i in range(k):") == [
        "for: plain Python, unrolled 3 times: over a range"]
    assert decisions(rep, "        out.append(h * i)") == ["list: Python list"]
    text = str(rep)
    assert text.startswith("Conversion report for forward (test_debug_report.py:")
    assert "Conversion report for helper (test_debug_report.py:" in text
    # the Python `and` short-circuits on the int check: the tensor test is never reached
    assert decisions(rep, "    if isinstance(n, int) and n > 100:") == [
        "and: plain Python: the value is a Python bool",
        "if: plain Python: the condition is a Python bool"]


def test_python_values_stay_python_and_unrolled_counts_are_exact():
    rep = d2s.to_static(forward).report(x24(), 4)
    assert decisions(rep, "    while i < n:") == [
        "while: plain Python, unrolled 4 times: the condition is a Python value"]
    assert decisions(rep, "        acc.append(y)") == ["list: Python list"]


def test_an_eager_tensor_condition_is_reported_as_baked_in():
    rep = d2s.to_static(baked).report(x24())
    assert decisions(rep, "    if FLAG:") == [
        ("if: plain Python: the condition is an eager Tensor: its value while tracing is baked "
         "into the program")]


def test_report_lines_show_the_source_and_unreached_constructs():
    def branchy(x, flag):
        if flag:  # noqa: SIM102  (two constructs, reported separately)
            if rt.mean(x) > 0:
                x = x * 2
        return x

    text = str(d2s.to_static(branchy).report(x24(), False))
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.endswith("if rt.mean(x) > 0:"))
    assert lines[i + 1].endswith("^ if: not reached while tracing")
    j = next(k for k, ln in enumerate(lines) if "    if flag:" in ln)
    assert "^ if: plain Python: the condition is a Python bool" in lines[j + 1]


def test_report_without_arguments_uses_the_latest_trace_or_input_spec():
    sf = d2s.to_static(baked)
    with pytest.raises(RuntimeError, match="has not been traced yet"):
        sf.report()
    sf(x24())
    assert "baked" in str(sf.report())
    spec = d2s.to_static(forward, input_spec=[d2s.InputSpec([None, 4]),
                                               d2s.InputSpec([], "int64")])
    assert "graph op (while)" in str(spec.report())


def test_verbosity_3_logs_each_decision(caplog):
    logging_utils._SET["verbosity"] = (3, False)
    try:
        with caplog.at_level(logging.INFO, logger="d2s"):
            d2s.to_static(baked).report(x24())
    finally:
        logging_utils._SET["verbosity"] = None
    assert any(r.getMessage().startswith("test_debug_report.py:") and "baked" in r.getMessage()
               for r in caplog.records)


def test_a_frame_with_hundreds_of_locals_reports_the_value_without_copying_them():
    # Before Python 3.13, reading a frame's locals copies all of them: a function with
    # thousands of locals and a tensor `if` on each block would trace in quadratic time, so
    # such frames give the value's type instead of the names on the line.
    import linecache
    import sys
    lines = ["def wide(x):"] + [f"    v{i} = x * {i}.0" for i in range(300)]
    lines += ["    if (v7 + v9).mean() > 0:", "        x = x + v1", "    return x"]
    src = "\n".join(lines) + "\n"
    filename = "<d2s-test-wide-frame>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {}
    exec(compile(src, filename, "exec"), scope)  # noqa: S102  (source generated above)
    static = d2s.to_static(scope["wide"])
    for v in (1.0, -1.0):  # each branch: the converted call agrees with eager
        np.testing.assert_allclose(static(x24(v)).numpy(), scope["wide"](x24(v)).numpy())
    rep = static.report(x24())
    found = [d.text() for d in rep.decisions[(filename, 302)]]
    named = "v7 (f32[2,4]), v9 (f32[2,4]) are tensors"
    reason = named if sys.version_info >= (3, 13) else "the value is a tensor (b1[])"
    assert found == [f"if: graph op (cond): {reason}"]
