"""Code that Python compiles converts: long `elif` chains, very long expressions; generated
code nests no deeper than the user's."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

N_BRANCHES = 100


def _module(folder, name, lines):
    path = folder / f"{name}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deep")
    lines = ["import runtime as rt", "", "def chain(x):", "    s = rt.mean(x)"]
    for k in range(N_BRANCHES):
        lines += [f"    {'if' if k == 0 else 'elif'} s < {k - 50}:", f"        y = x * {k}"]
    lines += ["    else:", "        y = x * 1000", "    return y", "",
              "def long_sum(x):", "    return " + " + ".join(f"x * {k % 7}" for k in range(2000)),
              "", "def nested(x):", "    return " + "(" * 150 + "x" + " + 1)" * 150]
    return _module(folder, "deep_user_code", lines)


def _chain_reference(x):
    s = x.mean()
    for k in range(N_BRANCHES):
        if s < k - 50:
            return x * k
    return x * 1000


def test_a_chain_of_100_elifs_converts_and_picks_every_branch_in_one_program(deep):
    f = d2s.to_static(deep.chain)
    for v in (-100.0, -20.0, 0.0, 30.0, 49.5, 60.0):
        x = np.full([2], v, "float32")
        np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(), _chain_reference(x))
    assert len(f.program_cache) == 1
    depth = max((len(line) - len(line.lstrip())) // 4 for line in f.code.splitlines())
    assert depth <= 3  # the user's chain is 2 levels deep: the generated code stays flat


def test_gradients_flow_through_the_deep_chain(deep):
    f = d2s.to_static(deep.chain)
    x0 = np.array([-20.0, -21.0], "float32")
    x = rt.to_tensor(x0, stop_gradient=False)
    (f(x) ** 2).sum().backward()
    expected = numeric_grad(lambda a: (_chain_reference(a) ** 2).sum(), x0.astype("float64"))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-3)


def test_a_sum_of_2000_terms_converts(deep):
    f = d2s.to_static(deep.long_sum)
    x = np.arange(3, dtype="float32")
    expected = sum(x * (k % 7) for k in range(2000))
    np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(), expected, rtol=1e-5)
    assert f.code.count(" * ") == 2000  # printing it recurses 2,000 deep too


def test_150_nested_parentheses_convert(deep):
    f = d2s.to_static(deep.nested)
    np.testing.assert_allclose(f(rt.zeros([2])).numpy(), [150, 150])


def _nested_ifs(depth: int) -> list[str]:
    """`def nested_ifs(x)`: `depth` tensor `if`s, each inside the one before."""
    lines = ["def nested_ifs(x):"]
    for d in range(depth):
        pad = "    " * (d + 1)
        lines += [f"{pad}x = x * 1.5 - {d % 3}.0", f"{pad}if x.sum() > {d % 5}.0:"]
    return lines + ["    " * (depth + 1) + "x = -x", "    return x"]


def _nested_reference(x, depth: int):
    for d in range(depth):
        x = x * 1.5 - d % 3
        if not x.sum() > d % 5:
            return x
    return -x


def _deepest_python_compiles() -> int:
    depth = 120
    while True:
        try:
            compile("\n".join(_nested_ifs(depth)) + "\n", "<probe>", "exec")
            return depth
        except (IndentationError, SyntaxError):
            depth -= 1


def _check_nested_ifs(folder, depth: int) -> None:
    lines = _nested_ifs(depth)
    f = d2s.to_static(_module(folder, f"nested_ifs_{depth}", lines).nested_ifs)
    # each input leaves the nest at another level (the last one reaches the innermost `if`)
    for v in (-1.0, 0.5, 0.9, 1.2, 2.0, 3.0):
        x = np.full([4], v, "float32")
        np.testing.assert_allclose(f(rt.to_tensor(x)).numpy(), _nested_reference(x, depth),
                                   rtol=1e-5)
    assert len(f.program_cache) == 1

    def indent(text_lines):
        return max((len(s) - len(s.lstrip())) // 4 for s in text_lines if s.strip())

    # each converted `if` nests its branch functions no deeper than the user's branches
    assert indent(f.code.splitlines()) == indent(lines) == depth + 1


def test_tensor_ifs_nested_40_deep_convert_and_take_every_depth(tmp_path):
    _check_nested_ifs(tmp_path, 40)


@pytest.mark.slow
def test_tensor_ifs_nested_as_deep_as_python_compiles_convert(tmp_path):
    # Python's tokenizer stops at 100 levels of indentation; the generated module wraps the
    # function in one more level, so the deepest code is compiled from its tree
    depth = _deepest_python_compiles()
    assert depth >= 97
    _check_nested_ifs(tmp_path, depth)
