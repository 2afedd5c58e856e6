"""`d2s export` / `d2s run` / `d2s bench`, run as `python -m d2s ...` subprocesses: a saved
model run from .npy inputs gives what the function gives eagerly; bad models and inputs exit 2
with a message naming what was expected."""
import contextlib
import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime as rt
from d2s import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = textwrap.dedent("""
    import numpy as np
    import runtime as rt

    def f(x, y):
        if rt.mean(x) > 0:
            z = rt.tanh(x) * 2.0 + y
        else:
            z = x - y * 3.0
        return z, rt.sum(z, axis=1)

    class Net(rt.nn.Layer):
        def __init__(self, hidden=3):
            super().__init__()
            self.fc = rt.nn.Linear(4, hidden)
            w = np.linspace(-1, 1, 4 * hidden).reshape(4, hidden).astype('float32')
            self.fc.weight.set_value(w)
            self.fc.bias.set_value(np.arange(hidden, dtype='float32'))

        def forward(self, x):
            return rt.nn.functional.relu(self.fc(x))

    net = Net(5)
""")


def d2s_process(*args):
    """`python -m d2s ARGS` in a fresh interpreter, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "d2s", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


def d2s(*args):
    """`d2s ARGS` in this process (what the subprocess tests show holds there too), to keep
    the tests fast."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(args))
    return subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue())


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "tiny.py"
    path.write_text(MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib
        mod = importlib.import_module("tiny")
        yield str(path), mod
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("tiny", None)


def run_saved(tmp_path, prefix, run=d2s, **inputs):
    args = []
    for name, a in inputs.items():
        np.save(tmp_path / f"{name}.npy", a)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    out = tmp_path / "out.npz"
    r = run("run", prefix, *args, "-o", str(out))
    assert r.returncode == 0, r.stderr
    with np.load(out, allow_pickle=False) as z:
        return [z[f"output_{i}"] for i in range(len(z.files))], r.stdout


def test_export_then_run_equals_eager_on_both_branches(tmp_path, module):
    path, mod = module
    prefix = str(tmp_path / "model" / "f")
    r = d2s_process("export", f"{path}::f", "--spec", "float32[None,6]", "--spec",
                    "float32[None,6]", "-o", prefix)
    assert r.returncode == 0, r.stderr
    assert "x: float32[-1,6]" in r.stdout and "y: float32[-1,6]" in r.stdout
    assert "output_1" in r.stdout and os.path.exists(prefix + ".json")
    rng = np.random.default_rng(1)
    # both sides of the `if`, two batch sizes; once as a user runs it, once in this process
    for sign, batch, run in ((1, 3, d2s_process), (-1, 5, d2s)):
        x = (sign * (np.abs(rng.standard_normal((batch, 6))) + 0.1)).astype("float32")
        y = rng.standard_normal((batch, 6)).astype("float32")
        got, out = run_saved(tmp_path, prefix, run, x=x, y=y)
        want = [t.numpy() for t in mod.f(rt.to_tensor(x), rt.to_tensor(y))]
        assert len(got) == 2 and f"output_0: float32[{batch},6]" in out
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("what", ["class", "instance"])
def test_export_a_layer_keeps_its_parameters(tmp_path, module, what):
    path, mod = module
    prefix = str(tmp_path / "net")
    target, extra, hidden = ((f"{path}::Net", ["--init", "hidden=4"], 4) if what == "class"
                             else (f"{path}::net", [], 5))
    r = d2s("export", target, "--spec", "float32[None,4]", "-o", prefix, *extra)
    assert r.returncode == 0, r.stderr
    assert "output_0 (" in r.stdout and f"float32[-1,{hidden}]" in r.stdout
    x = np.random.default_rng(2).standard_normal((7, 4)).astype("float32")
    (got,), _ = run_saved(tmp_path, prefix, x=x)
    np.testing.assert_allclose(got, mod.Net(hidden)(rt.to_tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
    assert (got == 0).any() and (got > 0).any()  # relu did cut something


def test_export_folds_batch_norm_unless_no_optimize(tmp_path):
    target = os.path.join(ROOT, "examples", "models", "resnet.py") + "::ResNet"
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype("float32")
    outs = {}
    for name, extra in (("folded", []), ("traced", ["--no-optimize"])):
        prefix = str(tmp_path / name)
        rt.seed(0)  # (the same fresh weights both times)
        r = d2s("export", target, "--spec", "float32[None,3,8,8]", "-o", prefix, *extra)
        assert r.returncode == 0, r.stderr
        with open(prefix + ".json", encoding="utf-8") as f:
            outs[name] = (f.read().count('"batch_norm"'), run_saved(tmp_path, prefix, x=x)[0])
    assert outs["folded"][0] == 0 and outs["traced"][0] > 0
    np.testing.assert_allclose(outs["folded"][1][0], outs["traced"][1][0], rtol=1e-5, atol=1e-6)


def test_run_random_inputs_follow_the_saved_specs(tmp_path, module):
    path, _ = module
    prefix = str(tmp_path / "f")
    assert d2s("export", f"{path}::f", "--spec", "float32[None,6]", "--spec",
               "float32[None,6]", "-o", prefix).returncode == 0
    r = d2s("run", prefix, "--random")
    assert r.returncode == 0, r.stderr
    assert "x=float32[2,6], y=float32[2,6]" in r.stdout
    assert "output_0: float32[2,6]" in r.stdout and "output_1: float32[2]" in r.stdout


def test_bad_models_and_inputs_exit_2_with_a_message(tmp_path, module):
    path, _ = module
    prefix = str(tmp_path / "f")
    assert d2s("export", f"{path}::f", "--spec", "float32[None,6]", "--spec",
               "float32[None,6]", "-o", prefix).returncode == 0
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "bad.npz").write_bytes(b"")
    r = d2s_process("run", str(tmp_path / "bad"), "--random")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"d2s run: cannot load the model {tmp_path / 'bad'}: ModelFormatError" in r.stderr
    assert "bad.json: not a saved program: the JSON is damaged" in r.stderr
    cases = []
    (tmp_path / "bad2.json").write_bytes((tmp_path / "f.json").read_bytes())
    (tmp_path / "bad2.npz").write_bytes(b"PK\x03\x04 truncated")
    cases.append((["run", str(tmp_path / "bad2"), "--random"], "cannot load the model"))
    cases.append((["run", str(tmp_path / "nothing"), "--random"], "no model at"))
    np.save(tmp_path / "wide.npy", np.zeros((2, 5), "float32"))
    np.save(tmp_path / "f64.npy", np.zeros((2, 6), "float64"))
    cases.append((["run", prefix, "--random", "--input", f"x={tmp_path / 'wide.npy'}"],
                  "input 'x': expected float32[-1,6] (-1: any size), got float32[2,5]"))
    cases.append((["run", prefix, "--random", "--input", f"y={tmp_path / 'f64.npy'}"],
                  "input 'y': expected float32[-1,6] (-1: any size), got float64[2,6]"))
    cases.append((["run", prefix, "--input", f"x={tmp_path / 'f64.npy'}".replace("f64", "no")],
                  "input 'x': cannot read"))
    cases.append((["run", prefix], "no value for input 'x'"))
    cases.append((["run", prefix, "--input", "z=a.npy"], "the model has no input 'z'"))
    for args, message in cases:
        r = d2s(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_export_rejects_literal_specs_and_bad_init(tmp_path, module):
    path, _ = module
    r = d2s("export", f"{path}::f", "--spec", "3", "-o", str(tmp_path / "m"))
    assert r.returncode == 2 and "tensors only" in r.stderr
    r = d2s("export", f"{path}::Net", "--spec", "float32[2,4]", "--init", "nope=(",
            "-o", str(tmp_path / "m"))
    assert r.returncode == 2 and "bad --init" in r.stderr


@pytest.mark.slow  # about 12 s: runs every benchmark script
def test_bench_quick_prints_a_table():
    r = d2s_process("bench", "--only", "eager_overhead", "--quick")
    assert r.returncode == 0, r.stderr
    assert "## eager_overhead" in r.stdout and "| plain NumPy |" in r.stdout
    assert "d2s bench: benchmark 1/1 - finished: eager_overhead - failed: none" in r.stdout
    r = d2s("bench", "--only", "nosuch")
    assert r.returncode == 2 and "no benchmark 'nosuch'" in r.stderr


def test_bench_without_the_source_tree_says_so(monkeypatch):
    from d2s import cli_model
    monkeypatch.setattr(cli_model, "benchmarks_dir", lambda: None)
    r = d2s("bench", "--quick")
    assert r.returncode == 2 and "not installed; run d2s bench from a checkout" in r.stderr
