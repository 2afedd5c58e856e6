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
