"""Loading refuses a program whose ops ask for more memory than a limit: every op's result
size comes from its static shape (which the loader has checked against the op's inference
rule), and one over `max_result_bytes` is a ModelFormatError naming the op, before anything
runs. A file edited consistently (checksum recomputed) to fill a [10^6, 10^6] tensor is
refused at load rather than failing, or allocating, when called."""
from __future__ import annotations

import json

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.program import model_check, model_file

from .head_model import filled_sum


@pytest.fixture
def saved(tmp_path):
    prefix = str(tmp_path / "filled")
    d2s.save(d2s.to_static(filled_sum), prefix, input_spec=[d2s.InputSpec([1], "float32")])
    return prefix


def _enlarge(prefix: str, shape: list) -> None:
    """Rewrite the fill's shape (its attribute and its result's declared shape) consistently,
    checksum included, as a tool rewriting the program on purpose would."""
    with open(prefix + ".json", encoding="utf-8") as f:
        d = json.load(f)
    block = d["blocks"][0]
    fill = next(op for op in block["ops"] if op["type"] == "full")
    fill["attrs"]["shape"] = {"tuple": shape}
    next(v for v in block["vars"] if v["name"] == fill["outputs"][0])["shape"] = shape
    d["checksum"] = model_file.content_checksum(d)
    with open(prefix + ".json", "w", encoding="utf-8") as f:
        json.dump(d, f)


def test_a_model_within_the_limit_loads_and_runs(saved):
    got = d2s.load(saved)(rt.to_tensor([1.0])).numpy()
    np.testing.assert_allclose(got, [30 * 40 * 2.0 + 1.0])


@pytest.mark.parametrize("shape", [[10**6, 10**6], [10**4, 10**4 * 3]])
def test_an_edited_fill_beyond_the_limit_is_refused_at_load(saved, shape):
    _enlarge(saved, shape)
    with pytest.raises(d2s.ModelFormatError, match=r"full op \(head_model.py:\d+\) makes %t0 "
                                                   r"float32\[" + str(shape[0])):
        d2s.load(saved)


def test_the_limit_is_configurable(saved, monkeypatch):
    need = 30 * 40 * 4
    with pytest.raises(d2s.ModelFormatError, match=f"{need} bytes: more than the limit of "
                                                   f"{need - 1} bytes"):
        d2s.load(saved, max_result_bytes=need - 1)
    assert d2s.load(saved, max_result_bytes=need) is not None
    _enlarge(saved, [100, 100])
    monkeypatch.setattr(model_check, "MAX_RESULT_BYTES", 100 * 100 * 4 - 1)
    with pytest.raises(d2s.ModelFormatError, match="full op"):
        d2s.load(saved)
    monkeypatch.setattr(model_check, "MAX_RESULT_BYTES", 100 * 100 * 4)
    np.testing.assert_allclose(d2s.load(saved)(rt.to_tensor([0.0])).numpy(), [20000.0])
