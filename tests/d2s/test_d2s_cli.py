"""The `d2s` command line: every subcommand (`code`, `code --report`, `check`, `passes`,
`export`, `run`, `bench`, `demo`) on a function, a Layer class, a Layer whose `forward` is
decorated (the README's idiom), `Class.forward` targets and a module-level instance."""
import contextlib
import os
import re
import textwrap
import warnings

import numpy as np
import pytest

from d2s import cli, converters

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "golden_cases.py")

MODEL = '''\
import d2s
import runtime as rt


def f(x):
    if rt.mean(x) > 0:
        y = x * 2
    else:
        y = x - 1
    return y


class Net(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        if rt.mean(h) > 0:
            h = h * 2
        return h


class Decorated(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(4, 3)

    @d2s.to_static
    def forward(self, x):
        h = self.fc(x)
        if rt.mean(h) > 0:
            h = h * 2
        return h


net = Decorated()
'''
TARGETS = ["f", "Net", "Net.forward", "Decorated", "Decorated.forward", "net"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli_matrix") / "cli_model_matrix.py"
    path.write_text(MODEL)
    return str(path)


@pytest.mark.parametrize("name", TARGETS)
def test_code_on_every_kind_of_target(model_file, name, capsys):
    assert cli.main(["code", f"{model_file}::{name}"]) == 0
    out = capsys.readouterr().out
    assert "_d2s.ifelse(" in out and out.lstrip().startswith(("def f(", "def forward(self"))


@pytest.mark.parametrize("name", TARGETS)
def test_code_report_on_every_kind_of_target(model_file, name, capsys):
    assert cli.main(["code", f"{model_file}::{name}", "--report", "--spec", "float32[2,4]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Conversion report for ")
    assert "^ if: graph op (cond): " in out and "(f32[2," in out


@pytest.mark.parametrize("name", TARGETS)
def test_check_on_every_kind_of_target(model_file, name, capsys):
    with _no_warnings():
        assert cli.main(["check", f"{model_file}::{name}", "--spec", "float32[None,4]"]) == 0
    out = capsys.readouterr().out
    assert out.count(": agree") == 6 and out.rstrip().endswith("eager and static agree")


@pytest.mark.parametrize("name", TARGETS)
def test_export_then_run_on_every_kind_of_target(model_file, name, tmp_path, capsys):
    prefix = str(tmp_path / "model")
    assert cli.main(["export", f"{model_file}::{name}", "--spec", "float32[None,4]",
                     "-o", prefix]) == 0
    assert "inputs:" in capsys.readouterr().out
    x = np.linspace(-1, 1, 8, dtype="float32").reshape(2, 4)
    np.save(tmp_path / "x.npy", x)
    saved = str(tmp_path / "y.npz")
    import d2s
    model = d2s.load(prefix)
    assert cli.main(["run", prefix, "--input", f"{_input_name(model)}={tmp_path / 'x.npy'}",
                     "-o", saved]) == 0
    assert "output_0: float32[2,3]" in capsys.readouterr().out or name == "f"
    got = np.load(saved)["output_0"]
    expected = model(x)
    np.testing.assert_allclose(got, (expected[0] if isinstance(expected, list)
                                     else expected).numpy(), rtol=1e-6)
    if name == "f":
        np.testing.assert_allclose(got, x - 1)  # mean 0: the else branch
        x2 = np.abs(x) + 1
        np.save(tmp_path / "x2.npy", x2)
        assert cli.main(["run", prefix, "--input", f"{_input_name(model)}="
                         f"{tmp_path / 'x2.npy'}", "-o", saved]) == 0
        np.testing.assert_allclose(np.load(saved)["output_0"], x2 * 2)  # the other branch


def _input_name(model) -> str:
    from d2s.cli_model import _signature
    (name, _, _), = _signature(model)[0]
    return name


@contextlib.contextmanager
def _no_warnings():
    """d2s's own retrace warning (any warning) must not fire under `check`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_check_varying_sizes_of_a_decorated_function_does_not_warn(tmp_path, capsys):
    path = tmp_path / "cli_decorated_fn.py"
    path.write_text(textwrap.dedent('''\
        import d2s
        import runtime as rt


        @d2s.to_static
        def g(x):
            return rt.tanh(x) * 2
        '''))
    with _no_warnings():
        assert cli.main(["check", f"{path}::g", "--spec", "float32[None,3]",
                         "--draws", "12"]) == 0
    assert capsys.readouterr().out.count(": agree") == 12


def test_check_reports_a_function_that_fails_eagerly_as_a_usage_error(model_file, capsys):
    assert cli.main(["check", f"{model_file}::f", "--spec", "float32[2,4]", "--spec", "3"]) == 2
    captured = capsys.readouterr()
    assert "DISAGREE" not in captured.out and "the function raised eagerly" in captured.out
    assert "eager raised TypeError" in captured.out and "--spec" in captured.err


def test_report_without_specs_says_what_to_give(model_file, capsys):
    assert cli.main(["code", f"{model_file}::Decorated", "--report"]) == 2
    assert re.search(r"--spec.*add input_spec=\[\.\.\.\] to its @d2s.to_static",
                     capsys.readouterr().err)
    assert cli.main(["code", f"{model_file}::f", "--report"]) == 2
    assert re.search(r"--spec.*decorate it with", capsys.readouterr().err)


def test_code_prints_the_converted_function(capsys):
    assert cli.main(["code", f"{TARGET}::design_sketch"]) == 0
    out = capsys.readouterr().out
    with open(os.path.join(HERE, "golden", "design_sketch.py")) as f:
        assert out == f.read()


def test_code_levels(capsys):
    cli.main(["code", f"{TARGET}::early_return", "--level", "0"])
    assert "_retval" not in capsys.readouterr().out
    level = converters.NAMES.index("return_statements") + 1
    cli.main(["code", f"{TARGET}::early_return", "--level", str(level)])
    out = capsys.readouterr().out
    assert "_retval = x * 2" in out and "_d2s.ifelse" not in out


def test_code_of_a_method_and_bad_targets(capsys):
    cli.main(["code", f"{TARGET}::Counter.step"])
    assert "self.count = _self_count_1" in capsys.readouterr().out
    capsys.readouterr()
    assert cli.main(["code", "nofile.py::f"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert cli.main(["code", f"{TARGET}::Counter.nothing"]) == 2
    assert "no 'Counter.nothing'" in capsys.readouterr().err


def test_passes_lists_the_order(capsys):
    cli.main(["passes"])
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[1] for ln in lines] == converters.NAMES


def test_bench_refuses_an_unknown_benchmark(capsys):
    assert cli.main(["bench", "--only", "nothing"]) == 2
    assert "no benchmark 'nothing'" in capsys.readouterr().err


def test_demo_runs_the_packaged_demo(monkeypatch):
    import d2s.demo
    calls = []
    monkeypatch.setattr(d2s.demo, "main", lambda: calls.append(1) or 0)
    assert cli.main(["demo"]) == 0 and calls == [1]


def test_versions_match_the_distribution(capsys):
    import re

    import d2s
    import runtime
    root = os.path.dirname(os.path.dirname(HERE))
    with open(os.path.join(root, "pyproject.toml")) as f:
        version = re.search(r'^version = "([^"]+)"', f.read(), flags=re.MULTILINE).group(1)
    assert runtime.__version__ == d2s.__version__ == version
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"d2s {version}"
