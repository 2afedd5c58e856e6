"""The command line speaks in one line: what the user got wrong (a bad --spec, an unknown
dtype, a function d2s refuses, an error the function raises, a closed output pipe) is one line
on stderr and exit status 2, never a traceback unless D2S_TRACEBACK=1 asks for it; `d2s check`
says what it compared and where eager and static first differ."""
import os
import subprocess
import sys

import pytest

from d2s import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODEL = '''\
import runtime as rt


def double(x):
    return x * 2


def gen(x):
    yield x


def long_function(x):
{body}
    return x


def fails(x):
    return rt.matmul(x, x)


COUNT = [0]


def drifts(x):
    COUNT[0] += 1
    return x * COUNT[0]


class Head(rt.nn.Layer):
    def __init__(self, width, classes=3):
        super().__init__()
        self.fc = rt.nn.Linear(width, classes)

    def forward(self, x):
        return self.fc(x)
'''


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli_one_line") / "one_line_model.py"
    # 1000 lines of 200 characters: more than a pipe's buffer holds (64 KiB)
    body = "\n".join(f"    s{i} = '{'x' * 200}'" for i in range(1000))
    path.write_text(MODEL.format(body=body))
    return str(path)


def _one_line(capsys, *argv) -> str:
    assert cli.main(list(argv)) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.mark.parametrize("spec, says", [
    ("float[4]", "unknown dtype 'float'; expected one of float16, bfloat16, float32"),
    ("flaot32[4]", "(did you mean float32?)"),
    ("float32[4", "expected DTYPE[dims] like 'float32[4,16]'"),
    ("float32[four]", "each dim is a number, or None for one that varies"),
])
def test_a_bad_spec_is_one_line(model, capsys, spec, says):
    for command in ("check", "report"):
        extra = ["-o", os.devnull] if command == "report" else []
        line = _one_line(capsys, command, f"{model}::double", "--spec", spec, *extra)
        assert line.startswith(f"d2s: bad spec {spec!r}") and says in line


def test_a_generator_function_is_one_line_at_its_line(model, capsys):
    for argv in (["code", f"{model}::gen"], ["check", f"{model}::gen", "--spec", "float32[2]"]):
        line = _one_line(capsys, *argv)
        assert line.startswith(f"d2s {argv[0]}: ConversionError: d2s cannot convert gen: it "
                               "uses a generator (yield)")
        assert "(one_line_model.py:9)" in line and "D2S_TRACEBACK=1" in line


def test_an_error_of_the_function_is_one_line_and_the_traceback_on_request(model, capsys,
                                                                           monkeypatch):
    argv = ["report", f"{model}::fails", "--spec", "float32[2,3]", "-o", os.devnull]
    line = _one_line(capsys, "code", "--report", *argv[1:4])
    assert line.startswith("d2s code: OpError: matmul") and "(one_line_model.py:" in line
    monkeypatch.setenv("D2S_TRACEBACK", "1")
    with pytest.raises(ValueError, match="matmul"):
        cli.main(["code", "--report", *argv[1:4]])


def test_a_closed_pipe_is_one_line(model):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "d2s", "code", f"{model}::long_function"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 2
    assert first.startswith(b"def long_function(x):")
    assert err.strip() == "d2s code: the output was closed early (broken pipe)"


def test_check_says_what_it_compared_and_the_first_differing_leaf(model, capsys):
    assert cli.main(["check", f"{model}::double", "--spec", "float32[None,3]", "--draws",
                     "2"]) == 0
    out = capsys.readouterr().out
    assert "draw 1 (normal; inputs [3, 3]): agree (1 output: float32[3, 3])" in out
    assert cli.main(["check", f"{model}::drifts", "--spec", "float32[2]", "--draws", "3"]) == 1
    out = capsys.readouterr().out
    assert "DISAGREE\n  output 0: 2 of 2 values differ; at [0] eager gave" in out
    assert "The static value comes from:" in out


def test_init_builds_the_layer_for_code_check_and_report(model, capsys, tmp_path):
    assert cli.main(["check", f"{model}::Head", "--init", "4", "--init", "classes=5",
                     "--spec", "float32[None,4]", "--draws", "2"]) == 0
    assert "agree (1 output: float32[3, 5])" in capsys.readouterr().out
    assert cli.main(["code", f"{model}::Head", "--init", "4", "--report", "--spec",
                     "float32[2,4]"]) == 0
    assert "Conversion report for forward" in capsys.readouterr().out
    line = _one_line(capsys, "check", f"{model}::Head", "--spec", "float32[2,4]")
    assert "cannot build Head()" in line and "--init" in line
    line = _one_line(capsys, "check", f"{model}::Head", "--init", "width=", "--spec",
                     "float32[2,4]")
    assert "bad --init 'width='" in line
