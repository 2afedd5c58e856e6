"""A table indexed by a number the program computes (`ID_TO_TOKEN[int(t)]`,
`SCALES[int(x.argmax()) + 1]`, `buckets[int(n)]`), on a run whose key is no key of the table
or whose index is out of range: the program raises eager's exception, with eager's
argument: `KeyError: 7` (the run's key, as eager's; before: a description of the dict's
keys), `IndexError: list index out of range`. Other runs give eager's items."""
import numpy as np
import pytest

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves

ID_TO_TOKEN = {0: "<pad>", 1: "hello", 2: "world", 5: "<eos>"}
SCALES = {0: 0.5, 1: 1.0, 2: 2.0}
BUCKETS = [8, 16, 32]
ROWS = ([0.1, 0.2, 3.0], [2.0, -1.0, -3.0], [-1.0, 4.0, 0.5], [0.0, 0.0, 0.0])


def _x(row):
    return rt.to_tensor(np.asarray(row, "float32"))


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001
        return type(e), e.args


def _same_on_every_row(fn, *extra):
    static = d2s.to_static(fn)
    errors = 0
    for row in ROWS:
        want, got = _outcome(fn, _x(row), *extra), _outcome(static, _x(row), *extra)
        assert got[0] is want[0], (row, got, want)
        if want[0] == "ok":
            assert_same_leaves(got[1], want[1], f"row {row}")
        else:
            assert got[1] == want[1], (row, got, want)  # (the args: the run's key)
            errors += 1
    cache = static.forward.program_cache if isinstance(static, rt.nn.Layer) else \
        static.program_cache
    assert errors and len(cache) == 1
    return static


def decode_next(ids):
    """A tokenizer's next token: the id after the best one (2 + 1 = 3 is no id)."""
    return ID_TO_TOKEN[int(ids.argmax()) + 1]


def test_token_table_raises_keyerror_of_the_run_key():
    static = _same_on_every_row(decode_next)
    with pytest.raises(KeyError) as e:
        static(_x(ROWS[0]))
    assert str(e.value) == "3"  # (eager's `KeyError: 3`)


class Scaled(rt.nn.Layer):
    """A layer reading a per-class scale (a float table) by a computed class id."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def forward(self, x):
        cls = int(x.argmax()) + int(x.sum() > 1.0)
        return x * self.table[cls], self.table[cls]


def test_float_table_on_self_raises_keyerror_of_the_run_key():
    _same_on_every_row(Scaled(SCALES))


def tensor_rows(x):
    rows = {0: x * 2.0, 1: x + 1.0, 2: -x}
    return rows[int(x.argmin()) * 3]  # (keys 3, 6: eager's KeyError of that key)


def test_table_of_tensors_raises_keyerror_of_the_run_key():
    _same_on_every_row(tensor_rows)


def bucket_of(x, shift):
    return BUCKETS[int(x.argmax()) + shift]


@pytest.mark.parametrize("shift", [1, -4])
def test_list_index_out_of_range_is_eagers(shift):  # (as it was: kept by this test)
    _same_on_every_row(bucket_of, shift)


def prior_or_none(x):
    """A per-class prior that only some classes have: None elsewhere, as eager's `.get`."""
    prior = SCALES.get(int(x.argmax()) + int(x.sum() > 1.0))
    if prior is None:
        return x, prior
    return x * prior, prior


def weight_or_none(x):
    weights = {0: x * 2.0, 1: x + 1.0}
    w = weights.get(int(x.argmin()))
    return w, w is None


@pytest.mark.parametrize("fn", [prior_or_none, weight_or_none])
def test_get_without_default_is_none_on_the_runs_eager_gives_none(fn):
    static = d2s.to_static(fn)
    nones = set()
    for row in ROWS:  # (before: a KeyError when the program ran, where eager gives None)
        got, want = static(_x(row)), fn(_x(row))
        assert_same_leaves(got, want, f"row {row}")
        nones.add(want[1] is None or want[1] is True)
    assert nones == {True, False} and len(static.program_cache) == 1
