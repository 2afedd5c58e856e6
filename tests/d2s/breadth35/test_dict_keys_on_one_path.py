"""A dict key set by one branch of a tensor `if` only (issue 35; a StateChangeError before):
the key gets a presence flag. `in`, `.get`, `len` follow it when the program runs; reading
the key where the run took the other branch raises eager's `KeyError` at the user's line.
One program serves both paths; gradients flow through the value where it exists."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def gated_features(x):
    """Optional features computed under tensor conditions, then read by name."""
    feats = {"mean": x.mean()}
    if x.max() > 1.0:
        feats["peak"] = x.max() * 2.0
    if x.min() < -1.0:
        feats["peak"] = x.min() * 3.0      # (the flag follows the path taken)
    if x.sum() > 0:
        feats["energy"] = (x * x).sum()
    score = feats["mean"] + feats.get("peak", 0.5) + feats.get("energy", x.mean() * 0.0)
    return score, "peak" in feats, "energy" not in feats, len(feats)


def ref_gated_features(x):
    feats = {"mean": x.mean()}
    if x.max() > 1.0:
        feats["peak"] = x.max() * 2.0
    if x.min() < -1.0:
        feats["peak"] = x.min() * 3.0
    if x.sum() > 0:
        feats["energy"] = (x * x).sum()
    score = feats["mean"] + feats.get("peak", 0.5) + feats.get("energy", 0.0)
    return score, "peak" in feats, "energy" not in feats, len(feats)


INPUTS = [[0.5, 2.0, -0.25], [0.25, -0.5, 0.125], [-2.0, 0.5, 0.25], [-3.0, 2.0, 0.5],
          [0.5, -1.5, 2.5]]


def test_in_get_and_len_follow_the_path_taken_in_one_program():
    static = d2s.to_static(gated_features, full_graph=True)
    for xv in INPUTS:
        want = ref_gated_features(np.asarray(xv, np.float64))
        for got in (gated_features(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
            assert len(got) == len(want)
            np.testing.assert_allclose(float(got[0]), want[0], rtol=1e-6)
            assert [bool(got[1]), bool(got[2]), int(got[3])] == list(want[1:])
    assert len(static.program_cache) == 1
    assert type(static(rt.to_tensor(INPUTS[0]))[1]) is bool  # (`in` gives a Python bool)


def test_the_gradient_through_a_key_set_on_one_path():
    static = d2s.to_static(gated_features, full_graph=True)
    for xv in INPUTS:
        x = rt.to_tensor(xv, "float64")
        x.stop_gradient = False
        static(x)[0].backward()
        want = numeric_grad(lambda a: float(ref_gated_features(a)[0]), np.asarray(xv))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)


def scaled(x):
    cfg = {"bias": x.mean()}
    if x.sum() > 0:
        cfg["scale"] = x.max()
    return x * cfg["scale"] + cfg["bias"]


def test_reading_the_key_where_it_is_unset_raises_eagers_key_error_at_the_users_line():
    static = d2s.to_static(scaled, full_graph=True)
    xv = [0.5, 2.0]
    np.testing.assert_allclose(static(rt.to_tensor(xv)).numpy(),
                               scaled(rt.to_tensor(xv)).numpy(), rtol=1e-6)
    with pytest.raises(KeyError) as eager:
        scaled(rt.to_tensor([-0.5, -2.0]))
    with pytest.raises(KeyError) as info:
        static(rt.to_tensor([-0.5, -2.0]))
    assert str(info.value).startswith(str(eager.value))  # 'scale'
    assert_at_user_line(info.value, __file__, line_of(scaled, 'cfg["scale"] + cfg'))
    assert len(static.program_cache) == 1


def looped(x):
    """Loops over the keys, values and items: a key's turn runs where it exists."""
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    total, names = x.sum() * 0.0, 0
    for value in d.values():
        total = total + value
    for key, value in d.items():
        total = total + value * len(key)
    for key in d:
        names = names + 1
    return total, names


def ref_looped(x):
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    return sum(d.values()) * 2.0, len(d)


