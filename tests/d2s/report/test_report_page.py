"""The HTML conversion report (`d2s report`, `StaticFunction.report_html`): every source line
is on the page with what it became, every op of the program is in the drawing (both layouts),
converted lines link to source lines that exist, the cache and timings are filled in."""
import html
import inspect
import os
import re

import numpy as np
import pytest
import report_model

import d2s
import runtime as rt
from d2s import cli, report_svg

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "report_model.py")


def _rows(page: str) -> dict[int, tuple[str, str]]:
    """line number -> (class, the line's text) of the source table of `page`."""
    found = re.findall(r'<tr id="src-report_model_py-(\d+)" class="line ([\w-]+)" '
                       r'title="[^"]*"><td class="n">\d+</td><td class="code"><pre>(.*?)</pre>',
                       page)
    return {int(n): (kind, html.unescape(text)) for n, kind, text in found}


def _op_ids(program) -> list[str]:
    return [f"op_{b.idx}_{j}" for b in program.blocks for j in range(len(b.ops))]


@pytest.fixture(scope="module")
def page():
    f = report_model.branchy
    f(rt.ones([3]), 2)
    f(rt.ones([4]), 2)  # a second signature: a retrace the cache table explains
    return f.report_html(rt.to_tensor(np.full([3], -1.0, "float32")), 2, layout="layered")


def test_every_source_line_is_on_the_page_marked(page):
    lines, first = inspect.getsourcelines(report_model.branchy.dygraph_function)
    rows = _rows(page)
    assert len(rows) == len(lines)
    for k, text in enumerate(lines):
        assert rows[first + k][1] == text.rstrip("\n")
    by_text = {text.strip(): kind for kind, text in rows.values()}
    assert by_text["if rt.mean(x) > 0:"] == "graph"
    assert by_text["while i < rt.shape(y)[0]:"] == "graph"
    assert by_text["for _ in range(n):"] == "python" and by_text["i = 0"] == "python"
    assert by_text["y = x - 1"] == "ops" and by_text["return rt.tanh(y)"] == "ops"
    assert "graph op (cond): x is a tensor (f32[3])" in page
    assert "plain Python, unrolled 2 times" in page


def test_every_op_is_drawn_and_the_page_needs_no_network(page):
    program = report_model.branchy.get_concrete_program(rt.ones([3]), 2).main_program
    ids = _op_ids(program)
    assert len(ids) == sum(1 for _ in program.ops()) > 10
    for op_id in ids:
        assert f'id="{op_id}"' in page
    assert 'class="node feed" id="feed_x"' in page and 'class="node fetch"' in page
    assert page.count('class="node box"') == 2  # the cond and the while
    assert not re.search(r'(src|href)="(https?:)?//', page) and "<script" not in page


def test_converted_lines_link_to_source_lines_on_the_page(page):
    converted = page[page.index("<h2>Converted code</h2>"):page.index("<h2>Program</h2>")]
    targets = re.findall(r'<a href="#(src-[\w-]+)">', converted)
    assert len(targets) > 10
    for anchor in targets:
        assert f'<tr id="{anchor}"' in page
    assert "_d2s.ifelse(" in html.unescape(converted)


def test_cache_rows_say_why_each_program_was_traced(page):
    cache = page[page.index("<h2>Program cache</h2>"):page.index("<h2>Timings</h2>")]
    rows = re.findall(r"<tr><td>(\d+)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
                      cache)
    assert [r[0] for r in rows] == ["1", "2"]
    assert rows[0][1] == "tensor [3] float32, int 2" and rows[0][3] == "first call"
    assert html.unescape(rows[1][3]) == "argument 'x': tensor [3] float32 -> tensor [4] float32"


def test_timings_are_measured(page):
    found = dict(re.findall(r"<tr><td>([a-z ]+)</td><td>([0-9.]+) ms</td></tr>", page))
    assert list(found) == ["conversion", "trace", "compile", "first call", "steady call"]
    values = {k: float(v) for k, v in found.items()}
    assert values["first call"] > values["steady call"] > 0 and values["conversion"] > 0


@pytest.mark.parametrize("layout", ["layered", "dot"])
def test_both_layouts_draw_every_op(layout):
    if layout == "dot" and not report_svg.has_dot():
        pytest.skip("Graphviz `dot` is not installed (apt-get install graphviz)")
    concrete = report_model.branchy.get_concrete_program(rt.ones([5]), 3)
    program = concrete.main_program
    svg = report_svg.draw(program, [v.name for v in concrete.inputs],
                          [v.name for v in concrete.outputs], layout)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for op_id in _op_ids(program):
        assert f'id="{op_id}"' in svg
    labels = re.findall(r">(\w+)</text>", svg)
    for op in program.ops():
        assert op.type in labels


def test_dot_layout_missing_is_an_error_and_auto_falls_back(monkeypatch):
    concrete = report_model.wide.get_concrete_program(rt.ones([2, 2]))
    monkeypatch.setattr(report_svg.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        report_svg.draw(concrete.main_program, ["x"], [], "dot")
    svg = report_svg.draw(concrete.main_program, ["x"], [], "auto")
    assert 'class="node op" id="op_0_0"' in svg  # (our layout's markup)


def test_fused_runs_are_shaded():
    from runtime.program import fusion
    if fusion.mode() is None:
        pytest.skip("fusion is off (D2S_FUSION=0)")
    big = rt.ones([512, 256])  # 131072 elements: a run the executor fuses
    concrete = report_model.wide.get_concrete_program(big)
    svg = report_svg.draw(concrete.main_program, ["x"], [], "layered")
    fused = re.findall(r'class="node fused" id="op_0_(\d+)"', svg)
    assert len(fused) >= 3
    small = report_model.wide.get_concrete_program(rt.ones([2, 2]))
    assert "node fused" not in report_svg.draw(small.main_program, ["x"], [], "layered")


def test_a_refused_function_is_marked_at_its_line_with_the_reason():
    page = d2s.to_static(report_model.generator).report_html(rt.ones([2]))
    rows = _rows(page)
    refused = [n for n, (kind, _) in rows.items() if kind == "refused"]
    assert [rows[n][1].strip() for n in refused] == ["yield x * 2"]
    assert "ConversionError: d2s cannot convert generator: it uses a generator (yield)" in page
    assert "docs/errors.md" in page and "No program: the trace did not finish" in page


def test_cli_writes_the_page_for_a_layer_built_with_init(tmp_path, capsys):
    out = tmp_path / "pages" / "scaled.html"
    assert cli.main(["report", f"{MODEL}::Scaled", "--init", "4", "--init", "scale=3.0",
                     "--spec", "float32[None,4]", "-o", str(out), "--layout", "layered"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    page = out.read_text()
    rows = _rows(page)
    by_text = {text.strip(): kind for kind, text in rows.values()}
    assert by_text["if self.scale > 1:"] == "python"  # a Python float: decided while tracing
    assert by_text["y = y * self.scale"] == "ops"
    assert by_text["y = y - 1.0"] == "unreached"  # the Python branch the trace did not take
    assert re.search(r"checked before every call: [^<]*self\.scale", page)
    assert 'class="node param"' in page
    assert cli.main(["report", f"{MODEL}::Scaled", "--spec", "float32[2,4]", "-o",
                     str(out)]) == 2
    assert "--init" in capsys.readouterr().err
