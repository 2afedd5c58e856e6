"""A dict of losses or metrics whose key a tensor `if` sets on some paths only, read whole
(issue 35): `sorted(d)`, `list(d)`, `tuple(d.keys())`, `list(d.values())` and
`sum(d.values())` give the keys and values present on this run (`sorted()` was refused,
`sum(d.values())` raised `KeyError` when the program ran on the runs without the key, where
eager code sums the others). Eager vs static vs NumPy through one program, inputs with and
without the key."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

F = rt.nn.functional
ROWS = (([1.0, 2.0], [1.0, 2.5]), ([1.0, 5.0], [1.0, 2.5]))


def loss_terms(pred, target):
    terms = {}
    diff = pred - target
    terms["l1"] = diff.abs().mean()
    if diff.abs().max() > 1:
        terms["huber"] = F.smooth_l1_loss(pred, target)
    total = sum(terms.values())
    return total, sorted(terms), list(terms), tuple(terms.keys()), len(terms)


def values_stacked(pred, target):
    terms = {"mse": ((pred - target) ** 2).mean()}
    if pred.max() > 4:
        terms["max"] = pred.max()
    return rt.stack(list(terms.values())), sum(terms.values(), 0.0)


def only_flagged(pred, target):
    terms = {}
    if pred.max() > 4:
        terms["big"] = pred.max()
    return sum(terms.values())  # (eager: the int 0 where no key was set)


def _ref(pred, target):
    diff = np.abs(np.asarray(pred) - np.asarray(target))
    terms = {"l1": diff.mean()}
    if diff.max() > 1:
        d = diff
        terms["huber"] = np.where(d < 1, 0.5 * d * d, d - 0.5).mean()
    return sum(terms.values()), sorted(terms)


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


def test_keys_and_sum_follow_the_run():
    static = d2s.to_static(loss_terms)
    for pred, target in ROWS:
        want, got = loss_terms(_t(pred), _t(target)), static(_t(pred), _t(target))
        assert_same_leaves(got, want)
        total, keys = _ref(pred, target)
        np.testing.assert_allclose(got[0].numpy(), total, rtol=1e-5)
        assert got[1] == keys
    assert len(static.program_cache) == 1


def test_values_as_a_list_and_a_float_start():
    static = d2s.to_static(values_stacked)
    for pred, target in ROWS:
        assert_same_leaves(static(_t(pred), _t(target)), values_stacked(_t(pred), _t(target)))
    assert len(static.program_cache) == 1


def test_no_key_present_gives_eagers_start():
    static = d2s.to_static(only_flagged)
    for pred, target in ROWS:
        want, got = only_flagged(_t(pred), _t(target)), static(_t(pred), _t(target))
        assert type(got) is type(want)
        assert_same_leaves(got, want)
    assert only_flagged(_t(ROWS[0][0]), _t(ROWS[0][1])) == 0
