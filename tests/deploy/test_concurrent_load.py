"""A load while another process saves the same model returns the old or the new model, never
an error: the writer saves two models in turn for a few seconds while this process loads and
calls the model as fast as it can. (Run as `python -m tests.deploy.test_concurrent_load` it
prints the failure rate with and without the loader's re-read of a mixed pair.)"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

import d2s
import runtime as rt
from runtime.program import model_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECONDS = 3.0

WRITER = textwrap.dedent("""
    import sys, time
    import runtime as rt, d2s
    prefix, seconds = sys.argv[1], float(sys.argv[2])
    spec = [d2s.InputSpec([None, 4], "float32", "x")]
    models = []
    for k in (1.0, 2.0):  # y = k * sum(x): the answer says which model ran
        layer = rt.nn.Linear(4, 1, bias_attr=False)
        layer.weight.set_value(rt.full([4, 1], k))
        models.append(d2s.to_static(layer.eval()))
    d2s.save(models[0], prefix, input_spec=spec)
    print("ready", flush=True)
    end, saves = time.monotonic() + seconds, 0
    while time.monotonic() < end or saves < 3:  # a loaded machine still makes three saves
        d2s.save(models[saves % 2 - 1], prefix, input_spec=spec)
        saves += 1
    print("saves", saves, flush=True)
""")


def stress(folder: str, seconds: float = SECONDS, load=d2s.load) -> tuple[int, list, int]:
    """(loads, the errors of failed loads, saves) while a writer process saves over the
    model."""
    prefix = os.path.join(folder, "model")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, prefix, str(seconds)], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        x = rt.to_tensor(np.ones((2, 4), "float32"))
        loads, failures = 0, []
        while writer.poll() is None:
            try:
                y = load(prefix)(x).numpy()
            except d2s.ModelFormatError as e:
                failures.append(str(e))
            else:
                assert y.tolist() in ([[4.0], [4.0]], [[8.0], [8.0]]), y  # old or new
            loads += 1
        saves = int(writer.stdout.read().split()[-1])
    finally:
        writer.kill()
        writer.wait(timeout=30)
    return loads, failures, saves


def test_loads_during_saves_never_fail(tmp_path):
    loads, failures, saves = stress(str(tmp_path))
    assert saves >= 3 and loads >= 3
    assert not failures, f"{len(failures)} of {loads} loads failed during {saves} saves: " \
                         f"{failures[0]}"


def _load_without_reread(prefix):
    program, feeds, fetches, structure = model_file._load_once(prefix)
    return d2s.io.TranslatedLayer(program, feeds, fetches, structure)


if __name__ == "__main__":
    import tempfile
    for name, load in (("one read (before)", _load_without_reread), ("d2s.load", d2s.load)):
        loads, failures, saves = stress(tempfile.mkdtemp(), 5.0, load)
        print(f"{name}: {len(failures)} of {loads} loads failed "
              f"({100 * len(failures) / loads:.1f}%) during {saves} saves", flush=True)
