"""A saved model damaged in any way either loads and gives exactly the saved model's output, or
raises `d2s.ModelFormatError` at load: never another exception, never a different answer.

Mutations: truncation at every length class, single and multiple bit flips, bytes appended,
JSON fields replaced, deleted or added (without fixing the checksum: damage or an edit after
saving), parameter or program files swapped with those of another save, missing files. The
default run draws a modest number of examples; `-m slow` draws many.

A second property edits the JSON *and* fixes its checksum (a deliberate rewrite): loading must
then still refuse anything inconsistent at load time, and a model that loads must run on the
saved inputs (its answer may differ: the edit may have made another valid program).
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import d2s
import runtime as rt
from runtime.program import model_file

from . import damage

FILES = (".json", ".npz")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The good files of a model, the bytes of other saves, and the model's output."""
    folder = tmp_path_factory.mktemp("damaged")
    prefix = str(folder / "gate")
    inputs, expected = damage.save_gate(prefix)
    good = {ext: damage.read(prefix + ext) for ext in FILES}
    # another save of the same architecture (other values) and of another model
    rt.seed(1)
    other = damage.Gate()
    other.eval()
    with rt.no_grad():
        other.fc.weight.set_value(other.fc.weight.numpy() + 1.0)
    d2s.save(other, str(folder / "other"), input_spec=[d2s.InputSpec([None, 4], "float32")])
    damage.save_zoo(str(folder / "lenet"), "lenet")
    others = {name: {ext: damage.read(str(folder / name) + ext) for ext in FILES}
              for name in ("other", "lenet")}
    return _Saved(prefix=str(folder / "victim"), inputs=inputs, expected=expected, good=good,
                  others=others)


class _Saved(dict):
    def __repr__(self):  # (hypothesis prints the arguments of a failing example)
        return "<saved model files>"


# ---- mutations --------------------------------------------------------------------------------

def _paths(node, path=()):
    """Every path into a JSON tree (dict keys and list indices)."""
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8) | st.sampled_from(["t0", "x", "float32", "int64", "tensor", "add",
                                             "while", "cond", "linear_0.w_0", "array"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["v", "lit", "str", "tuple", "float", "dict", "name", "shape"]), inner,
        max_size=2),
    max_leaves=6)


@st.composite
def json_edit(draw, text: bytes):
    """(description, edited JSON dict) for one field replaced, tweaked, deleted or added."""
    d = json.loads(text)
    paths = [p for p in _paths(d) if p]
    path = draw(st.sampled_from(paths))
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    old = parent[key]
    kind = draw(st.sampled_from(["replace", "tweak", "delete", "add"]))
    if kind == "delete":
        del parent[key]
    elif kind == "add" and isinstance(old, (dict, list)):
        value = draw(_json_values)
        if isinstance(old, dict):
            old[draw(st.sampled_from(["extra", "name", "shape", "kind", "v"]))] = value
        else:
            old.insert(draw(st.integers(0, len(old))), value)
    elif kind == "tweak" and old.__class__ is int:
        parent[key] = old + draw(st.sampled_from([-1, 1, 2 ** 40]))
    elif kind == "tweak" and isinstance(old, str) and old:
        i = draw(st.integers(0, len(old) - 1))
        parent[key] = old[:i] + draw(st.sampled_from("0a_.x")) + old[i + 1:]
    elif kind == "tweak" and isinstance(old, list) and old:
        parent[key] = old[:-1] if draw(st.booleans()) else old + old[-1:]
    else:
        parent[key] = draw(_json_values)
    return f"{kind} {'/'.join(map(str, path))}: {old!r:.60}", d


@st.composite
def mutation(draw, saved):
    """(description, {ext: new bytes or None for a missing file})."""
    good, others = saved["good"], saved["others"]
    ext = draw(st.sampled_from(FILES))
    data = good[ext]
    kind = draw(st.sampled_from(["truncate", "flip", "flips", "append", "json", "swap",
                                 "missing"]))
    if kind == "truncate":
        n = draw(st.sampled_from(damage.length_classes(len(data))) | st.integers(0, len(data) - 1))
        return f"truncate {ext} to {n}", {ext: damage.truncate(data, n)}
    if kind in ("flip", "flips"):
        bits = draw(st.lists(st.integers(0, 8 * len(data) - 1), min_size=1,
                             max_size=1 if kind == "flip" else 8, unique=True))
        for b in bits:
            data = damage.flip_bit(data, b)
        return f"flip bits {bits} of {ext}", {ext: data}
    if kind == "append":
        extra = draw(st.binary(min_size=1, max_size=64))
        return f"append {extra!r} to {ext}", {ext: data + extra}
    if kind == "json":
        what, d = draw(json_edit(good[".json"]))
        return f"json edit ({what})", {".json": json.dumps(d, indent=1).encode()}
    if kind == "swap":
        name = draw(st.sampled_from(sorted(others)))
        return f"{ext} from the save of {name}", {ext: others[name][ext]}
    return f"missing {ext}", {ext: None}


