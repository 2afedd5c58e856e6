"""rt.save / rt.load: nested state dicts round-trip exactly, files are plain .npz without
pickle, and bad files fail with clear errors."""
from __future__ import annotations

import zipfile

import ml_dtypes
import numpy as np
import pytest

import runtime as rt


def _state():
    return {
        "model": {"fc.weight": rt.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
                  "fc.bias": rt.Parameter(np.ones(3, np.float32), name="fc_b"),
                  "steps": rt.to_tensor(np.int64(7))},
        "opt": {"lr": 0.01, "LR_Scheduler": {"last_epoch": 3, "last_lr": 1e-3}},
        "half": rt.to_tensor(np.array([1.5, -2.25], np.float16)),
        "bf16": rt.to_tensor(np.array([1.5, 3.0], ml_dtypes.bfloat16)),
        "mask": rt.to_tensor(np.array([True, False])),
        "history": [1, 2.5, "three", None, True],
        "pair": (np.arange(3, dtype=np.int32), np.float32(2.5)),
        7: "int key",
    }


def test_round_trip(tmp_path):
    path = tmp_path / "sub" / "ckpt.pdparams"
    src = _state()
    rt.save(src, path)
    got = rt.load(path)
    assert set(got) == set(src)
    for key in ("fc.weight", "fc.bias", "steps"):
        t = got["model"][key]
        assert isinstance(t, rt.Tensor)
        assert t.dtype == src["model"][key].dtype and t.shape == src["model"][key].shape
        np.testing.assert_array_equal(t.numpy(), src["model"][key].numpy())
    assert got["model"]["fc.bias"].name == "fc_b"
    assert got["opt"] == src["opt"]
    assert got["half"].dtype == "float16" and got["bf16"].dtype == "bfloat16"
    np.testing.assert_array_equal(got["bf16"].numpy().astype(np.float32), [1.5, 3.0])
    assert got["mask"].dtype == "bool"
    assert got["history"] == [1, 2.5, "three", None, True]
    assert isinstance(got["pair"], tuple) and got["pair"][0].dtype == np.int32
    assert got["pair"][1] == np.float32(2.5) and got[7] == "int key"
    as_numpy = rt.load(path, return_numpy=True)
    assert isinstance(as_numpy["model"]["fc.weight"], np.ndarray)


def test_file_is_plain_npz_without_pickle(tmp_path):
    path = tmp_path / "m.pdparams"
    rt.save(_state(), path)
    assert path.exists() and not (tmp_path / "m.pdparams.npz").exists()
    with np.load(path, allow_pickle=False) as z:  # would raise if anything needed pickle
        arrays = {k: z[k] for k in z.files}
    assert all(a.dtype != object for a in arrays.values())
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            assert b"\x80\x04" not in zf.read(name)[:2]  # no pickle protocol header


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        rt.load(tmp_path / "nope.pdparams")
    junk = tmp_path / "junk.pdparams"
    junk.write_bytes(b"definitely not a zip file")
    with pytest.raises(ValueError, match="not a valid file written by rt.save"):
        rt.load(junk)
    good = tmp_path / "good.pdparams"
    rt.save({"w": rt.ones([100])}, good)
    truncated = tmp_path / "trunc.pdparams"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ValueError, match="not a valid file"):
        rt.load(truncated)
    other = tmp_path / "other.npz"
    np.savez(other, a=np.ones(3))
    with pytest.raises(ValueError, match="not a valid file"):
        rt.load(other)


def test_unsaveable_objects(tmp_path):
    with pytest.raises(TypeError, match=r"cannot save a object at the top level\['f'\]"):
        rt.save({"f": object()}, tmp_path / "x")
    with pytest.raises(TypeError, match="dtype object"):
        rt.save({"a": np.array([None, 1])}, tmp_path / "x")
    with pytest.raises(TypeError, match="keys must be"):
        rt.save({(1, 2): 3}, tmp_path / "x")
    assert not (tmp_path / "x").exists()  # a failed save leaves nothing behind
