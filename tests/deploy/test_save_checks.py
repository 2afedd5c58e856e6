"""`d2s.save` writes nothing when the path cannot hold a model (empty, a folder, under a file,
in a place that cannot be written) or when the program fails the checks `d2s.load` makes (the
same functions run before the first byte is written)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import model_check
from runtime.program.model_file import ModelPathError


class Scale(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x) * 2.0


SPEC = [d2s.InputSpec([None, 3], "float32", "x")]


def _everything_under(folder) -> list:
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, files in os.walk(folder) for f in files)


@pytest.mark.parametrize("path, message", [
    ("", "the model path '' is empty"),
    (".", "is a folder; give a file name prefix"),
    ("models/", "is a folder; give a file name prefix"),
    ("existing", "is a folder; give a file name prefix"),
    ("notes.txt/model", "notes.txt' is a file, not a folder"),
])
def test_a_path_that_cannot_hold_a_model_is_refused_before_writing(tmp_path, monkeypatch,
                                                                    path, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing").mkdir()
    (tmp_path / "notes.txt").write_text("not a folder")
    before = _everything_under(tmp_path)
    with pytest.raises(ModelPathError, match=message):
        d2s.save(Scale().eval(), path, input_spec=SPEC)
    assert _everything_under(tmp_path) == before
    assert isinstance(ModelPathError(""), ValueError)


def test_a_place_that_cannot_be_written_is_refused(tmp_path):
    with pytest.raises(ModelPathError, match="cannot save the model at '/proc/d2s_h34/m'"):
        d2s.save(Scale().eval(), "/proc/d2s_h34/m", input_spec=SPEC)
    if os.geteuid() != 0:  # (root writes anywhere)
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(ModelPathError, match="is not writable"):
            d2s.save(Scale().eval(), str(locked / "m"), input_spec=SPEC)


def test_a_program_loading_would_refuse_is_not_written(tmp_path, monkeypatch):
    calls = []

    def refuse(program, feeds, fetches, max_result_bytes=None):
        calls.append(feeds)
        raise model_check.ModelFormatError("mul op: a check that fails")

    monkeypatch.setattr(model_check, "check", refuse)  # the loader's own check
    with pytest.raises(d2s.ModelFormatError, match=r"m\.json: not saved \(nothing was "
                                                    r"written\): .* would not load: mul op: a "
                                                    "check that fails$"):
        d2s.save(Scale().eval(), str(tmp_path / "m"), input_spec=SPEC)
    assert calls == [["x"]] and _everything_under(tmp_path) == []
    monkeypatch.undo()
    d2s.save(Scale().eval(), str(tmp_path / "m"), input_spec=SPEC)
    assert _everything_under(tmp_path) == ["m.json", "m.npz"]


def test_a_training_mode_batch_norm_program_saves_and_loads(tmp_path):
    rt.seed(0)
    bn = rt.nn.BatchNorm1D(3)
    d2s.save(bn, str(tmp_path / "bn"), input_spec=[d2s.InputSpec([None, 3])], training=True)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    got = d2s.load(str(tmp_path / "bn"))(rt.to_tensor(x)).numpy()
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)  # the batch's statistics
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
