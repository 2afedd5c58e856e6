"""Every code block of the "Semantics" section of docs/d2s.md runs (each written to its own
file first: converted functions need real source files)."""
from __future__ import annotations

import os
import re
import runpy

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))


def _blocks():
    with open(os.path.join(ROOT, "docs", "d2s.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("## Semantics", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_section_has_examples():
    assert len(_blocks()) >= 6


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_semantics_example_runs(index, tmp_path, capsys):
    path = tmp_path / f"example_{index}.py"
    path.write_text(_blocks()[index], encoding="utf-8")
    runpy.run_path(str(path), run_name="__main__")  # a real file: its functions convert
