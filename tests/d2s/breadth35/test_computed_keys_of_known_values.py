"""Dict keys computed by the converted code that hold one of a few values known while
tracing (issue 35): a bool (`bool(t)`) or an int of one (`int(x[0] > 0.5)`, a bucket of a
routing table, a sign bin). Stored under a tensor `if`, in a display beside a Python key it
may equal (`{0: a, int(t > 0): b}`), or beside keys it may not equal, such a store was
refused at the line (or raised "eager code would add it" when the program ran). Now each of
its values is a key of the dict holding the item where the key equals it, with a presence
flag: `len`, `in`, `.get`, `.pop`, a plain `for` over `.items()`, key order, a returned dict
and eager's KeyError follow the run. A key whose values only the run knows (`int(x.argmax())`)
stays refused at the user's line under a tensor `if`. Eager vs static vs NumPy over inputs
taking each path through one program."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

from .messages import assert_at_user_line
from .test_small_refusals import line_of

ROWS = ([1.0, 2.0, -1.0],    # sum > 0, x[0] > 0.5, x[1] > 0
        [-1.0, -2.0, 0.5],   # sum < 0, x[0] <= 0.5, x[1] <= 0
        [0.2, 3.0, -1.0],    # sum > 0, x[0] <= 0.5, x[1] > 0
        [0.75, -3.0, 1.0])   # sum < 0, x[0] > 0.5, x[1] <= 0


def _bucket(x):
    return int(x[0] > 0.5)


def routed(x):
    """A routing table filled under a tensor `if` through a helper's key."""
    h = x * 1.0
    table = {}
    if x.sum() > 0:
        table[_bucket(x)] = h * 2.0
    out = h * 0.0
    for k, v in table.items():
        out = out + v * (k + 1)
    return out, len(table), 1 in table, table.get(0, h - 5.0), sorted(table)


def routed_ref(x):
    table = {}
    if x.sum() > 0:
        table[int(x[0] > 0.5)] = x * 2.0
    out = x * 0.0
    for k, v in table.items():
        out = out + v * (k + 1)
    return out, len(table), 1 in table, table.get(0, x - 5.0), sorted(table)


def sign_bins(x):
    """A display whose computed key may equal its Python key: one key or two."""
    bins = {0: x * 0.0, int(x[1] > 0.0): x + 1.0}
    return len(bins), bins[0], bins.get(1, x - 1.0), list(bins)


def sign_bins_ref(x):
    bins = {0: x * 0.0, int(x[1] > 0.0): x + 1.0}
    return len(bins), bins[0], bins.get(1, x - 1.0), list(bins)


class Counter:
    """The fuzzer's shape, in a Layer: a flag table keyed by a bool, beside a Python key."""

    def __init__(self):
        self.scale = 2.0

    def __call__(self, x):
        seen = {1: 0.5}
        h = x * self.scale
        if h.mean() > 0.0:
            if h[1] > 0.0:
                seen[bool(h[0] > 1.0)] = 1.5
            else:
                seen[2] = 2.5
        return len(seen), seen.get(True, 0.0), seen.get(False, 0.0), seen.get(2, 0.0)


def counter_ref(x):
    seen, h = {1: 0.5}, x * 2.0
    if h.mean() > 0.0:
        if h[1] > 0.0:
            seen[bool(h[0] > 1.0)] = 1.5
        else:
            seen[2] = 2.5
    return len(seen), seen.get(True, 0.0), seen.get(False, 0.0), seen.get(2, 0.0)


def returned(x):
    d = {"base": x}
    if x.sum() > 0:
        d[int(x[0] > 0.5)] = x * 2.0
    return d


def popped(x):
    t = {}
    t[int(x[0] > 0.5)] = 3
    v = t.pop(1, 9)
    return v, len(t), 0 in t


def read_of_the_other_key(x):
    d = {}
    d[int(x[0] > 0.5)] = x * 2.0
    return d[1]


def argmax_key(x):
    d = {}
    if x.sum() > 0:
        d[int(x.argmax())] = 1
    return len(d)


def _tensors(xs):
    return rt.to_tensor(np.asarray(xs, "float32")), np.asarray(xs, "float32")


def _same_as_ref(got, ref):
    for g, r in zip(got, ref, strict=True):
        if isinstance(g, rt.Tensor):
            np.testing.assert_allclose(g.numpy(), r, rtol=1e-6)
        else:
            assert g == r and type(g) is type(r), (g, r)


def test_a_table_filled_under_a_tensor_if_follows_the_run():
    static = d2s.to_static(routed)
    for xs in ROWS:
        x, a = _tensors(xs)
        got = static(x)
        assert_same_leaves(got, routed(x))
        _same_as_ref(got, routed_ref(a))
    assert len(static.program_cache) == 1


def test_a_display_with_a_key_that_may_equal_its_python_key():
    static = d2s.to_static(sign_bins)
    for xs in ROWS:
        x, a = _tensors(xs)
        got = static(x)
        assert_same_leaves(got, sign_bins(x))
        _same_as_ref(got, sign_bins_ref(a))
    assert len(static.program_cache) == 1


def test_a_bool_key_in_nested_ifs_beside_python_keys():
    counter = Counter()
    static = d2s.to_static(counter.__call__)
    for xs in ROWS:
        x, a = _tensors(xs)
        got = static(x)
        assert got == counter(x) == counter_ref(a)
        assert [type(v) for v in got] == [int, float, float, float]
    assert len(static.program_cache) == 1