@pytest.mark.parametrize("xv", [[0.5, 2.0], [-0.5, 0.25]])
def test_a_loop_over_the_dict_visits_the_key_where_it_exists(xv):
    static = d2s.to_static(looped, full_graph=True)
    want = ref_looped(np.asarray(xv, np.float64))
    for got in (looped(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
        np.testing.assert_allclose(float(got[0]), want[0], rtol=1e-6)
        assert int(got[1]) == want[1]


def comprehended(x):
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    return rt.stack([v * 2.0 for v in d.values()])


def returned(x):
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    return d


def no_default(x):
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    return d.get("b")


def test_get_without_a_default_is_none_where_the_key_is_unset():
    # (refused at the line before: `d.get("b")` is the value, None on the runs without it)
    static = d2s.to_static(no_default, full_graph=True)
    for xv in ([0.5, 2.0], [-0.5, -2.0]):
        want, got = no_default(rt.to_tensor(xv)), static(rt.to_tensor(xv))
        assert (got is None) == (want is None)
        if want is not None:
            assert float(got) == float(want)


def filtered_comprehension(x):
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    return [v * 2.0 for v in d.values() if v > 1.0]


def nested_comprehension(x):
    d = {"a": x.sum()}
    if x.sum() > 0:
        d["b"] = x.max()
    return [v * w for v in d.values() for w in (1.0, 2.0)]


def _comprehension_ref(x, fn):
    values = [x.sum()] + ([x.max()] if x.sum() > 0 else [])
    if fn is comprehended:
        return [v * 2.0 for v in values]
    if fn is filtered_comprehension:
        return [v * 2.0 for v in values if v > 1.0]
    return [v * w for v in values for w in (1.0, 2.0)]


@pytest.mark.parametrize("fn", [comprehended, filtered_comprehension, nested_comprehension])
def test_comprehensions_over_the_values_follow_the_run(fn):
    """Refused until a comprehension over such a dict converted as the `for` statement over
    it does (each key's item under its presence flag: `comp_arrays`)."""
    static = d2s.to_static(fn, full_graph=True)
    for xv in ([0.5, 2.0], [-0.5, -2.0], [0.25, 0.5]):
        want, got = fn(rt.to_tensor(xv)), static(rt.to_tensor(xv))
        ref = _comprehension_ref(np.array(xv, "float32"), fn)
        got_values = got.numpy().tolist() if isinstance(got, rt.Tensor) else [
            float(v) for v in got]
        want_values = want.numpy().tolist() if isinstance(want, rt.Tensor) else [
            float(v) for v in want]
        assert type(got) is type(want)
        np.testing.assert_allclose(got_values, want_values, rtol=1e-6)
        np.testing.assert_allclose(got_values, np.float32(ref), rtol=1e-6)
    assert len(static.program_cache) == 1


def test_a_returned_dict_with_such_a_key_has_the_keys_of_the_run():
    static = d2s.to_static(returned, full_graph=True)
    for xv, keys in (([0.5, 2.0], ["a", "b"]), ([-0.5, -2.0], ["a"])):
        for fn in (returned, static):
            d = fn(rt.to_tensor(xv))
            assert list(d) == keys
            assert float(d["a"]) == float(np.sum(np.float32(xv)))
    assert len(static.program_cache) == 1


class Counter:
    def __init__(self):
        self.seen = {"n": rt.to_tensor(0.0)}


def kept_on_an_object(x, counter):
    if x.sum() > 0:
        counter.seen["pos"] = x.sum()
    return x * 2.0


def test_a_dict_that_outlives_the_call_has_the_key_where_the_run_set_it():
    """An object kept between calls: after each call its dict holds the key where the run
    took the branch (and keeps what it held elsewhere), as eager code leaves it."""
    static = d2s.to_static(kept_on_an_object, full_graph=True)
    ce, cs = Counter(), Counter()
    for xv in ([-1.0], [-2.0], [1.5], [-3.0], [2.5]):
        for fn, c in ((kept_on_an_object, ce), (static, cs)):
            np.testing.assert_allclose(fn(rt.to_tensor(xv), c).numpy(), np.float32(xv) * 2)
        assert list(cs.seen) == list(ce.seen)
        assert [float(v) for v in cs.seen.values()] == [float(v) for v in ce.seen.values()]
        assert all(type(v) is rt.Tensor for v in cs.seen.values())


def guarded(x):
    """The common guard: read the key under `if 'k' in d`; count the keys in a loop."""
    d = {"a": x}
    if x.sum() > 0:
        d["b"] = x * 2.0
    if "b" in d:
        y = d["b"] * 3.0
    else:
        y = x - 1.0
    n = 0
    for _ in range(len(d)):
        n += 1
    return y, n


@pytest.mark.parametrize("xv", [[1.0, 2.0], [-1.0, -2.0]])
def test_a_read_guarded_by_in_and_a_loop_over_len(xv):
    static = d2s.to_static(guarded, full_graph=True)
    x = np.asarray(xv, np.float64)
    want = (x * 6.0, 2) if x.sum() > 0 else (x - 1.0, 1)
    for got in (guarded(rt.to_tensor(xv)), static(rt.to_tensor(xv))):
        np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-6)
        assert int(got[1]) == want[1]
