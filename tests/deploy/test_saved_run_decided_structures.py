"""A function that returns a list of dicts or tuples grown by a loop over a tensor's rows (one
per image of a batch, as detection post-processing does) is saved and loaded with that
nesting: the loaded model gives one structure per row, as the live call does, for any batch
size (it used to give each field's rows stacked)."""
from __future__ import annotations

import numpy as np

import d2s
import runtime as rt


def per_image(batch_boxes, batch_scores):
    results = []
    for boxes, scores in zip(batch_boxes, batch_scores):
        keep = scores > 0.5
        if keep.sum() == 0:
            results.append({"box": rt.zeros([1, 4]), "count": int(keep.sum()), "hit": False})
            continue
        best = scores.argmax()
        results.append({"box": boxes[best].unsqueeze(0), "count": int(keep.sum()),
                        "hit": True})
    return results


def pairs(rows):
    out = []
    for row in rows:
        out.append((row.max(), float(row.sum())))
    return out, len(out)


def _reference(boxes, scores):
    want = []
    for b, s in zip(boxes, scores):
        keep = s > 0.5
        if keep.sum() == 0:
            want.append({"box": np.zeros([1, 4], "float32"), "count": 0, "hit": False})
        else:
            want.append({"box": b[s.argmax()][None], "count": int(keep.sum()), "hit": True})
    return want


def _same(got, want):
    assert type(got) is list and len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w)
        np.testing.assert_array_equal(g["box"].numpy(), w["box"])
        assert g["box"].dtype == rt.float32 and g["box"].shape == [1, 4]
        assert type(g["count"]) is int and g["count"] == w["count"]
        assert type(g["hit"]) is bool and g["hit"] == w["hit"]


def test_a_list_of_dicts_per_row_is_loaded_with_its_nesting(tmp_path):
    rng = np.random.default_rng(3)
    static = d2s.to_static(per_image)
    boxes = rng.uniform(0, 9, [2, 5, 4]).astype("float32")
    scores = np.array([[0.9, 0.1, 0.7, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4, 0.2]], "float32")
    live = static(rt.to_tensor(boxes), rt.to_tensor(scores))
    _same(live, _reference(boxes, scores))
    d2s.save(static, str(tmp_path / "m"))
    model = d2s.load(str(tmp_path / "m"))
    for n in (2, 3, 1):  # (any batch size: the rows follow the run)
        b = rng.uniform(0, 9, [n, 5, 4]).astype("float32")
        s = rng.uniform(0, 1, [n, 5]).astype("float32")
        s[0] = 0.1  # (the first image has no detection: the placeholder)
        got = model(rt.to_tensor(b), rt.to_tensor(s))
        _same(got, _reference(b, s))
        _same(static(rt.to_tensor(b), rt.to_tensor(s)), _reference(b, s))


def test_a_list_of_tuples_beside_its_length(tmp_path):
    static = d2s.to_static(pairs)
    rows = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], "float32")
    live = static(rt.to_tensor(rows))
    d2s.save(static, str(tmp_path / "p"))
    model = d2s.load(str(tmp_path / "p"))
    for x in (rows, rows[:1], rows[:0]):
        got, n = model(rt.to_tensor(x))
        assert type(n) is int and n == len(x) and type(got) is list and len(got) == len(x)
        for (m, total), r in zip(got, x):
            assert float(m) == r.max() and type(total) is float and total == float(r.sum())
    assert [(float(m), t) for m, t in live[0]] == [(2.0, 3.0), (3.0, 2.0), (0.5, 0.75)]


def per_class(scores, labels, classes):
    results = {}
    for c in classes:
        mask = (labels == c) & (scores > 0.5)
        if not mask.any():
            continue
        results[c] = (scores * mask.astype("float32")).sum()
    return results


def ordered(x):
    d = {"n": x.shape[0]}
    if x.mean() > 0:
        d["pos"] = x.max()
        d["neg"] = x.min()
    else:
        d["neg"] = x.min()
        d["pos"] = x.max()
    d["big"] = not (x.max() > 5)
    return d


def test_a_dict_with_keys_on_some_runs_is_loaded_with_those_keys(tmp_path):
    static = d2s.to_static(lambda s, lab: per_class(s, lab, [0, 1, 2]))
    scores = np.array([0.9, 0.2, 0.7, 0.6], "float32")
    static(rt.to_tensor(scores), rt.to_tensor(np.array([0, 1, 2, 2], "int64")))
    d2s.save(static, str(tmp_path / "k"))
    model = d2s.load(str(tmp_path / "k"))
    for labels in ([0, 1, 2, 2], [2, 2, 2, 2], [1, 1, 0, 1], [0, 0, 0, 0]):
        lab = np.array(labels, "int64")
        want = {c: np.float32((scores * ((lab == c) & (scores > 0.5))).sum()) for c in (0, 1, 2)
                if ((lab == c) & (scores > 0.5)).any()}
        for got in (model(rt.to_tensor(scores), rt.to_tensor(lab)),
                    static(rt.to_tensor(scores), rt.to_tensor(lab))):
            assert type(got) is dict and list(got) == list(want)
            assert all(float(got[c]) == want[c] for c in want)


def test_key_order_and_python_bools_follow_the_run_in_a_loaded_model(tmp_path):
    static = d2s.to_static(ordered)
    static(rt.to_tensor(np.array([[1.0, 2.0]], "float32")))
    d2s.save(static, str(tmp_path / "o"))
    model = d2s.load(str(tmp_path / "o"))
    for x in ([[1.0, 2.0]], [[-1.0, -2.0]], [[9.0, -1.0]]):
        a = np.array(x, "float32")
        for got in (model(rt.to_tensor(a)), static(rt.to_tensor(a))):
            keys = ["n", "pos", "neg", "big"] if a.mean() > 0 else ["n", "neg", "pos", "big"]
            assert list(got) == keys
            assert float(got["pos"]) == a.max() and float(got["neg"]) == a.min()
            assert type(got["big"]) is bool and got["big"] == (not a.max() > 5)
