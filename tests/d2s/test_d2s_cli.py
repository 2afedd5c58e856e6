"""The `d2s` command line: `code` (with levels) and `passes` (`demo` is tested with the
examples)."""
import os

import pytest

from d2s import cli, converters

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "golden_cases.py")


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
    with pytest.raises(SystemExit):
        cli.main(["code", "nofile.py::f"])


def test_passes_lists_the_order(capsys):
    cli.main(["passes"])
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[1] for ln in lines] == converters.NAMES
