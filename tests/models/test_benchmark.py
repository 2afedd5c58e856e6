"""benchmarks/models.py runs and prints one Markdown row per measured model (a smoke test; the
timings themselves are never asserted)."""
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_benchmark():
    spec = importlib.util.spec_from_file_location("zoo_benchmark", ROOT / "benchmarks/models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_rows(capsys):
    bench = load_benchmark()
    assert bench.main(["--only", "DeepFM,Seq2Seq beam", "--repeat", "1", "--target",
                       "0.001"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| model | batch |") and len(rows) == 3
    beam, deepfm = rows[1], rows[2]
    number = r"\d+\.\d\d"
    assert re.fullmatch(rf"\| DeepFM \| 256 \| {number} \| {number} \| {number}x \| {number} "
                        rf"\| {number} \| {number}x \|", deepfm), deepfm
    # Decoding has no training step: its train cells are dashes.
    assert beam.startswith("| Seq2Seq beam search") and beam.endswith("| - | - | - |")
