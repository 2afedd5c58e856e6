"""Dict keys a graph loop's body removes (issue 35): a pending value consumed on every trip
(`h = h + d.pop("a", zeros)`, `del d["tmp"]`), or under a tensor `if` from a dict the loop
does not carry by name (one held in a list, a Layer's `self.cache`). Eager code has the key
after the loop only where no trip ran (and a second `del` raises KeyError); all of these were
refused at the loop. Now the loop carries the key's presence flag (true on entry), so `len`,
`in`, `.get`, `sorted`, a returned dict and eager's KeyError follow the run. A key the body
pops and sets again moves to the end of the dict in eager code after a trip: the order read
is refused at the user's line (the program gave the entry order, silently). Eager vs static
vs NumPy over zero, one and three trips, through one program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

from .messages import assert_at_user_line
from .test_small_refusals import line_of

ROWS = ([1.0, 2.0, -1.0],    # three trips, x[0] > 0.5
        [-1.0, -2.0, 0.5],   # no trip
        [0.2, 0.5, 1.0],     # one trip, x[0] <= 0.5
        [0.7, -0.5, 1.0])    # one trip (0.5 + 1 -> 1), x[0] > 0.5


def _trips(x):
    return rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")


def consumed(x):
    """A pending bonus used up by the first trip; later trips get the default."""
    h = x * 1.0
    pending = {"bonus": h * 2.0, "scale": h}
    for _ in range(_trips(x)):
        h = h + pending.pop("bonus", x * 0.0)
    return h, len(pending), "bonus" in pending, sorted(pending), pending


def consumed_ref(x):
    h, pending = x.copy(), {"bonus": x * 2.0, "scale": x}
    for _ in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        h = h + pending.pop("bonus", x * 0.0)
    return h, len(pending), "bonus" in pending, sorted(pending)


def dropped_once(x):
    state = {"tmp": x * 1.0, "sum": x * 0.0}
    i = rt.zeros([], "int64")
    while i < rt.minimum(_trips(x), rt.full([], 1, "int64")):
        state["sum"] = state["sum"] + state["tmp"]
        del state["tmp"]
        i = i + 1
    return state


def dropped_every_trip(x):
    state = {"tmp": x * 1.0}
    for _ in range(_trips(x)):
        del state["tmp"]
    return len(state)


class Streaming:
    """A Layer-like step whose cache entry is consumed under a tensor `if` in a graph loop."""

    def __init__(self):
        self.cache = None

    def __call__(self, x):
        self.cache = {"k": x * 3.0}
        h = x * 1.0
        for _ in range(_trips(x)):
            if x[0] > 0.5:
                h = h + self.cache.pop("k", x * 0.0)
        return h, len(self.cache), "k" in self.cache


def streaming_ref(x):
    cache, h = {"k": x * 3.0}, x.copy()
    for _ in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        if x[0] > 0.5:
            h = h + cache.pop("k", x * 0.0)
    return h, len(cache), "k" in cache


def held_in_a_list(x):
    d = {"a": x * 2.0, "b": x}
    box = [d]
    h = x * 1.0
    for _ in range(_trips(x)):
        if x[0] > 0.5:
            h = h + box[0].pop("a", x * 0.0)
    return h, len(d), sorted(d), d.get("a", x - 9.0)


def moved_to_the_end(x):
    d = {"a": x * 1.0, "b": x}
    for _ in range(_trips(x)):
        v = d.pop("a")
        d["a"] = v + 1.0
    return d["a"], len(d), list(d)


def _tensors(xs):
    return rt.to_tensor(np.asarray(xs, "float32")), np.asarray(xs, "float32")


def test_a_key_consumed_on_every_trip():
    static = d2s.to_static(consumed)
    for xs in ROWS:
        x, a = _tensors(xs)
        got, want = static(x), consumed(x)
        assert_same_leaves(got, want)
        ref = consumed_ref(a)
        np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-6)
        assert got[1:4] == ref[1:]
        assert type(got[4]) is dict and list(got[4]) == list(want[4])
    assert len(static.program_cache) == 1


def test_a_key_deleted_by_the_loop():
    static = d2s.to_static(dropped_once)
    for xs in ROWS:
        x, _ = _tensors(xs)
        assert_same_leaves(static(x), dropped_once(x))
    assert len(static.program_cache) == 1


def test_a_second_del_raises_eagers_key_error_at_the_line():
    static = d2s.to_static(dropped_every_trip)
    for xs in ROWS[1:]:  # (no trip, one trip)
        x, _ = _tensors(xs)
        assert static(x) == dropped_every_trip(x)
    x, _ = _tensors(ROWS[0])  # three trips: the second `del` finds no key
    with pytest.raises(KeyError):
        dropped_every_trip(x)
    with pytest.raises(KeyError) as info:
        static(x)
    assert_at_user_line(info.value, __file__, line_of(dropped_every_trip, 'del state["tmp"]'))


def test_a_cache_on_self_consumed_under_a_tensor_if():
    layer = Streaming()
    static = d2s.to_static(layer.__call__)
    for xs in ROWS:
        x, a = _tensors(xs)
        got = static(x)
        assert_same_leaves(got, layer(x))
        ref = streaming_ref(a)
        np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-6)
        assert got[1:] == ref[1:]


def test_a_dict_held_in_a_list():
    static = d2s.to_static(held_in_a_list)
    for xs in ROWS:
        x, _ = _tensors(xs)
        assert_same_leaves(static(x), held_in_a_list(x))
    assert len(static.program_cache) == 1


def test_a_key_moved_to_the_end_refuses_reading_the_order():
    x, _ = _tensors(ROWS[0])
    assert moved_to_the_end(x)[2] == ["b", "a"]
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(moved_to_the_end)(x)
    text = assert_at_user_line(info.value, __file__,
                               line_of(moved_to_the_end, "return d[\"a\"], len(d), list(d)"))
    assert "order of the keys" in text


def del_of_a_key_on_one_path(x):
    d = {"a": x * 1.0}
    if x.sum() > 0:
        d["b"] = x
    try:  # (eager's KeyError where the if did not set it)
        del d["b"]
        removed = 1
    except KeyError:
        removed = 0
    del d["a"]
    return len(d), removed


def test_del_of_a_key_a_tensor_if_set_on_one_path():
    # (`del d[k]` removed it silently on the path where eager code raises KeyError)
    static = d2s.to_static(del_of_a_key_on_one_path)
    for xs in ROWS:
        x, _ = _tensors(xs)
        assert static(x) == del_of_a_key_on_one_path(x)
    assert len(static.program_cache) == 1


def dropped_if_present(x):
    """`cache.pop(k, None)`: remove the entry if there is one (the result unused)."""
    cache = {"a": x * 1.0, "b": x}
    for _ in range(_trips(x)):
        cache.pop("a", None)
    return cache


def maybe_bias(x):
    extra = {}
    if x.sum() > 0:
        extra["bias"] = x * 2.0
    bias = extra.get("bias", None)
    h = x * 1.0
    if bias is not None:
        h = h + bias
    return h, bias, extra.pop("bias", None)


def test_none_defaults_of_keys_on_some_paths():
    # (refused at the line before: the default would be the result on the other paths)
    for fn in (dropped_if_present, maybe_bias):
        static = d2s.to_static(fn)
        for xs in ROWS:
            x, _ = _tensors(xs)
            assert_same_leaves(static(x), fn(x))
        assert len(static.program_cache) == 1


def bias_used_as_a_tensor(x):
    extra = {}
    if x.sum() > 0:
        extra["bias"] = x * 2.0
    bias = extra.get("bias")
    return bias + 1.0


def test_using_the_none_default_as_a_tensor_raises_at_the_line():
    x, _ = _tensors(ROWS[1])
    with pytest.raises(TypeError):
        bias_used_as_a_tensor(x)
    with pytest.raises(TypeError) as info:
        d2s.to_static(bias_used_as_a_tensor)(x)
    assert_at_user_line(info.value, __file__,
                        line_of(bias_used_as_a_tensor, 'bias = extra.get("bias")'))
