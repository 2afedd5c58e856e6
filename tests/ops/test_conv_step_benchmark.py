"""benchmarks/conv_step.py: it prints one Markdown row per kernel and per step, and refuses to
time an older nn_conv.py whose results differ from the current one (timings never asserted)."""
import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NN_CONV = ROOT / "runtime/ops/nn_conv.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("conv_step_benchmark",
                                                  ROOT / "benchmarks/conv_step.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_rows_against_itself(capsys):
    bench = load_benchmark()
    bench.main(["--against", str(NN_CONV), "--repeat", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert len(rows) == 6, rows  # the header and five measurements
    names = ["`conv2d` kernel", "`conv2d_grad_input` kernel", "`conv2d_grad_filter` kernel",
             "block step, eager", "block step, to_static"]
    for row, name in zip(rows[1:], names):
        assert re.fullmatch(rf"\| {re.escape(name)} \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \|",
                            row), row
    # the current kernels are installed again afterwards
    assert bench.registry.OPS["conv2d"].kernel is bench.nn_conv._conv2d_kernel


def test_a_kernel_that_differs_is_not_timed(tmp_path):
    source = NN_CONV.read_text()
    line = "    return out.reshape((x.shape[0], o) + tuple(hw))\n"
    assert source.count(line) == 1
    wrong = tmp_path / "nn_conv.py"
    wrong.write_text(source.replace(line, line.replace("out.reshape", "2 * out.reshape")))
    bench = load_benchmark()
    with pytest.raises(AssertionError, match="Mismatched elements"):
        bench.main(["--against", str(wrong), "--repeat", "1"])
    assert bench.registry.OPS["conv2d"].kernel is bench.nn_conv._conv2d_kernel


def test_grad_input_benchmark_rows(capsys):
    """benchmarks/conv_grad_input.py: one row per case (values compared before timing), and
    the C kernels installed again afterwards."""
    spec = importlib.util.spec_from_file_location("conv_grad_input_benchmark",
                                                  ROOT / "benchmarks/conv_grad_input.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    installed = dict(bench.nn_conv.NATIVE_KERNELS)
    bench.main(["--quick"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(bench.QUICK), rows
    for row, case in zip(rows[1:], bench.QUICK):
        assert re.fullmatch(rf"\| {re.escape(case[0])} \| \d+\.\d{{3}} \| \d+\.\d{{3}} \| "
                            r"\d+\.\d\dx \|", row), row
    assert bench.nn_conv.NATIVE_KERNELS == installed