def test_a_returned_dict_has_the_keys_of_the_run():
    static = d2s.to_static(returned)
    for xs in ROWS:
        x, _ = _tensors(xs)
        got, want = static(x), returned(x)
        assert type(got) is dict and list(got) == list(want)
        assert_same_leaves(got, want)


def test_pop_with_a_default_of_either_key():
    static = d2s.to_static(popped)
    for xs in ROWS:
        x, _ = _tensors(xs)
        assert static(x) == popped(x)


def test_reading_the_key_the_run_did_not_set_raises_eagers_key_error():
    static = d2s.to_static(read_of_the_other_key)
    x, _ = _tensors(ROWS[0])
    assert_same_leaves(static(x), read_of_the_other_key(x))
    x, _ = _tensors(ROWS[1])
    with pytest.raises(KeyError):
        read_of_the_other_key(x)
    with pytest.raises(KeyError):
        static(x)


def test_a_key_only_the_run_knows_stays_refused_at_the_users_line():
    x, _ = _tensors(ROWS[0])
    assert argmax_key(x) == 1
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(argmax_key)(x)
    assert_at_user_line(info.value, __file__, line_of(argmax_key, "d[int(x.argmax())]"))


def losses_by_head(x):
    """A loss dict keyed by the head a tensor `if` chose (a str the run decides)."""
    if x.sum() > 0:
        head = "cls"
    else:
        head = "reg"
    losses = {}
    losses[head] = x.mean()
    losses["total"] = x.sum()
    return losses, len(losses), "cls" in losses, sorted(losses)


def named_outputs(x):
    if x[0] > 0.5:
        name = "big"
    elif x[1] > 0:
        name = "mid"
    else:
        name = "small"
    return {"small": x * 0.0, name: x}


def read_by_the_chosen_name(x):
    d = {"a": x, "b": x * 2.0}
    if x[0] > 0.5:
        name = "a"
    else:
        name = "b"
    return d[name]


def test_a_str_chosen_by_a_tensor_if_as_a_dict_key():
    # (refused at the store before: the chosen str "is used as text")
    for fn in (losses_by_head, named_outputs):
        static = d2s.to_static(fn)
        for xs in ROWS:
            x, _ = _tensors(xs)
            got, want = static(x), fn(x)
            assert_same_leaves(got, want)
        assert len(static.program_cache) == 1


def test_a_read_by_a_chosen_str_picks_the_runs_item():
    # (refused at the line before; the dict's items are stacked and the run's is gathered:
    # `operators.python_picks`)
    static = d2s.to_static(read_by_the_chosen_name)
    for xs in ROWS:
        x, _ = _tensors(xs)
        assert_same_leaves(static(x), read_by_the_chosen_name(x))
    assert len(static.program_cache) == 1


def compared_with_empty(x):
    d = {}
    if x[0] > 0.5:
        d["a"] = 1.0
    return x + float(d == {})


def keys_compared(x):
    d = {}
    d[int(x[0] > 0.5)] = 1.0
    return x + float(d.keys() == {1})


@pytest.mark.parametrize("fn, line", [(compared_with_empty, "float(d == {})"),
                                      (keys_compared, "float(d.keys() == {1})")])
def test_comparing_a_dict_with_keys_on_some_paths_is_refused_at_the_line(fn, line):
    # (Python compared the keys the dict holds on every path: `d == {}` was False where
    # eager's is True, silently)
    x, _ = _tensors(ROWS[1])
    fn(x)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(x)
    text = assert_at_user_line(info.value, __file__, line_of(fn, line))
    assert "exists on some paths only" in text


def views_of_keys_on_some_paths(x):
    d = {"b": 1}
    if x[0] > 0.5:
        d["a"] = 2
    d[int(x[1] > 0.0)] = 3
    return len(d.keys()), "a" in d.keys(), 1 in d.keys(), len(d.values()), len(d.items())


def test_views_of_a_dict_with_keys_on_some_paths_follow_the_run():
    # (len() of a view and `in` a keys view counted the keys of every path, silently: 2 and
    # True where eager has 1 and False, for a key a tensor `if` set on one path)
    static = d2s.to_static(views_of_keys_on_some_paths)
    for xs in ROWS:
        x, _ = _tensors(xs)
        assert static(x) == views_of_keys_on_some_paths(x)
    assert len(static.program_cache) == 1


def value_in_values(x):
    d = {"b": 1}
    if x[0] > 0.5:
        d["a"] = 2
    return 2 in d.values()


def test_in_the_values_of_such_a_dict_is_refused_at_the_line():
    x, _ = _tensors(ROWS[0])
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(value_in_values)(x)
    assert_at_user_line(info.value, __file__, line_of(value_in_values, "2 in d.values()"))


def keys_minus(x):
    d = {"b": 1}
    if x[0] > 0.5:
        d["a"] = 2
    return len(d.keys() - {"b"})


def last_item(x):
    d = {"b": 1}
    if x[0] > 0.5:
        d["a"] = 2
    key, _ = d.popitem()
    return key


@pytest.mark.parametrize("fn, line", [(keys_minus, 'len(d.keys() - {"b"})'),
                                      (last_item, "d.popitem()")])
def test_set_algebra_of_keys_and_popitem_are_refused_at_the_line(fn, line):
    # (both read the keys of every path: 1 and 'a' where eager has 0 and 'b', silently)
    x, _ = _tensors(ROWS[1])
    fn(x)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(x)
    assert_at_user_line(info.value, __file__, line_of(fn, line))
