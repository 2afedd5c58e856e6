"""An item set under a key the converted code computed (`table[int(logits.argmax())] = v`):
the dict keeps its Python keys and every later read sees the item eager code sees, through
one program for inputs whose argmax differs (`d2s.operators.computed_keys`)."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.breadth35.messages import INTERNAL
from tests.finite_differences import numeric_grad

# argmax 2, 0, 1: three inputs, three keys, one program
INPUTS = [[0.1, 0.2, 0.9], [1.5, -0.3, 0.2], [0.3, 2.0, -1.0]]


def class_weights(logits):
    weights = {0: 0.5, 1: 0.25, 2: 1.0}
    weights[int(logits.argmax())] = float(logits.max())
    total = sum(weights.values())
    seen = [k for k, w in weights.items() if w > 0.4]
    return logits * weights[0] + weights.get(2, 0.0) + total * len(seen)


def class_weights_reference(x):
    weights = {0: 0.5, 1: 0.25, 2: 1.0}
    weights[int(x.argmax())] = float(np.float32(x.max()))
    seen = [k for k, w in weights.items() if w > 0.4]
    return x * weights[0] + weights[2] + sum(weights.values()) * len(seen)


def test_python_number_items_read_by_python_keys():
    static = d2s.to_static(class_weights)
    for v in INPUTS:
        want = class_weights_reference(np.array(v, dtype=np.float32))
        np.testing.assert_allclose(class_weights(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
    assert len(static.program_cache) == 1


def blend_heads(h, logits):
    """A head per class, the predicted one replaced by a sharpened copy."""
    heads = {0: h * 0.5, 1: h * 2.0, 2: h + 1.0}
    heads[int(logits.argmax())] = h * h
    return heads[0].sum() + 3.0 * heads[1].sum() + 5.0 * heads[2].sum()


def blend_heads_reference(h, logits):
    heads = {0: h * 0.5, 1: h * 2.0, 2: h + 1.0}
    heads[int(np.argmax(logits))] = h * h
    return heads[0].sum() + 3.0 * heads[1].sum() + 5.0 * heads[2].sum()


def test_tensor_items_and_their_gradients():
    static = d2s.to_static(blend_heads)
    h0 = np.array([0.3, -1.2, 0.7, 2.0])
    for v in INPUTS:
        results = []
        for fn in (blend_heads, static):
            h = rt.to_tensor(h0.astype(np.float32), stop_gradient=False)
            out = fn(h, rt.to_tensor(v))
            out.backward()
            results.append((out.numpy(), h.grad.numpy()))
        want = blend_heads_reference(h0, np.array(v))
        grad = numeric_grad(lambda x, v=v: blend_heads_reference(x, np.array(v)), h0)
        assert len(results) == 2
        for value, g in results:
            np.testing.assert_allclose(value, want, rtol=1e-5)
            np.testing.assert_allclose(g, grad, rtol=1e-4, atol=1e-5)
    assert len(static.program_cache) == 1


class Tracker:
    def __init__(self):
        self.best = {0: 0.0, 1: 0.0, 2: 0.0}


def track_best(logits, tracker):
    tracker.best[int(logits.argmax())] = float(logits.max())
    return logits * 2.0


def test_a_callers_dict_with_all_its_keys_gets_python_numbers():
    eager, static_tracker = Tracker(), Tracker()
    static = d2s.to_static(track_best)
    for v in INPUTS:
        track_best(rt.to_tensor(v), eager)
        np.testing.assert_allclose(static(rt.to_tensor(v), static_tracker).numpy(),
                                   np.array(v) * 2.0, rtol=1e-6)
        assert static_tracker.best == eager.best
        assert all(type(w) is float for w in static_tracker.best.values())
    assert len(static.program_cache) == 1
    assert eager.best == pytest.approx({0: 1.5, 1: 2.0, 2: 0.9})


def two_classes(logits):
    weights = {0: 1.0, 1: 2.0}
    weights[int(logits.argmax())] = 0.0
    return logits * weights[1]


def test_a_key_the_dict_lacks_raises_when_the_program_runs():
    static = d2s.to_static(two_classes)
    np.testing.assert_allclose(static(rt.to_tensor(INPUTS[1])).numpy(),
                               np.array(INPUTS[1]) * 2.0, rtol=1e-6)
    # argmax 2: eager adds a third key; the program keeps the dict's keys and says so
    with pytest.raises(KeyError) as info:
        static(rt.to_tensor(INPUTS[0]))
    text = info.value.args[0]
    assert "test_computed_dict_keys.py" in text and "none of the dict's keys [0, 1]" in text
    assert not INTERNAL.search(text), text


def count_into_empty(logits):
    counts = {}
    counts[int(logits.argmax())] = 1
    return logits * counts.get(0, 0)


def mixed_item_types(logits):
    weights = {0: 1, 1: 2.5, 2: 0.5}
    weights[int(logits.argmax())] = 0.0
    return logits * weights[0]


def background_and_classes(logits):
    weights = {0: 1.0, "background": 2.0}
    weights[int(logits.argmax())] = 0.0
    return logits * weights[0]


def mismatched_shapes(h, logits):
    heads = {0: h, 1: h.sum(), 2: h * 2.0}
    heads[int(logits.argmax())] = h * 3.0
    return heads[0] + heads[2]


@pytest.mark.parametrize("fn, why, line", [
    (count_into_empty, "the dict holds keys computed by the converted code", "counts.get(0, 0)"),
    (mixed_item_types, "the dict holds a Python int where the store puts a Python float",
     "weights[int(logits.argmax())] = "),
    (background_and_classes, "has keys that are not all Python numbers",
     "weights[int(logits.argmax())] = "),
    (mismatched_shapes, "the dict holds a tensor of shape [] ", "heads[int(logits.argmax())] = "),
])
def test_dicts_the_program_cannot_keep_are_refused(fn, why, line):
    args = [rt.to_tensor(INPUTS[0])]
    if fn is mismatched_shapes:
        args.insert(0, rt.to_tensor([1.0, 2.0, 3.0]))
    fn(*args)  # eager runs
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(*args)
    text = str(info.value)
    assert why in text and line in text and "rt.to_tensor([...])" in text, text
    assert "test_computed_dict_keys.py" in text and not INTERNAL.search(text), text


def sharpen_if_confident(logits):
    weights = {0: 0.5, 1: 0.25, 2: 1.0}
    if logits.sum() > 1.0:
        weights[int(logits.argmax())] = 2.0
    return logits * weights[0] + weights[2]


def vote_over_steps(steps, n):
    """A graph loop (`n` a tensor): each step's argmax sets its class to what class 2 had."""
    votes = {0: 0.5, 1: 0.25, 2: 1.0}
    for i in range(n):
        votes[int(steps[i].argmax())] = votes[2] + 1.0
    return steps[0] * votes[0] + votes[2] + votes[1]


