"""Every code block of README.md and docs/*.md runs, so the documentation cannot drift.

The rule, for whoever writes docs (simple on purpose):

- A fenced block tagged ```python is executed. The python blocks of one file run in order in
  one shared namespace (like a notebook), with a fresh temporary directory as the working
  directory; a block may use names an earlier block of the same file defined. A block made of
  `>>>` lines is run as a doctest instead (its shown output is checked).
- A python block whose first line is `# requires: NAME[, NAME...]` is skipped (reported as a
  skip, never as a pass) when one of those modules cannot be imported: optional extras such as
  `onnx`, `onnxruntime`, `mpi4py` or `cupy`.
- Blocks tagged anything else (```bash, ```sh, ```console, ```text) or not tagged at all are
  not executed: they are shell commands (installs, training runs, benchmarks) or sample
  output. The `d2s` commands they show are exercised by tests/d2s/test_d2s_cli.py. So an
  example you want checked must be a ```python block that really runs.

Each file is one test (`test_doc_file[docs/xyz.md]`), so a new doc is picked up by itself.
"""
import doctest
import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<tag>[^\n`]*)\n(?P<body>.*?)^(?P=indent)"
                   r"(?P=fence)\s*$", re.MULTILINE | re.DOTALL)
REQUIRES = re.compile(r"^#\s*requires:\s*(.+)$")


def blocks(text: str) -> list[tuple[str, int, str]]:
    """(tag, line number, code) for each fenced block."""
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 2
        indent = len(m.group("indent"))
        body = "\n".join(ln[indent:] for ln in m.group("body").splitlines())
        out.append((m.group("tag").strip().split(" ")[0].lower(), line, body))
    return out


def missing_modules(code: str) -> list[str]:
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    m = REQUIRES.match(first)
    if not m:
        return []
    names = [n.strip() for n in m.group(1).split(",") if n.strip()]
    return [n for n in names if importlib.util.find_spec(n) is None]


def test_the_rule_finds_blocks():
    sample = "a\n```python\nx = 1\n```\n\n```bash\nls\n```\n  ```python\n  y = 2\n  ```\n"
    assert blocks(sample) == [("python", 3, "x = 1"), ("bash", 7, "ls"), ("python", 10, "y = 2")]
    assert missing_modules("# requires: os, no_such_module_here\nx = 1") == [
        "no_such_module_here"]
    assert "README.md" in DOCS and "docs/debugging.md" in DOCS


@pytest.mark.parametrize("doc", DOCS)
def test_doc_file(doc, tmp_path, monkeypatch, capsys):
    path = os.path.join(ROOT, doc)
    with open(path, encoding="utf-8") as f:
        found = [b for b in blocks(f.read()) if b[0] == "python"]
    if not found:
        return  # no python block: nothing to run (shell and output blocks are not run)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(ROOT)
    # d2s converts from source, so the blocks live in a real .py file: each block at its own
    # line of the doc (other lines blank), so tracebacks and d2s's messages name doc lines
    script = tmp_path / (re.sub(r"\W", "_", doc) + ".py")
    lines = [""] * (max(line + code.count("\n") for _, line, code in found) + 1)
    for _, line, code in found:
        if code.lstrip().startswith(">>>"):
            continue  # (a doctest runs from its text; `>>>` lines would not parse as a module)
        for i, text in enumerate(code.splitlines()):
            lines[line - 1 + i] = text
    script.write_text("\n".join(lines) + "\n")
    import d2s
    namespace = {"__name__": "__doc_example__", "__file__": str(script)}
    skipped = []
    try:
        for _, line, code in found:
            lacking = missing_modules(code)
            if lacking:
                skipped.append(f"{doc}:{line} needs {', '.join(lacking)}")
                continue
            where = f"{doc}:{line}"
            if code.lstrip().startswith(">>>"):
                test = doctest.DocTestParser().get_doctest(code, namespace, where, path, line)
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
                runner.run(test, out=lambda s: None)
                assert runner.failures == 0, f"{where}: the doctest's output differs"
                continue
            exec(compile("\n" * (line - 1) + code, str(script), "exec"), namespace)  # noqa: S102
    finally:
        d2s.set_code_level(-1)  # a doc may switch these on; leave the next test as it was
        d2s.set_verbosity(0)
        d2s.enable_to_static(True)
    capsys.readouterr()
    if skipped:
        pytest.skip("; ".join(skipped))
