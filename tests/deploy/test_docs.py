"""The code blocks of docs/deployment.md and of the README's deployment section run, in order,
in a scratch folder (Python blocks share one namespace; in bash blocks `d2s ARGS` runs this
checkout's `d2s.cli.main(ARGS)`, what `python -m d2s ARGS` runs)."""
from __future__ import annotations

import os
import re
import shlex

import pytest

from d2s import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.S | re.M)


def blocks(path: str, section: str | None = None) -> list:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    if section is not None:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start:end if end >= 0 else None]
    return BLOCK.findall(text)


def run_blocks(found: list, folder) -> None:
    os.symlink(os.path.join(ROOT, "examples"), os.path.join(folder, "examples"))
    namespace = {"__name__": "__docs__"}
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for kind, code in found:
            if kind == "python":
                exec(compile(code, "<doc block>", "exec"), namespace)  # noqa: S102
                continue
            for line in code.strip().splitlines():
                args = shlex.split(line)
                assert args[0] == "d2s", line
                assert cli.main(args[1:]) == 0, line  # (in-process: a new Python costs ~3 s)
    finally:
        os.chdir(cwd)


def test_deployment_doc_blocks_run(tmp_path, capsys):
    found = blocks("docs/deployment.md")
    assert [k for k, _ in found].count("bash") >= 2 and len(found) >= 6
    run_blocks(found, tmp_path)
    out = capsys.readouterr().out
    assert "model.npz: the parameter file is 1000 bytes but its program (model.json) was " \
           "saved with" in out


def test_readme_deployment_blocks_run(tmp_path):
    found = blocks("README.md", "## Deploying a model")
    if not found:
        pytest.fail("README.md has no code blocks in '## Deploying a model'")
    run_blocks(found, tmp_path)
