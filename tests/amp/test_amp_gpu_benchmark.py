"""`benchmarks/amp_gpu.py` (a step of `benchmarks/gpu_check.sh`): float32 vs float16 matmuls
and a converted MLP under `auto_cast(dtype='float16')`. Here it runs on `fake_cupy` (the GPU
code path: device arrays, synchronisation) and on NumPy; the speed it is for needs a GPU."""
import pathlib
import re
import sys
import warnings

import pytest

HERE = pathlib.Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent / "benchmarks")]

import amp_gpu  # noqa: E402
import fake_cupy  # noqa: E402


def _run(capsys, *argv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # float16 emulated on the CPU
        assert amp_gpu.main([*argv, "--size", "32", "--repeat", "1", "--number", "1"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("device", ["fake", "cpu"])
def test_table_rows_and_float16_close_to_float32(capsys, device):
    if device == "fake":
        with fake_cupy.installed():
            out = _run(capsys, "--device", "gpu")
        assert "| gpu" in out and "plain CuPy matmul [32, 32], float16" in out
    else:
        out = _run(capsys, "--device", "cpu")
        assert "plain NumPy matmul [32, 32], float32" in out
    assert "(output float16)" in out  # the converted MLP's matmuls ran in float16
    diff = float(re.search(r"max \|diff\| / max \|float32\| = ([0-9.e+-]+)", out).group(1))
    assert 0 < diff < 5e-3  # float16 rounding, not another computation
    assert re.search(r"float16 / float32 speed: plain matmul [0-9.]+x, converted MLP", out)


def test_without_a_gpu_it_says_so(capsys, monkeypatch):
    monkeypatch.setattr(amp_gpu.rt, "is_compiled_with_cuda", lambda: False)
    assert amp_gpu.main(["--device", "gpu"]) == 2
    assert "no usable CuPy + CUDA device" in capsys.readouterr().err