def _apply(saved, changes: dict) -> str:
    prefix = saved["prefix"]
    for ext in FILES:
        data = changes.get(ext, saved["good"][ext])
        if os.path.exists(prefix + ext):
            os.remove(prefix + ext)
        if data is not None:
            damage.write(prefix + ext, data)
    return prefix


def _check_damaged(saved, data) -> None:
    what, changes = data.draw(mutation(saved))
    result = damage.outcome(_apply(saved, changes), saved["inputs"], saved["expected"])
    assert result in ("format_error", "same"), f"{what}: {result}"


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                       HealthCheck.too_slow])


@settings(max_examples=150, **_SETTINGS)
@given(data=st.data())
def test_a_damaged_model_raises_model_format_error_or_gives_the_same_output(saved, data):
    _check_damaged(saved, data)


@pytest.mark.slow
@settings(max_examples=3000, **_SETTINGS)
@given(data=st.data())
def test_many_damaged_models(saved, data):
    _check_damaged(saved, data)


# ---- deliberate edits with a fixed checksum ---------------------------------------------------

def _check_rewritten(saved, data) -> None:
    """Loading raises ModelFormatError or returns a model (never another exception). A model
    that loads is called; what that does is counted, not asserted: an op whose inference rule
    accepts an edited input or attribute may still fail when it runs (see docs/deployment.md)."""
    what, d = data.draw(json_edit(saved["good"][".json"]))
    if isinstance(d, dict):
        d["checksum"] = model_file.content_checksum(d)
    prefix = _apply(saved, {".json": json.dumps(d, indent=1).encode()})
    try:
        model = d2s.load(prefix)
    except d2s.ModelFormatError:
        return
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{what}: load raised {type(e).__name__}: {e}") from e
    try:
        model(*[rt.to_tensor(a) for a in saved["inputs"]])
    except Exception:  # noqa: BLE001
        pass


@settings(max_examples=60, **_SETTINGS)
@given(data=st.data())
def test_a_rewritten_program_is_refused_at_load_or_runs(saved, data):
    _check_rewritten(saved, data)


@pytest.mark.slow
@settings(max_examples=3000, **_SETTINGS)
@given(data=st.data())
def test_many_rewritten_programs(saved, data):
    _check_rewritten(saved, data)


def test_every_truncation_of_both_files(saved):
    """Every length class, and every length of the program file's last kilobyte."""
    for ext in FILES:
        data = saved["good"][ext]
        lengths = set(damage.length_classes(len(data))) | set(range(len(data) - 1024,
                                                                    len(data)))
        for n in sorted(x for x in lengths if x >= 0):
            prefix = _apply(saved, {ext: data[:n]})
            with pytest.raises(d2s.ModelFormatError, match=ext.replace(".", r"\.")):
                d2s.load(prefix)


def test_the_mutations_are_not_vacuous(saved):
    """Another save of the same architecture loads and answers differently (so accepting its
    parameters would change the output), and the saved checksum is `content_checksum`."""
    prefix = _apply(saved, {ext: saved["others"]["other"][ext] for ext in FILES})
    got = damage._call(d2s.load(prefix), saved["inputs"])
    assert got[0].shape == saved["expected"][0].shape
    assert not np.array_equal(got[0], saved["expected"][0])
    d = json.loads(saved["good"][".json"])
    assert d["checksum"] == model_file.content_checksum(d)


def test_json_that_python_reads_but_cannot_write_back(saved):
    text = saved["good"][".json"].replace(b'"version": 1', b'"version": 1e999', 1)
    with pytest.raises(d2s.ModelFormatError, match="format version inf"):
        d2s.load(_apply(saved, {".json": text}))
    text = saved["good"][".json"].replace(b'"idx": 0', b'"idx": 0, "x": 1e999', 1)
    with pytest.raises(d2s.ModelFormatError, match="does not match its checksum"):
        d2s.load(_apply(saved, {".json": text}))
    text = saved["good"][".json"].replace(b'"idx": 0', b'"idx": NaN', 1)
    with pytest.raises(d2s.ModelFormatError, match="JSON is damaged"):
        d2s.load(_apply(saved, {".json": text}))
