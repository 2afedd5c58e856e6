"""Code levels and verbosity: the "d2s" logger, each level, the env vars, the call winning."""
import logging
import os
import subprocess
import sys

import pytest

import d2s
from d2s import converters, logging_utils, transpile

N_PASSES = len(converters.PASSES)


def percent_and_branch(x, k):
    label = "%d%%" % k  # noqa: UP031  (program text with '%' must be logged as it is)
    if x.sum() > 0:
        y = x % 2
    else:
        y = x
    while k > 0:
        k -= 1
    return y, label


@pytest.fixture(autouse=True)
def _no_logging_settings(monkeypatch):
    monkeypatch.delenv(logging_utils.CODE_LEVEL_ENV, raising=False)
    monkeypatch.delenv(logging_utils.VERBOSITY_ENV, raising=False)
    logging_utils._SET.update(code=None, verbosity=None)
    yield
    logging_utils._SET.update(code=None, verbosity=None)


def d2s_messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "d2s"]


def converted_with_logging(caplog) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="d2s"):
        transpile.convert_source(percent_and_branch, N_PASSES)
    return d2s_messages(caplog)


def without_logging(level: int) -> str:
    saved = dict(logging_utils._SET)
    logging_utils._SET.update(code=(-1, False), verbosity=(0, False))
    try:
        return transpile.convert_source(percent_and_branch, level)
    finally:
        logging_utils._SET.update(saved)


@pytest.mark.parametrize("level", list(range(N_PASSES + 1)) + [100])
def test_code_level_logs_the_code_after_that_pass(caplog, level):
    d2s.set_code_level(level)
    messages = converted_with_logging(caplog)
    assert len(messages) == 1
    header, _, code = messages[0].partition(":\n")
    assert code == without_logging(min(level, N_PASSES))
    stage = "as parsed" if level == 0 else \
        f"after pass {min(level, N_PASSES)} ({converters.NAMES[min(level, N_PASSES) - 1]})"
    assert header.startswith("code of percent_and_branch (test_debug_logging.py:")
    assert header.endswith(stage)


def test_final_code_level_is_the_code_users_see(caplog):
    d2s.set_code_level()
    code = converted_with_logging(caplog)[0].partition(":\n")[2]
    assert code == d2s.to_static(percent_and_branch).code
    assert "_d2s.ifelse(" in code and "_d2s.percent('%d%%', k)" in code and "x % 2" in code


def test_nothing_is_logged_by_default(caplog):
    assert converted_with_logging(caplog) == []
    d2s.set_code_level(-1)
    assert converted_with_logging(caplog) == []


def test_env_vars_and_the_call_winning(caplog, monkeypatch):
    monkeypatch.setenv(logging_utils.CODE_LEVEL_ENV, "3")
    messages = converted_with_logging(caplog)
    assert len(messages) == 1 and "after pass 3 (break_continue)" in messages[0]
    d2s.set_code_level(1)  # the call wins over D2S_CODE_LEVEL
    messages = converted_with_logging(caplog)
    assert len(messages) == 1 and "after pass 1 (early_return)" in messages[0]
    monkeypatch.setenv(logging_utils.VERBOSITY_ENV, "2")
    d2s.set_code_level(-1)
    assert len(converted_with_logging(caplog)) == N_PASSES
    d2s.set_verbosity(0)  # the call wins over D2S_VERBOSITY
    assert converted_with_logging(caplog) == []


def test_bad_env_value_is_a_warning_not_a_crash(caplog, monkeypatch):
    monkeypatch.setenv(logging_utils.CODE_LEVEL_ENV, "all")
    logging_utils._WARNED.clear()
    warning = "d2s: ignoring D2S_CODE_LEVEL='all' (expected an integer)"
    assert converted_with_logging(caplog) == [warning]  # once, not once per pass


def test_verbosity_levels(caplog):
    import numpy as np

    import runtime as rt

    def fresh(x):  # a new code object per test run keeps the conversion cache out of the way
        return x * 2 if rt.mean(x) > 0 else x

    counts = {}
    for level in range(4):
        d2s.set_verbosity(level)
        transpile._CACHE.pop(fresh, None)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="d2s"):
            d2s.to_static(fresh)(rt.to_tensor(np.ones(3, "float32")))
        messages = d2s_messages(caplog)
        counts[level] = len(messages)
        if level >= 1:
            assert any(m.startswith("converting ") and "fresh" in m for m in messages)
            assert any(m.startswith("tracing ") and "(program 1)" in m for m in messages)
        if level >= 2:
            assert sum(m.startswith("pass ") for m in messages) == N_PASSES
    assert counts[0] == 0 < counts[1] < counts[2] <= counts[3]


def test_also_to_stdout_and_percent_text(caplog, capsys):
    d2s.set_code_level(100, also_to_stdout=True)
    messages = converted_with_logging(caplog)
    out, err = capsys.readouterr()
    assert messages[0] in out
    assert "_d2s.percent('%d%%', k)" in out and "Logging error" not in err


def test_a_handler_is_added_only_when_nothing_handles_d2s_records():
    code = ("import d2s, d2s.transpile as t\n"
            "def f(x):\n    return x + 1\n"
            "d2s.set_code_level(100)\nt.convert_source(f, 100)\n")
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "d2s_log_probe.py"), "w") as fh:
        fh.write(code)
        path = fh.name
    done = subprocess.run([sys.executable, path], check=False, capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                              os.path.dirname(os.path.abspath(__file__))))))
    assert done.returncode == 0, done.stderr
    assert "d2s: code of f (d2s_log_probe.py:2) after pass" in done.stderr
    assert "return x + 1" in done.stderr


def test_also_to_stdout_shows_each_code_once_in_a_terminal(tmp_path):
    """stdout and stderr together (what a terminal shows) hold each converted code once."""
    path = tmp_path / "d2s_once_probe.py"
    path.write_text("import d2s, runtime as rt\n"
                    "d2s.set_code_level(100, also_to_stdout=True)\n"
                    "@d2s.to_static\ndef f(x):\n    return x + 1\n"
                    "f(rt.ones([2])); f(rt.ones([3])); f(x=rt.ones([2]))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))  # this checkout's d2s
    done = subprocess.run([sys.executable, str(path)], check=False, text=True, timeout=120,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=root, env=env)
    assert done.returncode == 0, done.stdout
    assert done.stdout.count("code of f (d2s_once_probe.py:4) after pass") == 1, done.stdout
    assert done.stdout.count("return x + 1") == 1
