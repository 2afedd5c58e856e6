"""rt.metric.Accuracy and rt.metric.Auc against NumPy references, over several batches;
Accuracy.compute eager and inside a converted function."""
import numpy as np
import pytest

import d2s
import runtime as rt


def topk_hits(scores: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Rows whose label is among the k largest scores (no ties in the test data)."""
    top = np.argsort(-scores, axis=1)[:, :k]
    return (top == labels[:, None]).any(axis=1)


def batches(seed=0, sizes=(7, 16, 5), classes=6):
    rng = np.random.RandomState(seed)
    return [(rng.standard_normal((n, classes)).astype("float32"), rng.randint(0, classes, n))
            for n in sizes]


@pytest.mark.parametrize("label_form", ["ids", "column", "one_hot"])
def test_accuracy_topk_accumulates_like_numpy(label_form):
    metric = rt.metric.Accuracy(topk=(1, 3))
    data = batches()
    for scores, labels in data:
        if label_form == "ids":
            label = rt.to_tensor(labels)
        elif label_form == "column":
            label = rt.to_tensor(labels[:, None])
        else:
            label = rt.to_tensor(np.eye(6, dtype="float32")[labels])
        correct = metric.compute(rt.to_tensor(scores), label)
        assert correct.shape == [len(labels), 3] and correct.dtype == rt.float32
        batch = metric.update(correct)
        assert len(batch) == 2
        for k, value in zip((1, 3), batch, strict=True):
            assert value == pytest.approx(topk_hits(scores, labels, k).mean())
    scores = np.concatenate([s for s, _ in data])
    labels = np.concatenate([y for _, y in data])
    expected = [topk_hits(scores, labels, k).mean() for k in (1, 3)]
    assert metric.accumulate() == pytest.approx(expected)
    assert metric.name() == ["acc_top1", "acc_top3"]
    metric.reset()
    assert metric.accumulate() == [0.0, 0.0]


def test_accuracy_single_k_returns_floats_and_names():
    metric = rt.metric.Accuracy(name="top1")
    scores, labels = batches(sizes=(10,))[0]
    value = metric.update(metric.compute(rt.to_tensor(scores), rt.to_tensor(labels)))
    assert isinstance(value, float) and value == pytest.approx(topk_hits(scores, labels, 1).mean())
    assert metric.accumulate() == pytest.approx(value)
    assert metric.name() == ["top1"]
    with pytest.raises(ValueError, match="topk"):
        rt.metric.Accuracy(topk=(0,))


def test_accuracy_compute_in_converted_code_matches_eager():
    metric = rt.metric.Accuracy(topk=(1, 2))

    @d2s.to_static
    def correct_of(scores, labels):
        return metric.compute(scores * 2.0, labels)

    for scores, labels in batches(seed=3, sizes=(8, 8)):
        eager = metric.compute(rt.to_tensor(scores * 2.0), rt.to_tensor(labels))
        static = correct_of(rt.to_tensor(scores), rt.to_tensor(labels))
        np.testing.assert_array_equal(static.numpy(), eager.numpy())
        ref = np.stack([topk_hits(scores, labels, 1), topk_hits(scores, labels, 2)], 1)
        assert (eager.numpy()[:, 0] == ref[:, 0]).all()
        assert (eager.numpy().sum(1) == ref[:, 1]).all()


def binned_auc(scores: np.ndarray, labels: np.ndarray, thresholds: int) -> float:
    """P(a positive's bin > a negative's bin) + P(same bin) / 2, over all pairs: the area
    under the ROC curve drawn through the bin edges."""
    bins = (scores * thresholds).astype(np.int64)
    pos, neg = bins[labels == 1], bins[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + ties / 2) / (len(pos) * len(neg)))


@pytest.mark.parametrize("thresholds", [4095, 10])
def test_auc_matches_pairwise_reference_over_batches(thresholds):
    rng = np.random.RandomState(1)
    metric = rt.metric.Auc(num_thresholds=thresholds)
    all_scores, all_labels = [], []
    for n in (50, 30, 1):
        labels = rng.randint(0, 2, n)
        score = np.clip(0.35 * labels + 0.65 * rng.rand(n), 0, 1)
        preds = np.stack([1 - score, score], axis=1)
        metric.update(rt.to_tensor(preds.astype("float32")),
                      rt.to_tensor(labels[:, None].astype("int64")))
        all_scores.append(preds.astype("float32")[:, 1])
        all_labels.append(labels)
    scores, labels = np.concatenate(all_scores), np.concatenate(all_labels)
    assert metric.accumulate() == pytest.approx(binned_auc(scores, labels, thresholds))
    assert 0.5 < metric.accumulate() < 1.0
    assert metric.name() == "auc"
    metric.reset()
    assert metric.accumulate() == 0.0


def test_auc_edge_cases_and_errors():
    metric = rt.metric.Auc()
    metric.update(np.array([[0.3, 0.7], [0.6, 0.4]]), np.array([1, 1]))
    assert metric.accumulate() == 0.0  # no negatives: Paddle reports 0
    metric.update(np.array([0.9, 0.1]), np.array([0, 1]))  # a column of positive scores
    assert metric.accumulate() == pytest.approx(binned_auc(
        np.array([0.7, 0.4, 0.9, 0.1]), np.array([1, 1, 0, 1]), 4095))
    with pytest.raises(ValueError, match="probabilities"):
        metric.update(np.array([[0.0, 1.5]]), np.array([1]))
    with pytest.raises(ValueError, match="2 predictions but 1 labels"):
        metric.update(np.array([0.1, 0.2]), np.array([1]))
    with pytest.raises(ValueError, match="ROC"):
        rt.metric.Auc(curve="PR")
