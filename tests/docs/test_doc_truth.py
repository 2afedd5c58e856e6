"""What the docs state about the code is checked against the code, one test per kind of
statement that went stale once:

- install lines name the checkout (`pip install ".[onnx]"`): `d2s` on PyPI is an unrelated
  package, so no `install "d2s[...]"` anywhere;
- a pass named with its number ("pass 8 (loops)") is that pass of `d2s passes`;
- a default written in a signature (`GradScaler(init_loss_scaling=2.**16, ...)`) is the
  default of the callable it names;
- a Paddle name listed as missing in docs/paddle_compat.md is really missing from `runtime`;
- the distributed demo's command in docs/distributed.md runs (a few steps, two processes).
"""
import ast
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys

import pytest

import d2s
import runtime as rt
from d2s import converters

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))


def _read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def _sources():
    """README, docs and the Python files that print install hints."""
    yield from DOCS
    for top in ("d2s", "runtime", "benchmarks", "examples", "tests"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(".py"):
                    yield os.path.relpath(os.path.join(folder, f), ROOT)


def test_install_lines_name_the_checkout_not_pypi():
    stale = re.compile(r"""install\s+["']?d2s\[""")
    found = [f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
             for path in _sources() if path != os.path.relpath(__file__, ROOT)
             for text in [_read(path)] for m in stale.finditer(text)]
    assert found == [], "install the checkout (pip install \".[extra]\"), not d2s from PyPI"


PASS_REF = re.compile(r"\bpass(?:es)? (\d+) \((\w+)\)")


def test_pass_numbers_in_docs_name_the_right_pass():
    checked = 0
    for path in DOCS:
        for number, name in PASS_REF.findall(_read(path)):
            assert converters.NAMES[int(number) - 1] == name, (
                f"{path}: pass {number} is {converters.NAMES[int(number) - 1]!r} in "
                f"`d2s passes`, the doc says {name!r}")
            checked += 1
    assert checked >= 1


# ---- defaults ------------------------------------------------------------------------------

CALL = re.compile(r"`(?:(rt|d2s)\.)?((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\(([^`]*=[^`]*)\)`",
                  re.DOTALL)
MODULE = re.compile(r"`(rt(?:\.\w+)*)`")


def _resolve(root, dotted: str):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _documented_defaults(text: str):
    """(callable text, object, {argument: default text}) for each backticked signature with
    defaults, the callable looked up in the module the paragraph names (`rt.amp`: ...)."""
    for paragraph in re.split(r"\n\s*\n", text):
        modules = [_resolve(rt, m.group(1)[3:]) if m.group(1) != "rt" else rt
                   for m in MODULE.finditer(paragraph)]
        for m in CALL.finditer(paragraph):
            prefix, name, args = m.groups()
            roots = [d2s] if prefix == "d2s" else [rt] if prefix == "rt" else \
                [x for x in modules if x is not None] + [rt, d2s]
            found = next((o for o in (_resolve(r, name) for r in roots) if callable(o)), None)
            if found is None:
                continue
            if "..." in args:  # a call shown in use (`to_static(..., full_graph=False)`)
                continue
            try:
                tree = ast.parse(f"f({' '.join(args.split())})", mode="eval").body
            except SyntaxError:
                continue
            given = {k.arg: ast.unparse(k.value) for k in tree.keywords if k.arg is not None}
            yield name, found, [ast.unparse(a) for a in tree.args], given


def _value(text: str):
    try:
        return eval(text, {"__builtins__": {}}, {})  # (literals and 2.**16 only)
    except Exception:  # noqa: BLE001  (a name such as rt.float32: not compared)
        return inspect.Parameter.empty


def _same(documented, default) -> bool:
    """Equal, a list written for a tuple default (or the reverse) included."""
    if isinstance(documented, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(documented) == list(default)
    return type(documented) is type(default) and documented == default or \
        isinstance(default, float) and documented == default


def _mismatches(text: str, where: str) -> tuple[int, list[str]]:
    """(defaults compared, the documented defaults the code does not have) in `text`."""
    checked, wrong = 0, []
    for name, obj, positional, given in _documented_defaults(text):
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        if positional != list(params)[:len(positional)]:
            continue  # a call in use (`to_tensor(v, dtype="int64")`), not the signature
        for arg, written in given.items():
            p = params.get(arg)
            value = _value(written)
            if p is None or p.default is inspect.Parameter.empty or \
                    value is inspect.Parameter.empty:
                continue
            checked += 1
            if not _same(value, p.default):
                wrong.append(f"{where}: {name}({arg}={written}) but the code has "
                             f"{arg}={p.default!r}")
    return checked, wrong


def test_defaults_in_docs_match_the_signatures():
    checked, wrong = 0, []
    for path in ["docs/API.md", "docs/d2s.md", "docs/training.md", "README.md"]:
        n, bad = _mismatches(_read(path), path)
        checked, wrong = checked + n, wrong + bad
    assert wrong == []
    assert checked >= 20


def test_the_grad_scaler_defaults_are_the_documented_ones():
    api = _read("docs/API.md")
    [given] = [g for name, _, _, g in _documented_defaults(api) if name == "GradScaler"]
    assert _value(given["init_loss_scaling"]) == 2.0 ** 16
    assert given["incr_every_n_steps"] == "2000" and given["decr_every_n_nan_or_inf"] == "1"


def test_the_checker_catches_a_wrong_default():
    text = "`rt.amp`: `GradScaler(enable=True, init_loss_scaling=2.**15)`, `rt.zeros(dtype=1)`"
    checked, wrong = _mismatches(text, "x.md")
    assert checked == 3 and wrong == [
        "x.md: GradScaler(init_loss_scaling=2.0 ** 15) but the code has init_loss_scaling=65536.0",
        "x.md: zeros(dtype=1) but the code has dtype=None"]


# ---- the Paddle names listed missing -------------------------------------------------------

def _missing_section() -> str:
    text = _read("docs/paddle_compat.md")
    start = text.index("## Paddle names model code uses that are still missing")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_names_listed_missing_are_missing():
    section = _missing_section()
    table = [ln for ln in section.splitlines() if ln.startswith("| `paddle.")]
    names = [n for ln in table for n in re.findall(r"`paddle\.([\w.]+)`", ln.split("|")[1])]
    count = int(re.search(r"(\d+) are missing", section).group(1))
    assert len(names) == count
    present = [n for n in names if _resolve(rt, n) is not None]
    assert present == [], f"listed missing in docs/paddle_compat.md but present: {present}"


@pytest.mark.parametrize("name", ["DataParallel", "distributed.DataParallel"])
def test_data_parallel_is_present_as_in_paddle(name):
    assert inspect.isclass(_resolve(rt, name))


# ---- the distributed demo's command --------------------------------------------------------

def test_the_distributed_demo_command_of_the_docs_runs():
    """docs/distributed.md's `mpiexec -n 2 python -m examples.demo_distributed`, as a smoke
    run (a few steps on random digit-shaped images; the full run is a slow test in
    tests/distributed/test_demo_distributed.py)."""
    command = "mpiexec -n 2 python -m examples.demo_distributed"
    assert command in _read("docs/distributed.md")
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if importlib.util.find_spec("mpi4py") is None or mpiexec is None:
        pytest.skip("needs mpi4py and mpiexec: pip install -e '.[test]' installs both")
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([mpiexec, "-n", "2", sys.executable, "-m", "examples.demo_distributed",
                          "--epochs", "1", "--steps", "2", "--synthetic"], capture_output=True,
                         text=True, check=False, cwd=ROOT, env=env, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 process(es), engine 'mpi'" in out.stdout
    assert "largest parameter difference between ranks 0.0e+00" in out.stdout
