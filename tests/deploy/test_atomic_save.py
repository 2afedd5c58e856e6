"""A save killed part-way (SIGKILL of a subprocess) never leaves a model that loads with the
wrong content: killed while the parameter file is being written, the previous model still loads
with its own output and nothing partial is under the final names; killed between the two
renames, loading refuses the mixed pair with ModelFormatError. The kill point is made exact by
a writer that stops (and says so) after some bytes, replaced in the subprocess only."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import d2s
import runtime as rt

from . import damage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import numpy as np, runtime as rt, d2s
    from runtime.program import model_file
    from tests.deploy.damage import Gate

    stage = {stage!r}
    if stage == "params":
        write = model_file._write_parameters

        class Stalling:  # writes, then stops for good after 600 bytes
            def __init__(self, f):
                self.f, self.n = f, 0

            def write(self, b):
                out = self.f.write(b)
                self.n += len(b)
                if self.n > 600:
                    self.f.flush()
                    print("PARTIAL", flush=True)
                    time.sleep(120)
                return out

            def __getattr__(self, name):
                return getattr(self.f, name)

        model_file._write_parameters = lambda f, arrays: write(Stalling(f), arrays)
    elif stage == "between":
        def stop():
            print("BETWEEN", flush=True)
            time.sleep(120)
        model_file._between_renames = stop
    rt.seed(1)
    model = Gate()
    model.eval()
    with rt.no_grad():
        model.fc.weight.set_value(model.fc.weight.numpy() + 1.0)
    d2s.save(model, {prefix!r}, input_spec=[d2s.InputSpec([None, 4], "float32")])
    print("DONE", flush=True)
""")


def _save_in_child(prefix: str, stage: str) -> str:
    """Run the child; kill it with SIGKILL when it reports `stage`'s stop. Its last line."""
    code = CHILD.format(root=ROOT, stage=stage, prefix=prefix)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         cwd=ROOT)
    try:
        line = p.stdout.readline().strip()
        if line in ("PARTIAL", "BETWEEN"):
            os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
    return line


def _files(folder) -> dict:
    return {n: damage.read(os.path.join(folder, n)) for n in sorted(os.listdir(folder))}


def test_a_save_killed_while_writing_parameters_leaves_the_old_model(tmp_path):
    prefix = str(tmp_path / "model")
    inputs, expected = damage.save_gate(prefix)
    before = _files(tmp_path)
    assert _save_in_child(prefix, "params") == "PARTIAL"
    after = _files(tmp_path)
    for name in ("model.json", "model.npz"):
        assert after[name] == before[name]
    partial = [n for n in after if n not in before]
    assert partial and all(n.startswith(".model.npz.tmp-") for n in partial)
    assert len(after[partial[0]]) >= 512  # the child really had written part of it
    assert damage.outcome(prefix, inputs, expected) == "same"


def test_a_save_killed_between_its_renames_is_refused_at_load(tmp_path):
    prefix = str(tmp_path / "model")
    inputs, expected = damage.save_gate(prefix)
    before = _files(tmp_path)
    assert _save_in_child(prefix, "between") == "BETWEEN"
    after = _files(tmp_path)
    assert after["model.json"] == before["model.json"]
    assert after["model.npz"] != before["model.npz"]  # the new parameters are in place
    with pytest.raises(d2s.ModelFormatError, match=r"model\.npz: .*from another save"):
        d2s.load(prefix)
    damage.save_gate(prefix)  # saving again repairs it
    assert damage.outcome(prefix, inputs, expected) == "same"


def test_save_creates_folders_and_is_reproducible(tmp_path):
    prefix = str(tmp_path / "new" / "deeper" / "model")
    inputs, expected = damage.save_gate(prefix)
    model = damage.Gate().eval()
    spec = [d2s.InputSpec([None, 4], "float32")]
    d2s.save(model, prefix, input_spec=spec)
    first = _files(tmp_path / "new" / "deeper")
    d2s.save(model, prefix, input_spec=spec)
    assert _files(tmp_path / "new" / "deeper") == first  # same model, same bytes, no temps
    assert sorted(first) == ["model.json", "model.npz"]
    with pytest.raises(ValueError, match="is a folder; give a file name prefix"):
        d2s.save(damage.Gate().eval(), str(tmp_path / "folder") + os.sep,
                 input_spec=[d2s.InputSpec([None, 4], "float32")])
    live = model(*[rt.to_tensor(a) for a in inputs]).numpy()
    np.testing.assert_array_equal(damage._call(d2s.load(prefix), inputs)[0], live)
