"""Golden tests of `.code`: the converted code is a contract (readable, no wrapper around
every name load). Regenerate with D2S_UPDATE_GOLDEN=1 after an intended change."""
import os

import golden_cases as cases
import pytest

import d2s
from d2s import transpile

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
NAMES = ["design_sketch", "early_return", "break_in_for", "logic_and_builtins"]


def _functions():
    return [(n, getattr(cases, n)) for n in NAMES] + [("counter_step", cases.Counter.step)]


@pytest.mark.parametrize("name, fn", _functions(), ids=[n for n, _ in _functions()])
def test_code_matches_golden(name, fn):
    code = transpile.converted_source(fn)
    path = os.path.join(GOLDEN, f"{name}.py")
    if os.environ.get("D2S_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(code + "\n")
    with open(path) as f:
        assert code + "\n" == f.read()


def test_code_property_is_the_same_text():
    assert d2s.to_static(cases.design_sketch).code == transpile.converted_source(
        cases.design_sketch)


def test_no_wrapper_around_name_loads():
    code = transpile.converted_source(cases.design_sketch)
    assert "_d2s.ld" not in code and "x * 2" in code and "y = y + 1" in code
