"""`benchmarks/gpu_check.sh` in its dry run (`GPU_CHECK_DRY_RUN=1`), so that the one GPU check
cannot rot while no GPU is lent: its kernel step (`benchmarks/gpu_kernels.py --dry-run`) runs
every generated GPU kernel on the fake CuPy, compiled from its very text by
`tests/cuda_host.py`, checks it against NumPy and writes the timing tables; the other steps'
scripts must exist."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests")]
import cuda_host
import gpu_kernels

CHECKS = ["loop kernel: if + while, float32[4, 16], mean > 0",
          "loop kernel: if + while, float32[4, 16], mean < 0",
          "loop kernel: if + while, float64[300], mean > 0",
          "loop kernel: if + while, float64[300], mean < 0",
          "loop kernel: recurrent matmul, 0 trips", "loop kernel: recurrent matmul, 1 trips",
          "loop kernel: recurrent matmul, 10 trips", "fused chain: GELU", "softmax kernel",
          "LayerNorm kernel", "BatchNorm + ReLU kernel: forward",
          "BatchNorm + ReLU kernel: input gradient", "BatchNorm + ReLU kernel: weight gradient",
          "BatchNorm + ReLU kernel: bias gradient",
          "converted BatchNorm + ReLU: the CUDA kernels chosen",
          "converted BatchNorm + ReLU: forward",
          "converted BatchNorm + ReLU: input gradient",
          "converted BatchNorm + ReLU: conv weight gradient",
          "converted BatchNorm + ReLU: BatchNorm weight gradient",
          "conv2d forward (cuDNN where present)",
          "conv2d input gradient (cuDNN where present)",
          "conv2d weight gradient (cuDNN where present)"]
TABLES = ["if + while, f32[4, 16]", "GELU, f32[8, 16]", "softmax, f32[2, 2, 3, 40]",
          "layer_norm, f32[2, 3, 40]", "ResNet basic block step, [2, 16, 6, 6]",
          "Transformer encoder layer step, [2, 4, 32]"]


@pytest.mark.slow
@pytest.mark.skipif(cuda_host.COMPILER is None, reason="no C++ compiler")
def test_the_dry_run_checks_every_kernel_and_writes_every_table(tmp_path):
    env = dict(os.environ, GPU_CHECK_DRY_RUN="1", PYTHON=sys.executable)
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), str(tmp_path)],
                       capture_output=True, text=True, timeout=300, env=env, check=False)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    report = (tmp_path / "gpu_kernels.md").read_text()
    rows = [ln.strip("| ").split(" | ") for ln in report.splitlines()
            if ln.startswith("| ") and ln.endswith((" yes |", " NO |"))]
    assert [row[0] for row in rows] == CHECKS
    assert all(row[2] == "yes" for row in rows), report
    for title in TABLES:
        assert f"## {title}, gpu:0, ms per call" in report, title
    summary = (tmp_path / "summary.txt").read_text()
    assert "overall rc=0" in summary and "gpu kernels (dry run): rc=0" in summary
    for step in ("pytest -m gpu", "benchmark cuda_graph", "benchmark gpu_conv",
                 "benchmark amp_gpu"):
        assert f"{step}: dry run, not run" in summary
    assert "missing" not in r.stdout + summary
    assert len(list(tmp_path.iterdir())) <= 8


def test_a_kernel_check_fails_on_a_wrong_value_or_when_the_kernel_did_not_run():
    results = []
    gpu_kernels._check("close", np.ones(3), np.ones(3) + 1e-9, 1e-6, 0, results)
    gpu_kernels._check("far", np.ones(3), np.full(3, 1.1), 1e-6, 0, results)
    gpu_kernels._check("not launched", np.ones(3), np.ones(3), 0, 0, results, kernels=False)
    gpu_kernels._check("shape", np.ones(3), np.ones((1, 3)), 0, 0, results)
    assert [(n, ok) for n, _, ok in results] == [("close", True), ("far", False),
                                                 ("not launched", False), ("shape", False)]


def test_a_check_that_raises_is_a_failed_row_and_the_rest_still_run(monkeypatch, capsys):
    def compile_error(dry, rng, out):
        raise RuntimeError("NVRTC_ERROR_COMPILATION")

    def passing(dry, rng, out):
        out.append(("passing", 0.0, True))

    monkeypatch.setattr(gpu_kernels, "CHECKS", (compile_error, passing))
    monkeypatch.setattr(gpu_kernels, "WORKLOADS", ())
    assert gpu_kernels.main(["--dry-run"]) == 1
    out, err = capsys.readouterr()
    assert "| compile_error: RuntimeError: NVRTC_ERROR_COMPILATION | nan | NO |" in out
    assert "| passing | 0 | yes |" in out and "FAILED: compile_error" in err