def vote_reference(steps, n):
    votes = {0: 0.5, 1: 0.25, 2: 1.0}
    for i in range(n):
        votes[int(np.argmax(steps[i]))] = votes[2] + 1.0
    return steps[0] * votes[0] + votes[2] + votes[1]


def test_stores_under_a_tensor_if_and_in_a_graph_loop():
    static = d2s.to_static(sharpen_if_confident)
    for v in INPUTS + [[0.1, 0.2, 0.3]]:  # (the last one skips the store)
        x = np.array(v, dtype=np.float32)
        weights = {0: 0.5, 1: 0.25, 2: 1.0}
        if x.sum() > 1.0:
            weights[int(x.argmax())] = 2.0
        want = x * weights[0] + weights[2]
        np.testing.assert_allclose(sharpen_if_confident(rt.to_tensor(v)).numpy(), want,
                                   rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
    static = d2s.to_static(vote_over_steps)
    steps = np.array([INPUTS[0], INPUTS[1], INPUTS[2]], dtype=np.float32)
    for n in (0, 1, 2, 3):
        want = vote_reference(steps, n)
        args = (rt.to_tensor(steps), rt.to_tensor(n))
        np.testing.assert_allclose(vote_over_steps(*args).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(static(*args).numpy(), want, rtol=1e-6)
    assert len(static.program_cache) == 1


def mask_row_and_cell(cost):
    cost = cost.clone()
    i = int(cost.sum(1).argmin())
    cost[i, :] = 0.0
    cost[:, 0] = cost[:, 0] * 2.0
    cost[1, 2] = -1.0
    cost[i] = cost[i] + 5.0
    return cost


def test_tensor_item_stores_still_convert():
    static = d2s.to_static(mask_row_and_cell)
    for v in ([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], [[-1.0, 0.0, 0.0], [4.0, 1.0, 2.0]]):
        x = np.array(v, dtype=np.float32)
        want = x.copy()
        i = int(want.sum(1).argmin())
        want[i, :] = 0.0
        want[:, 0] *= 2.0
        want[1, 2] = -1.0
        want[i] += 5.0
        np.testing.assert_allclose(mask_row_and_cell(rt.to_tensor(v)).numpy(), want)
        np.testing.assert_allclose(static(rt.to_tensor(v)).numpy(), want)


def prior_of_prediction(logits):
    priors = {0: 0.5, 1: 0.25}
    found = priors.get(int(logits.argmax()), 0.1)  # class 2 has no prior: the default
    priors.update({int(logits[:2].argmin()): 2.0})
    return logits * found + priors[0] + priors.get(1)


def prior_reference(x):
    priors = {0: 0.5, 1: 0.25}
    found = priors.get(int(x.argmax()), 0.1)
    priors.update({int(x[:2].argmin()): 2.0})
    return x * found + priors[0] + priors.get(1)


def test_get_and_update_by_a_computed_key():
    static = d2s.to_static(prior_of_prediction)
    # (argmax 2 takes the default; argmin of the first two: 0, 1, 0)
    for v in INPUTS:
        want = prior_reference(np.array(v, dtype=np.float32))
        np.testing.assert_allclose(prior_of_prediction(rt.to_tensor(v)).numpy(), want,
                                   rtol=1e-6)
        np.testing.assert_allclose(static(rt.to_tensor(v)).numpy(), want, rtol=1e-6)
    assert len(static.program_cache) == 1


def drop_prediction(logits):
    priors = {0: 0.5, 1: 0.25, 2: 1.0}
    priors.pop(int(logits.argmax()))
    return logits * len(priors)


def default_prediction(logits):
    priors = {0: 0.5, 1: 0.25, 2: 1.0}
    priors.setdefault(int(logits.argmax()), 0.0)
    return logits * priors[0]


@pytest.mark.parametrize("fn, method", [(drop_prediction, ".pop()"),
                                        (default_prediction, ".setdefault()")])
def test_methods_that_may_change_the_keys_are_refused(fn, method):
    fn(rt.to_tensor(INPUTS[0]))  # eager runs
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(rt.to_tensor(INPUTS[0]))
    text = str(info.value)
    assert f"`{method}` of a key computed by the converted code" in text, text
    assert "it may change which keys the dict has" in text and "priors." in text, text
    assert "test_computed_dict_keys.py" in text and not INTERNAL.search(text), text
