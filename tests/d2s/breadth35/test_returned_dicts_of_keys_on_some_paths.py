"""A returned dict whose keys a tensor decides (found by the wild4 corpus: per-class results of
detection post-processing, a class skipped by a tensor `continue`). It was refused ("returns
a dict whose key 0 exists only where a tensor `if` set it"); the program now returns each
such key's value beside its presence flag and the call gives the dict with the keys of its
run. Eager vs static vs NumPy over inputs that keep different classes, one program;
gradients through the values present against finite differences."""
import numpy as np

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

LABELS = np.array([0, 0, 1, 1, 2], "int64")
SCORES = [  # keeps classes {0, 1}, {0}, {} and {0, 1, 2}
    np.array([0.9, 0.8, 0.7, 0.6, 0.1], "float32"),
    np.array([0.9, 0.2, 0.3, 0.1, 0.4], "float32"),
    np.array([0.1, 0.2, 0.3, 0.1, 0.4], "float32"),
    np.array([0.6, 0.2, 0.3, 0.7, 0.8], "float32"),
]


def per_class_scores(scores, labels, classes):
    results = {}
    for c in classes:
        keep = (labels == c) & (scores > 0.5)
        if not keep.any():
            continue
        results[c] = (scores * keep.astype("float32")).sum()
    return results, len(results)


def per_class_numpy(scores, labels, classes):
    out = {}
    for c in classes:
        keep = (labels == c) & (scores > 0.5)
        if keep.any():
            out[c] = np.float32((scores * keep).sum())
    return out


def test_the_dict_has_the_keys_each_run_keeps():
    static = d2s.to_static(per_class_scores, full_graph=True)
    seen = set()
    for sv in SCORES:
        want = per_class_numpy(sv, LABELS, [0, 1, 2])
        seen.add(tuple(want))
        for fn in (per_class_scores, static):
            got, n = fn(rt.to_tensor(sv), rt.to_tensor(LABELS), [0, 1, 2])
            assert list(got) == list(want) and int(n) == len(want)
            for k in want:
                np.testing.assert_allclose(got[k].numpy(), want[k], rtol=1e-6)
    assert seen == {(0, 1), (0,), (), (0, 1, 2)}
    assert len(static.program_cache) == 1


def weighted(x, w):
    out = {"base": (x * w).sum()}
    if x.mean() > 0:
        out["pos"] = (x * x * w).sum()
    return out


def test_gradients_through_the_values_present_match_finite_differences():
    static = d2s.to_static(weighted, full_graph=True)
    w = np.array([0.5, -1.0, 2.0])
    for xv in (np.array([1.0, 0.5, 2.0]), np.array([-1.0, -0.5, 0.3])):
        def loss_np(x):
            out = (x * w).sum() ** 2
            return out + ((x * x * w).sum() ** 2 if x.mean() > 0 else 0.0)

        expected = numeric_grad(loss_np, xv)
        for fn in (weighted, static):
            x = rt.to_tensor(xv, stop_gradient=False)
            d = fn(x, rt.to_tensor(w))
            assert ("pos" in d) == (xv.mean() > 0)
            sum(v * v for v in d.values()).backward()
            np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-7)
    assert len(static.program_cache) == 1
