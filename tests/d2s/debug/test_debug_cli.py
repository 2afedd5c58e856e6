"""The command line on real functions in temporary files: `d2s code` (levels, --report) and
`d2s check` (agreement, disagreements with the user's line, exit codes)."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

MODEL = '''\
import runtime as rt
import d2s

STEP = [0]


def good(x, n):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        y = x - 1
    for _ in range(n):
        y = y + 1
    return y


def stateful(x):
    STEP[0] += 1
    y = x * STEP[0]
    return y


def reads_value(x):
    signs = [{"sign": -1.0}, {"sign": 1.0}]
    return x * signs[x.sum().item() > 0]["sign"]


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 2)

    def forward(self, x):
        h = self.fc(x)
        if rt.mean(h) > 0:
            h = h * 2
        return h


@d2s.to_static(input_spec=[d2s.InputSpec([None, 3])])
def with_spec(x):
    while rt.sum(x) < 10:
        x = x + 1
    return x
'''


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "model.py"
    path.write_text(MODEL)
    return str(path)


def d2s_cli(*args):
    done = subprocess.run([sys.executable, "-m", "d2s", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, check=False)
    return done.returncode, done.stdout, done.stderr


def d2s_cli_here(*args):
    """`d2s_cli` in this process (a fresh `python -m d2s` costs an import of runtime and d2s
    each time): for commands whose result does not depend on a fresh process."""
    import contextlib
    import io

    from d2s import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(args))
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def line_of(text: str) -> int:
    return MODEL.splitlines().index(text) + 1


def test_code_prints_converted_code_at_each_level(model_file):
    rc, out, err = d2s_cli_here("code", f"{model_file}::good")
    assert rc == 0, err
    assert "_d2s.ifelse(" in out and "_d2s.for_loop(" in out
    rc, out0, _ = d2s_cli_here("code", f"{model_file}::good", "--level", "0")
    assert rc == 0 and out0.strip() == textwrap.dedent('''\
        def good(x, n):
            if rt.mean(x) > 0:
                y = x * 2
            else:
                y = x - 1
            for _ in range(n):
                y = y + 1
            return y''')


def test_code_report_with_specs_and_with_input_spec(model_file):
    rc, out, err = d2s_cli_here("code", f"{model_file}::good", "--report", "--spec", "float32[2,3]",
                           "--spec", "2")
    assert rc == 0, err
    lines = out.splitlines()
    i = lines.index(f"{line_of('    if rt.mean(x) > 0:'):5d} |     if rt.mean(x) > 0:")
    assert lines[i + 1] == "      |     ^ if: graph op (cond): x is a tensor (f32[2,3])"
    assert lines[lines.index(f"{line_of('    for _ in range(n):'):5d} |     for _ in range(n):")
                 + 1] == "      |     ^ for: plain Python, unrolled 2 times: over a range"
    rc, out, err = d2s_cli_here("code", f"{model_file}::with_spec", "--report")
    assert rc == 0, err
    assert "^ while: graph op (while): x is a tensor (f32[-1,3])" in out
    rc, out, err = d2s_cli_here("code", f"{model_file}::Net", "--report", "--spec", "float32[5,4]")
    assert rc == 0, err
    assert "^ if: graph op (cond): h is a tensor (f32[5,2])" in out
    rc, _, err = d2s_cli("code", f"{model_file}::good", "--report")  # (a user's command line)
    assert rc != 0 and "--spec" in err


def test_check_agrees_on_a_correct_function(model_file):
    rc, out, err = d2s_cli_here("check", f"{model_file}::good", "--spec", "float32[None,4]",
                           "--spec", "3")
    assert rc == 0, err + out
    assert out.count(": agree") == 6 and out.rstrip().endswith("eager and static agree")
    assert "(positive;" in out and "(negative;" in out  # both branches of the tensor if
    rc, out, err = d2s_cli_here("check", f"{model_file}::Net", "--spec", "float32[None,4]")
    assert rc == 0, err + out


def test_check_reports_a_value_baked_at_trace_time_with_its_line(model_file):
    rc, out, _ = d2s_cli("check", f"{model_file}::stateful", "--spec", "float32[3]")
    assert rc == 1
    assert "DISAGREE" in out and "values differ" in out
    assert f'File "{model_file}", line {line_of("    y = x * STEP[0]")}' in out
    assert "y = x * STEP[0]" in out


def test_check_reports_a_static_error_with_the_user_line(model_file):
    # (a Python list indexed by a computed value: a refusal at the line, exit status 2)
    rc, _, err = d2s_cli("check", f"{model_file}::reads_value", "--spec", "float32[3]")
    assert rc == 2
    assert "ConversionError" in err and "indexes a Python container" in err
    line = '    return x * signs[x.sum().item() > 0]["sign"]'
    assert f"model.py:{line_of(line)})" in err
    assert "docs/errors.md" in err


def test_draws_flip_signs_scales_and_varying_sizes():
    import numpy as np

    from d2s.check import DRAWS, draw, parse_spec
    rng = np.random.default_rng(0)
    spec = parse_spec("float32[None,16]")
    means = {DRAWS[k][0]: draw(spec, k, rng).numpy() for k in range(len(DRAWS))}
    assert means["positive"].min() > 0 and means["negative"].max() < 0
    assert abs(means["large"]).mean() > 10 * abs(means["normal"]).mean()
    assert len({v.shape[0] for v in means.values()}) > 3 and all(
        v.shape[1] == 16 for v in means.values())
    ints = [draw(parse_spec("int64[8]"), k, rng).numpy() for k in (1, 2)]
    assert ints[0].min() > 0 and ints[1].max() < 0 and ints[0].dtype == np.int64
    assert draw(parse_spec("bool[]"), 0, rng).dtype == "bool"
    assert parse_spec("'mean'").value == "mean"


def test_check_rejects_bad_specs(model_file):
    rc, _, err = d2s_cli("check", f"{model_file}::good", "--spec", "float32[4,")
    assert rc != 0 and "bad spec" in err
