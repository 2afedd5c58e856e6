"""A Python set that the two branches of a tensor `if` change differently holds, after the
`if`, items only the run decides. Code after the `if` that reads it is refused: at the `if`
where a branch calls the set's methods (`tags.add`), else (a helper changed it) at each
converted read (`in`, `len()`, loops, and the builtins and comparisons that used to see the
items of both branches silently: `sorted`, `list`, `tuple`, `set`, `frozenset`, `min`,
`max`, `any`, `all`, `sum`, `enumerate`, `zip`, `==`, `!=`; a comprehension or
generator over it, too, through the `if`). A set changed alike in both branches still
converts and gives eager's result."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt

READS = {
    "sorted": lambda s: len(sorted(s)),
    "list": lambda s: len(list(s)),
    "tuple": lambda s: len(tuple(s)),
    "set": lambda s: len(set(s)),
    "frozenset": lambda s: len(frozenset(s)),
    "max": lambda s: max(s),
    "min": lambda s: min(s),
    "any": lambda s: int(any(s)),
    "all": lambda s: int(all(s)),
    "sum": lambda s: sum(s),
    "enumerate": lambda s: len([i for i, _ in enumerate(s)]),
    "zip": lambda s: len(list(zip(s, s))),
    "eq": lambda s: int(s == {0, 1}),
    "ne": lambda s: int(s != {0, 1}),
}


def _tag(tags, k):
    tags.add(k)


def _make(read, by_helper):
    def tag_count(x):
        tags = {0}
        if by_helper:  # (a Python decision: one branch of the tensor if below is traced)
            if x.mean() > 0:
                _tag(tags, 1)
            else:
                _tag(tags, 2)
        elif x.mean() > 0:
            tags.add(1)
        else:
            tags.add(2)
        return x * read(tags)
    return tag_count


@pytest.mark.parametrize("by_helper", [False, True], ids=["method", "helper"])
@pytest.mark.parametrize("name", sorted(READS))
def test_reading_an_undecided_set_is_refused(name, by_helper):
    fn = _make(READS[name], by_helper)
    x = rt.to_tensor(np.ones(3, "float32"))
    fn(x)  # eager runs
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn)(x)
    message = str(info.value)
    assert ("leave holding other items" if by_helper else
            "code after the if reads it") in message, message
    assert "test_undecided_set_reads.py" in message
    for internal in ("_retval", "Variable(%", "<undefined"):
        assert internal not in message


def test_a_set_changed_alike_in_both_branches_converts():
    def count(x):
        tags = {"seen"}
        if x.mean() > 0:
            tags.add("any")
            y = x * 2.0
        else:
            tags.add("any")
            y = x - 1.0
        return y * len(sorted(tags)), len(list(tags))

    static = d2s.to_static(count)
    for sign in (1.0, -1.0):  # both branches through one program
        x_np = np.full(3, sign, "float32")
        want = (x_np * 2.0 if sign > 0 else x_np - 1.0) * 2.0
        e_y, e_n = count(rt.to_tensor(x_np))
        s_y, s_n = static(rt.to_tensor(x_np))
        np.testing.assert_allclose(s_y.numpy(), want)
        np.testing.assert_allclose(e_y.numpy(), want)
        assert type(s_n) is int and s_n == e_n == 2
