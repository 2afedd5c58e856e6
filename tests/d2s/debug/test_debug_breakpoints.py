"""pdb breakpoints set on the user's file and line (`b model.py:N`, as an IDE or a user at
the pdb prompt sets them) fire in converted code, in the generated file on the line that
shows the user's source; `breakpoint()` stops once per trace, also inside a tensor `while`
whose body is traced more than once; a call that reuses a program stops nowhere. Driven by
piped pdb commands, as a user types them."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

MODEL = '''\
import sys

import d2s
import runtime as rt


def helper(h):
    h = h * 3
    return h


@d2s.to_static
def forward(x):
    y = x * 2
    if rt.mean(y) > 0:
        y = helper(y)
    return y


@d2s.to_static
def looped(x):
    i = rt.zeros([], "int64")
    while i < 3:
        breakpoint()
        y = x * 2
        x = x + 1
        i = i + 1
    return x + y


if __name__ == "__main__":
    fn = looped if sys.argv[1:] == ["looped"] else forward
    print("result", fn(rt.ones([2])).numpy().tolist())
    print("again", fn(rt.ones([2])).numpy().tolist())
'''


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("bp") / "model.py"
    path.write_text(MODEL)
    return str(path)


def line_of(text: str) -> int:
    return MODEL.splitlines().index(text) + 1


def pdb_session(model: str, commands: list[str], *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONBREAKPOINT"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "pdb", model, *args],
                          input="\n".join(commands + ["q"]) + "\n", capture_output=True,
                          text=True, timeout=300, cwd=os.path.dirname(model), env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def stops(out: str) -> list[tuple[str, str]]:
    """(file, the source line shown) of each stop in a function (not the script's start)."""
    return re.findall(r"^(?:\(Pdb\) )*> (\S+)\(\d+\)\w+\(\)\n-> (.*)$", out, flags=re.M)


def test_breakpoints_on_user_lines_fire_in_converted_code(model):
    y_line, helper_line = line_of("    y = x * 2"), line_of("    h = h * 3")
    out = pdb_session(model, [f"b model.py:{y_line}", f"b model.py:{helper_line}", "c",
                              "p x", "c", "p h", "c"])
    seen = stops(out)
    assert [text for _, text in seen] == [f"y = x * 2  # model.py:{y_line}",
                                          f"h = h * 3  # model.py:{helper_line}"], out
    assert all(os.path.basename(os.path.dirname(f)).startswith("d2s_") for f, _ in seen)
    assert re.search(r"\(Pdb\) Variable\(%x: f32\[2\]\)", out)  # a traced value
    # the program then runs on every call without stopping (Python runs only while tracing)
    assert "result [6.0, 6.0]" in out and "again [6.0, 6.0]" in out
    assert out.index("again") < out.index("The program finished")


def test_breakpoint_builtin_stops_once_per_trace_in_a_tensor_while(model):
    out = pdb_session(model, ["c", "c"], "looped")
    seen = stops(out)
    line = line_of("        breakpoint()")
    assert [text for _, text in seen] == [f"y = x * 2  # model.py:{line + 1}"], out
    assert "result [10.0, 10.0]" in out and "again [10.0, 10.0]" in out
