"""Converting an `elif` chain, or tensor `if`s nested in each other, costs work linear in the
chain's length: the `if` pass reads each branch it has converted once (an inner `if`'s
branches are the outer one's again, each `elif` one level deeper), and the functions of the
chain move out of each other (`pyct/hoist.py`) without asking each one again at every level.
Counts of calls, not times (the machine's load does not change them); the values are compared
with eager code and NumPy over inputs that take every branch of one program."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import transpile
from d2s.pyct import analysis, hoist

SMALL, FACTOR = 24, 4


def _module(folder, name: str, lines: list[str]):
    path = folder / f"{name}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _chain_lines(n: int) -> list[str]:
    """`pick(x, k)`: an elif chain of n tensor conditions, a helper and a closure in them."""
    lines = ["import runtime as rt", "", "def scale(v, by):", "    return v * by", "",
             f"def pick_{n}(x, k):", "    s = rt.mean(x)", "    offset = k * 0.5",
             "    y = x"]
    for i in range(n):
        lines += [f"    {'if' if i == 0 else 'elif'} s < {i - n // 2}:",
                  f"        y = scale(x, {i}.0) + offset"]
    lines += ["    else:", "        y = rt.tanh(x) - offset", "    return y"]
    return lines


def _nested_lines(n: int) -> list[str]:
    """`nest(x)`: tensor ifs nested n deep, each scaling the value it carries."""
    lines = ["import runtime as rt", "", f"def nest_{n}(x):", "    y = x"]
    for i in range(n):
        pad = "    " * (i + 1)
        lines += [f"{pad}if y.sum() > {i}.0:", f"{pad}    y = y * 0.5 + 1.0"]
    lines += ["    return y"]
    return lines


def _chain_reference(x: np.ndarray, k: float, n: int) -> np.ndarray:
    s = x.mean()
    for i in range(n):
        if s < i - n // 2:
            return x * float(i) + k * 0.5
    return np.tanh(x) - k * 0.5


def _nested_reference(x: np.ndarray, n: int) -> np.ndarray:
    y = x
    for i in range(n):
        if y.sum() > i:
            y = y * 0.5 + 1.0
        else:
            break
    return y


def _conversion_calls(fn) -> int:
    """The Python and C calls of converting `fn` from its `if` pass to its printed text."""
    count = [0]

    def counter(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    with transpile.deep_recursion():
        node, ctx, present = transpile._prepare(fn)
        ctx.present = set(present)
        for name, module in transpile._passes():
            if not ctx.present.intersection(module.HANDLES):
                continue
            counting = name == "ifelse"
            if counting:
                sys.setprofile(counter)
            try:
                if module.NEEDS_ANALYSIS:
                    analysis.analyze(node)
                node = module.transform(node, ctx)
            finally:
                sys.setprofile(None)
            ctx.present.update(module.CREATES)
        sys.setprofile(counter)
        try:
            transpile._finalize(node)  # (hoisting the chain's functions out of each other)
        finally:
            sys.setprofile(None)
    return count[0]


def _hoisting_calls(fn) -> int:
    """The Python and C calls of moving the generated functions of converted `fn` out of each
    other (`pyct/hoist.py`)."""
    count = [0]

    def counter(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    with transpile.deep_recursion():
        node, ctx, present = transpile._prepare(fn)
        node = transpile._run_passes(node, ctx, len(transpile._passes()), present,
                                     keep_folded=True)
        sys.setprofile(counter)
        try:
            hoist.hoist_generated(node)
        finally:
            sys.setprofile(None)
    return count[0]


@pytest.fixture(scope="module")
def chains(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chains")
    return {n: _module(folder, f"chain_{n}", _chain_lines(n)) for n in (SMALL, SMALL * FACTOR)}


@pytest.fixture(scope="module")
def nests(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nests")
    return {n: _module(folder, f"nest_{n}", _nested_lines(n)) for n in (SMALL, SMALL * FACTOR)}


def test_converting_an_elif_chain_grows_linearly_with_its_length(chains):
    small = _conversion_calls(getattr(chains[SMALL], f"pick_{SMALL}"))
    large = _conversion_calls(getattr(chains[SMALL * FACTOR], f"pick_{SMALL * FACTOR}"))
    assert large / small <= FACTOR * 1.5, (small, large)  # (was ~12x: each level walked all)


def test_hoisting_an_elif_chains_functions_grows_linearly_with_its_length(tmp_path):
    # (the defs of a chain of n move up past each of its n levels: asked one by one, each
    # level asked them all again; moved together they are asked as one)
    small, large = 50, 50 * FACTOR
    made = {n: _module(tmp_path, f"hoisted_{n}", _chain_lines(n)) for n in (small, large)}
    calls = {n: _hoisting_calls(getattr(made[n], f"pick_{n}")) for n in (small, large)}
    assert calls[large] / calls[small] <= FACTOR * 1.5, calls  # (was 8x)


def test_converting_nested_tensor_ifs_grows_linearly_with_their_depth(nests):
    small = _conversion_calls(getattr(nests[SMALL], f"nest_{SMALL}"))
    large = _conversion_calls(getattr(nests[SMALL * FACTOR], f"nest_{SMALL * FACTOR}"))
    assert large / small <= FACTOR * 1.5, (small, large)


def test_a_long_elif_chain_picks_every_branch_in_one_program(chains):
    n = SMALL * FACTOR
    eager = getattr(chains[n], f"pick_{n}")
    static = d2s.to_static(eager)
    for v, k in ((-100.0, 1.0), (-n / 2 + 0.5, 2.0), (-3.25, 0.0), (0.0, -1.0),
                 (n / 2 - 1.5, 3.0), (n * 1.0, 4.0)):
        x = np.full([2, 3], v, "float32")
        x[0, 0] += 0.25
        want = _chain_reference(x, k, n)
        kt = rt.to_tensor(np.float32(k))  # (a tensor: one program for every offset)
        got, ref = static(rt.to_tensor(x), kt), eager(rt.to_tensor(x), kt)
        assert type(got) is type(ref) and got.dtype == ref.dtype and got.stop_gradient
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    assert len(static.program_cache) == 1


def test_nested_tensor_ifs_take_every_depth_in_one_program_with_gradients(nests):
    n = SMALL * FACTOR
    eager = getattr(nests[n], f"nest_{n}")
    static = d2s.to_static(eager)
    for v in (-1.0, 0.3, 2.0, 40.0):
        x0 = np.linspace(v, v + 1.0, 6, dtype="float32").reshape(2, 3)
        xs, xe = (rt.to_tensor(x0, stop_gradient=False) for _ in range(2))
        got, ref = static(xs), eager(xe)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got.numpy(), _nested_reference(x0, n), rtol=1e-5)
        got.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(xs.grad.numpy(), xe.grad.numpy(), rtol=1e-6)
    assert len(static.program_cache) == 1
