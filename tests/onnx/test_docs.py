"""The Python blocks of docs/onnx.md and the quantization section of docs/training.md run
(each written to a file first: d2s converts functions from their source file)."""
from __future__ import annotations

import os
import re
import runpy

import pytest
from onnx_harness import ort  # noqa: F401  (skips without the onnx extra)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _blocks(doc: str, section: str | None = None) -> list[str]:
    text = open(os.path.join(ROOT, "docs", doc)).read()
    if section is not None:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start:end if end != -1 else None]
    return re.findall(r"```python\n(.*?)```", text, re.S)


CASES = [("onnx.md", None, i) for i in range(len(_blocks("onnx.md")))]
CASES += [("training.md", "## Post-training quantization and int8 models", i)
          for i in range(len(_blocks("training.md",
                                     "## Post-training quantization and int8 models")))]


@pytest.mark.parametrize("doc, section, index", CASES)
def test_doc_block_runs(doc, section, index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / f"block{index}.py"
    path.write_text(_blocks(doc, section)[index])
    runpy.run_path(str(path), run_name="__main__")
