"""A Layer is saved (d2s.save, d2s.onnx.export, `d2s export`) as an inference model: traced in
eval mode, whatever mode training left it in, with one warning naming the switch, and every
sublayer's own mode put back afterwards; `training=True` / `--train` keeps training mode. The
command line's `check` and `code --report` compare a Layer in eval mode (`--train`: training
mode with seeded randomness) and build it with `--init`."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import d2s
import runtime as rt
import d2s.onnx
from d2s import cli

from .head_model import Head

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HEAD = os.path.join(ROOT, "tests", "deploy", "head_model.py") + "::Head"


def trained_head(p=0.5):
    """A Head after two converted training steps: in training mode, running statistics
    moved away from their initial values."""
    rt.seed(0)
    model = d2s.to_static(Head(p=p))
    opt = rt.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    rng = np.random.default_rng(0)
    for _ in range(2):
        loss = rt.mean(model(rt.to_tensor(rng.standard_normal((8, 4)).astype("float32"))))
        loss.backward()
        opt.step()
        opt.clear_grad()
    return model


def eval_reference(model, x: np.ndarray) -> np.ndarray:
    """NumPy: Linear, BatchNorm on its running statistics, ReLU; Dropout is the identity."""
    w, b = model.fc.weight.numpy(), model.fc.bias.numpy()
    bn = model.bn
    h = x @ w + b
    h = (h - bn._mean.numpy()) / np.sqrt(bn._variance.numpy() + bn._epsilon)
    return np.maximum(h * bn.weight.numpy() + bn.bias.numpy(), 0)


def test_saving_a_training_layer_saves_its_inference_program(tmp_path):
    model = trained_head()
    model.bn.eval()  # a sublayer in its own mode: put back as it was
    x = np.random.default_rng(1).standard_normal((3, 4)).astype("float32")
    with pytest.warns(UserWarning, match="Head is in training mode; it is traced in eval") as w:
        d2s.save(model, str(tmp_path / "head"))
    assert len([m for m in w if "training mode" in str(m.message)]) == 1
    assert os.path.basename(w[0].filename) == "test_save_mode.py"  # the user's line
    assert [m.training for m in (model, model.fc, model.bn, model.drop)] == [
        True, True, False, True]
    loaded = d2s.load(str(tmp_path / "head"))
    first, second = loaded(rt.to_tensor(x)).numpy(), loaded(rt.to_tensor(x)).numpy()
    np.testing.assert_array_equal(first, second)  # no random Dropout in the saved model
    np.testing.assert_allclose(first, eval_reference(model, x), rtol=1e-5, atol=1e-6)
    model.eval()
    np.testing.assert_allclose(first, model(rt.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_a_layer_in_eval_mode_saves_without_a_warning(tmp_path):
    model = trained_head()
    model(rt.ones([2, 4]))  # the latest call is a training one: saving traces again
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d2s.save(model, str(tmp_path / "head"))
    x = np.linspace(-1, 1, 8, dtype="float32").reshape(2, 4)
    np.testing.assert_allclose(d2s.load(str(tmp_path / "head"))(rt.to_tensor(x)).numpy(),
                               eval_reference(model, x), rtol=1e-5, atol=1e-6)


def test_training_true_keeps_training_mode(tmp_path):
    rt.seed(0)
    model = d2s.to_static(rt.nn.Sequential(rt.nn.Linear(4, 64), rt.nn.Dropout(0.5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d2s.save(model, str(tmp_path / "drop"), input_spec=[d2s.InputSpec([None, 4])],
                 training=True)
    assert model.training
    loaded = d2s.load(str(tmp_path / "drop"))
    x = rt.ones([2, 4])
    a, b = loaded(x).numpy(), loaded(x).numpy()
    assert (a == 0).any() and not np.array_equal(a, b)  # Dropout still draws


def test_onnx_export_is_in_eval_mode_too(tmp_path):
    onnx = pytest.importorskip("onnx")  # the optional extra
    ort = pytest.importorskip("onnxruntime")
    model = trained_head()
    with pytest.warns(UserWarning, match=r"d2s\.onnx\.export: Head is in training mode"):
        path = d2s.onnx.export(model, str(tmp_path / "head"),
                               input_spec=[d2s.InputSpec([None, 4], "float32", "x")])
    assert model.training and onnx.load(path) is not None
    x = np.random.default_rng(2).standard_normal((5, 4)).astype("float32")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got, = sess.run(None, {sess.get_inputs()[0].name: x})
    np.testing.assert_allclose(got, eval_reference(model, x), rtol=1e-5, atol=1e-6)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "d2s", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


def test_cli_export_is_eval_by_default_and_train_keeps_training(tmp_path):
    target = HEAD
    spec = ["--spec", "float32[None,8]", "--init", "8", "--init", "p=0.9"]
    for mode in ([], ["--train"]):
        out = str(tmp_path / ("train" if mode else "eval") / "head")
        assert cli.main(["export", target, *spec, "-o", out, *mode]) == 0
    x = rt.to_tensor(np.random.default_rng(3).standard_normal((3, 8)).astype("float32"))
    ev = d2s.load(str(tmp_path / "eval" / "head"))
    np.testing.assert_array_equal(ev(x).numpy(), ev(x).numpy())
    assert list(ev.program().global_block().vars[ev.feed_names[0]].shape) == [-1, 8]
    tr = d2s.load(str(tmp_path / "train" / "head"))
    assert not np.array_equal(tr(x).numpy(), tr(x).numpy())  # p=0.9 Dropout, batch stats


def test_cli_check_compares_eval_mode_and_train_is_seeded(capsys):
    check = ["check", HEAD, "--spec", "float32[4,6]", "--draws", "2"]
    assert cli.main([*check, "--init", "width=6"]) == 0
    out = capsys.readouterr().out
    assert "(eval mode)" in out and "eager and static agree" in out
    assert cli.main([*check, "--init", "6", "--train"]) == 0  # Dropout draws the same
    out = capsys.readouterr().out
    assert "(training mode, seeded)" in out and "eager and static agree" in out
    ran = _cli(*check, "--init", "width=")  # (a user's command line, in a fresh process)
    assert ran.returncode != 0 and "bad --init 'width='" in ran.stderr


def test_cli_report_takes_init_and_reports_eval_mode(tmp_path, capsys):
    assert cli.main(["code", HEAD, "--report", "--spec",
                     "float32[2,6]", "--init", "width=6"]) == 0
    assert "forward" in capsys.readouterr().out
