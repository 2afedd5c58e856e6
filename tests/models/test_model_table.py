"""benchmarks/model_table.py (`d2s bench --models`): the table's rows and columns from a quick
run of the d2s side, the ratio columns from given cells, and the inputs both sides share
(timings themselves are never asserted)."""
import importlib.util
import pathlib
import re

import numpy as np

from d2s import cli, cli_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
NUMBER = r"\d+\.\d\d"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("model_table", ROOT / "benchmarks/model_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ")]


def test_quick_run_without_torch(capsys):
    bench = load_benchmark()
    assert bench.main(["--quick", "--threads", "1", "--only", "ResNet basic block,DeepFM"]) == 0
    out = capsys.readouterr().out
    assert "### 1 thread: ms per call (best of 1 rounds, process CPU time)" in out
    assert "(no --torch-python: the PyTorch columns are empty)" in out
    lines = table_lines(out)
    assert len(lines) == 1 + 2 * 3, lines  # the header, then train / infer 1 / infer 4 each
    assert lines[0].startswith("| model | step | batch | d2s eager | to_static | whole step |")
    expected = [("ResNet basic block", "train", 2), ("ResNet basic block", "infer", 1),
                ("ResNet basic block", "infer", 4), ("DeepFM", "train", 2),
                ("DeepFM", "infer", 1), ("DeepFM", "infer", 4)]
    for line, (name, task, batch) in zip(lines[1:], expected):
        # a training step has all three d2s columns; inference no whole step
        whole = NUMBER if task == "train" else "-"
        assert re.fullmatch(rf"\| {name} \| {task} \| {batch} \| {NUMBER} \| {NUMBER} "
                            rf"\| {whole} \| - \| - \| - \| - \|", line), line


def test_ratios_take_the_best_converted_column():
    bench = load_benchmark()
    args = bench.parse(["--only", "ResNet basic block", "--quick"])
    cells = {("ResNet basic block", "train", 2): {
                 "eager": 9.0, "to_static": 6.0, "whole_step": 3.0, "torch": 2.0,
                 "torch_compile": 4.0},
             ("ResNet basic block", "infer", 1): {
                 "eager": 1.0, "to_static": "fails: TypeError", "torch": 0.5}}
    lines = table_lines(bench.table(cells, args))
    assert lines[1] == ("| ResNet basic block | train | 2 | 9.00 | 6.00 | 3.00 | 2.00 | 4.00 "
                        "| 1.50x | 0.75x |")
    # nothing converted: no ratio; a row not measured at all is dashes
    assert lines[2] == ("| ResNet basic block | infer | 1 | 1.00 | fails: TypeError | - "
                        "| 0.50 | - | - | - |")
    assert lines[3] == "| ResNet basic block | infer | 4 | - | - | - | - | - | - | - |"


def test_both_sides_get_the_same_inputs():
    cases = load_benchmark().spec
    deepfm = next(c for c in cases.CASES if c["name"] == "DeepFM")
    (sparse, dense), labels = cases.make_arrays(deepfm, 5, quick=False)
    again, labels_again = cases.make_arrays(deepfm, 5, quick=False)
    np.testing.assert_array_equal(sparse, again[0])
    np.testing.assert_array_equal(labels, labels_again)
    assert sparse.shape == (5, 4) and sparse.dtype == np.int64 and sparse.max() < 4
    assert dense.shape == (5, 3) and dense.dtype == np.float32
    assert set(np.unique(labels)) <= {0.0, 1.0} and labels.dtype == np.float32
    assert cases.tasks(deepfm, quick=False) == [("train", 256), ("infer", 1), ("infer", 32)]


def test_d2s_bench_models_runs_the_table_with_the_torch_interpreter(monkeypatch, capsys):
    """`d2s bench --models --torch-python PATH [--quick]` runs benchmarks/model_table.py alone,
    handing it the interpreter (the script itself is run by the tests above)."""
    ran = []
    monkeypatch.setattr(cli_model.subprocess, "call", lambda cmd, **kw: ran.append(cmd) or 0)
    assert cli.main(["bench", "--models", "--torch-python", "/opt/torch/bin/python",
                     "--quick"]) == 0
    assert len(ran) == 1, ran
    script, *args = ran[0][1:]
    assert script.endswith("benchmarks/model_table.py")
    assert args == ["--quick", "--torch-python", "/opt/torch/bin/python"]
    assert "## model_table" in capsys.readouterr().out
