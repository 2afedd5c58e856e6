"""pdb inside converted functions, driven by scripted input: it stops at trace time in the
generated file, `l` shows code annotated with the user's file:line, `p x` shows the traced
value's name, shape and dtype; `d2s.enable_to_static(False)` debugs the original code."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

SCRIPT = '''\
import pdb
import sys

import numpy as np

import d2s
import runtime as rt


@d2s.to_static
def forward(x):
    y = x * 2
    pdb.set_trace()
    if rt.mean(y) > 0:
        y = y + 1
    return y


@d2s.to_static
def with_breakpoint(x):
    z = x - 1
    breakpoint()
    return z


if __name__ == "__main__":
    if sys.argv[1] == "eager":
        d2s.enable_to_static(False)
    fn = with_breakpoint if sys.argv[1] == "breakpoint" else forward
    print("result", fn(rt.to_tensor(np.ones((2, 4), "float32"))).numpy().sum())
'''


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("pdb") / "model.py"
    path.write_text(SCRIPT)
    return str(path)


def debug(script, mode: str, commands: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONBREAKPOINT"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, script, mode], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def listed(out: str) -> list[str]:
    """The source lines pdb's `l`/`ll` printed, as (number, arrow, text)."""
    return re.findall(r"^(?:\(Pdb\) )?\s*(\d+)\s+(->)?\t(.*)$", out, flags=re.MULTILINE)


def test_set_trace_stops_in_the_generated_file_with_user_lines(script):
    out = debug(script, "static", ["ll", "p x", "p y", "c"])  # ll: the whole function
    stop = re.search(r"^> (\S+)\((\d+)\)forward\(\)$", out, flags=re.MULTILINE)
    assert stop and os.path.basename(stop.group(1)).startswith("forward_")
    assert os.path.basename(os.path.dirname(stop.group(1))).startswith("d2s_")  # generated
    lines = listed(out)
    numbers = [int(n) for n, _, _ in lines]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # a real file's lines
    assert [n for n, arrow, _ in lines if arrow] == [stop.group(2)]
    shown = "\n".join(text for _, _, text in lines)
    assert "y = x * 2  # model.py:12" in shown
    assert "pdb.set_trace()  # model.py:13" in shown
    assert "y = y + 1  # model.py:15" in shown
    assert "_d2s.ifelse(" in shown
    assert "Variable(%x: f32[2,4])" in out  # p x: name, shape, dtype
    assert re.search(r"Variable\(%\w+: f32\[2,4\]\)", out.split("Variable(%x")[1])
    assert "result 24.0" in out  # the program still runs after `c`


def test_breakpoint_builtin_stops_too(script):
    out = debug(script, "breakpoint", ["l", "p z", "c"])
    current = [t for _, arrow, t in listed(out) if arrow]
    assert current == ["        return z  # model.py:23"]
    assert re.search(r"\(Pdb\) Variable\(%\w+: f32\[2,4\]\)", out)
    assert "result 0.0" in out


def test_enable_to_static_false_debugs_the_original_code(script):
    out = debug(script, "eager", ["l", "p y", "c"])
    assert f"> {script}(14)forward()" in out
    current = [t for _, arrow, t in listed(out) if arrow]
    assert current == ["    if rt.mean(y) > 0:"]
    assert "Tensor(shape=[2, 4], dtype=float32" in out and "[[2., 2., 2., 2.]," in out
    assert "result 24.0" in out
