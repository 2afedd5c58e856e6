"""A dict whose key a tensor `if` sets on some paths only, given to a standard-library
function or class converted code calls as it is (`collections.deque(d)`,
`itertools.chain(d, more)`, `json.dumps(d)`) or added to a list (`names += d`), issue 33:
these read the keys of every path, where eager code has this run's keys (`len(deque(d))` was
2 on runs without the key, silently). Refused at the user's line, as `list.extend(d)` and
`dict.fromkeys(d)` are (`operators.key_flags.checked_call`); the same calls of dicts whose
keys every path sets convert. Eager vs static over inputs taking both branches."""
from __future__ import annotations

import collections
import itertools
import json

import numpy as np
import pytest

import d2s
import runtime as paddle
from d2s.errors import ConversionError

XS = [np.array([1.0, 2.0], "float32"), np.array([-3.0, 1.0], "float32")]


def _scores(x, always):
    d = {"loss": 1}
    if x.mean() > 0 or always:
        d["aux"] = 2
    return d


def queued(x, always=False):
    d = _scores(x, always)
    return len(collections.deque(d, maxlen=4))


def chained(x, always=False):
    d = _scores(x, always)
    return list(itertools.chain(d, ["total"]))


def extended(x, always=False):
    d = _scores(x, always)
    names = ["total"]
    names += d
    return names


def dumped(x, always=False):
    d = _scores(x, always)
    return json.dumps(d, sort_keys=True)


CASES = [(queued, "deque()", "collections.deque(d, maxlen=4)"),
         (chained, "chain()", 'itertools.chain(d, ["total"])'),
         (extended, "`+=`", "names += d"),
         (dumped, "dumps()", "json.dumps(d, sort_keys=True)")]


@pytest.mark.parametrize("fn, what, line", CASES)
def test_keys_on_some_paths_are_refused_at_the_line(fn, what, line):
    eager = [fn(paddle.to_tensor(x)) for x in XS]
    assert eager[0] != eager[1]  # (the runs see different keys)
    static = d2s.to_static(fn)
    for x in XS:
        with pytest.raises(ConversionError) as info:
            static(paddle.to_tensor(x))
        text = str(info.value)
        assert what in text and line in text and "'aux'" in text
        assert "Variable" not in text and "NumberOrTensor" not in text


@pytest.mark.parametrize("fn, what, line", CASES)
def test_keys_on_every_path_convert(fn, what, line):
    static = d2s.to_static(fn)
    for x in XS:
        eager = fn(paddle.to_tensor(x), True)
        got = static(paddle.to_tensor(x), True)
        assert got == eager and type(got) is type(eager)
