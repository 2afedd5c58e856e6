"""`d2s export --format onnx`: the same model as the d2s format, as PATH.onnx, and a clear
exit status 2 for a model ONNX export cannot express."""
from __future__ import annotations

import textwrap

import numpy as np
from onnx_harness import ort

import d2s
import runtime as rt
from d2s.cli import main

SOURCE = textwrap.dedent('''
    import runtime as rt

    class Net(rt.nn.Layer):
        def __init__(self, n=4):
            super().__init__()
            rt.seed(3)
            self.fc = rt.nn.Linear(n, 2)

        def forward(self, x):
            y = self.fc(x)
            if y.mean() > 0:
                y = y * 2
            return y

    def bad(x):
        return rt.masked_select(x, x > 0)
''')


def test_export_format_onnx_matches_the_d2s_format(tmp_path, capsys):
    path = tmp_path / "net.py"
    path.write_text(SOURCE)
    common = [f"{path}::Net", "--spec", "float32[None,4]", "--init", "4"]
    assert main(["export", *common, "-o", str(tmp_path / "out" / "net")]) == 0
    assert main(["export", *common, "--format", "onnx", "-o", str(tmp_path / "out" / "net")]) == 0
    assert "net.onnx" in capsys.readouterr().out
    sess = ort.InferenceSession(str(tmp_path / "out" / "net.onnx"),
                                providers=["CPUExecutionProvider"])
    loaded = d2s.load(str(tmp_path / "out" / "net"))
    for x in (np.ones((3, 4), "float32"), -np.ones((1, 4), "float32") * 5):
        np.testing.assert_allclose(sess.run(None, {"x": x})[0],
                                   loaded(rt.to_tensor(x)).numpy(), rtol=1e-6)


def test_export_format_onnx_unmapped_op_exits_2(tmp_path, capsys):
    path = tmp_path / "net.py"
    path.write_text(SOURCE)
    rc = main(["export", f"{path}::bad", "--spec", "float32[None]", "--format", "onnx", "-o",
               str(tmp_path / "bad")])
    err = capsys.readouterr().err
    assert rc == 2 and "op `masked_select`" in err and "net.py" in err
