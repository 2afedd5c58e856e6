"""A str stored under a dict key on one path of a tensor `if` only (`out["tag"] = "hi"` in
the branch; the other path has no key), then read or returned: eager's result per run. The
dict is returned with the key where eager's has it; `out["tag"]` is the str, or eager's
`KeyError: 'tag'` when the program runs; `out.get("tag", "-")` and `"tag" in out` follow the
run. Before: `StateChangeError: ... one static program cannot have both key sets with a str
value` at the `if`."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

ROWS = ([1.0, 2.0, 3.0], [3.0, -2.0, -3.0], [-1.0, 5.0, -9.0], [0.2, 0.1, 0.4])
NAMES = ("bg", "person", "car")


def _x(row):
    return rt.to_tensor(np.asarray(row, "float32"))


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001
        return type(e), e.args


def _path_of(v):
    """What tells the paths apart: keys, Python values, errors (not tensor values)."""
    if isinstance(v, dict):
        return tuple((k, _path_of(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return tuple(_path_of(x) for x in v)
    return "tensor" if isinstance(v, rt.Tensor) else repr(v)


def _same_on_every_row(fn):
    static = d2s.to_static(fn)
    kinds = set()
    for row in ROWS:
        want, got = _outcome(fn, _x(row)), _outcome(static, _x(row))
        assert got[0] == want[0], (row, got, want)
        if want[0] == "ok":
            assert_same_leaves(got[1], want[1], f"row {row}")
        else:
            assert got[1] == want[1], (row, got, want)
        kinds.add(_path_of(want))
    assert len(kinds) > 1 and len(static.program_cache) == 1


def step_report(x):
    """A training step's report: a warning only where the loss is high."""
    out = {"loss": x.mean()}
    if x.mean() > 1.0:
        out["warning"] = "loss is high"
    return out


def detector_output(x):
    """A detection dict with a class name only where the score passes the threshold."""
    det = {"score": x.max()}
    if x.max() > 2.5:
        det["label"] = NAMES[int(x.argmax())]  # (a str the run picks, on this path only)
    return det.get("label", "none"), "label" in det, det


def tag_read(x):
    out = {"y": x * 2}
    if x.sum() > 0:
        out["tag"] = "hi"
    return out["tag"]  # (eager's KeyError: 'tag' on the other runs)


def tag_text(x):
    meta = {}
    if x.sum() > 0:
        meta["mode"] = "train"
    return len(meta), meta.get("mode", "eval").upper()


@pytest.mark.parametrize("fn", [step_report, detector_output, tag_read, tag_text])
def test_str_under_a_key_one_path_sets(fn):
    _same_on_every_row(fn)
