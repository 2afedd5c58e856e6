"""`rt.load` of a damaged `rt.save` file: a `ModelFormatError` (a ValueError) naming the file,
or the saved values exactly; never another exception, never other values (the zip's CRC-32
covers each array and the manifest)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import d2s
import runtime as rt

from . import damage


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("state") / "model.pdparams")
    rt.save({"w": rt.to_tensor(np.arange(12, dtype="float32").reshape(3, 4)),
             "step": 7, "names": ["a", "b"], "q": np.array([1, -2], "int8")}, path)
    return path, damage.read(path)


def _same(got) -> bool:
    return (isinstance(got, dict) and set(got) == {"w", "step", "names", "q"}
            and np.array_equal(got["w"].numpy(), np.arange(12, dtype="float32").reshape(3, 4))
            and got["step"] == 7 and got["names"] == ["a", "b"]
            and got["q"].dtype == np.int8 and got["q"].tolist() == [1, -2])


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_state_dict_files(state, data):
    path, good = state
    kind = data.draw(st.sampled_from(["flip", "truncate", "append"]))
    if kind == "flip":
        bad = damage.flip_bit(good, data.draw(st.integers(0, 8 * len(good) - 1)))
    elif kind == "truncate":
        bad = good[:data.draw(st.integers(0, len(good) - 1))]
    else:
        bad = good + data.draw(st.binary(min_size=1, max_size=32))
    victim = path + ".damaged"
    damage.write(victim, bad)
    try:
        got = rt.load(victim)
    except d2s.ModelFormatError as e:
        assert e.path == victim
        return
    assert _same(got), kind


def test_compressed_members_are_refused(tmp_path, state):
    path, good = state
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    np.savez_compressed(tmp_path / "c.npz", **arrays)
    with pytest.raises(d2s.ModelFormatError, match="compressed"):
        rt.load(tmp_path / "c.npz")
