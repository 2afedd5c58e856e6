"""The Python blocks of docs/training.md's AMP section run."""
from __future__ import annotations

import os
import re
import runpy

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTION = "## Automatic mixed precision"


def _blocks() -> list[str]:
    text = open(os.path.join(ROOT, "docs", "training.md")).read()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_amp_doc_block_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / f"block{index}.py"
    path.write_text(_blocks()[index])
    runpy.run_path(str(path), run_name="__main__")
