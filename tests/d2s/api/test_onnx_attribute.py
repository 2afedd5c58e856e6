"""`d2s.onnx` is reachable after `import d2s` (as `paddle.onnx` after `import paddle`), and
importing d2s does not import the optional `onnx` package: that happens when an export runs."""
import subprocess
import sys

import d2s


def test_d2s_onnx_without_importing_onnx():
    code = ("import sys, d2s\n"
            "assert callable(d2s.onnx.export) and callable(d2s.onnx.to_model)\n"
            "assert 'onnx' not in sys.modules, sorted(m for m in sys.modules if 'onnx' in m)\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_d2s_onnx_is_the_export_module():
    import d2s.onnx as by_path
    assert d2s.onnx is by_path
    assert by_path.OPSET == 18
