"""Found by the observe-sets generator (seed 29002): a set that the branches of a tensor `if`
leave holding other items was refused at the `if` ("code after the if can read it as alias")
whenever another local name held it (`alias = [tags]`), though no code after the `if` read
that name: eager code runs, and nothing can observe which items the set holds. Now a local
alias counts only where the code after the `if` reads it (or a nested function closes over
it, or a Python loop around the `if` may run earlier code again); the set read later through
it is still refused by that name."""
import numpy as np
import pytest

import d2s
import runtime as rt


def mark(s, item):
    s.add(item)


def unread_alias(x, scale):
    h = x * scale
    tags = {0}
    alias = [tags]
    n = len(alias)
    if rt.mean(x) > 0.0:
        return h * 2.0, n
    mark(tags, 2)
    return h + 1.0, n


def alias_read_after(x, scale):
    h = x * scale
    tags = {0}
    alias = [tags]
    if rt.mean(x) > 0.0:
        mark(tags, 2)
        h = h * 2.0
    return h + len(alias[0])


def alias_read_next_trip(x, scale):
    h = x * scale
    tags = {0}
    alias = [tags]
    for i in range(2):
        h = h + len(alias[0])
        if rt.mean(x) > 0.0:
            mark(tags, i + 5)
    return h


def both_names(x, scale):
    h = x * scale
    tags = {0}
    alias = [tags]
    if rt.mean(x) > 0.0:
        mark(tags, 0)
        return h * 2.0
    if rt.sum(h) > 1.0:
        h = h + 1.0
    else:
        mark(alias[0], 3)
    return h - 1.0


def closure_reads_later(x, scale):
    h = x * scale
    tags = {0}
    alias = [tags]

    def size():
        return len(tags)
    if rt.mean(x) > 0.0:
        mark(alias[0], 2)
        h = h * 2.0
    return h + size()


INPUTS = ([1.25, 0.25, 1.25], [-1.25, 0.75, -1.75])


def test_a_set_whose_alias_nothing_reads_after_the_if_converts():
    static = d2s.to_static(unread_alias)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        want, got = unread_alias(x, 1.5), static(x, 1.5)
        ref = np.array(xv, "float32") * 1.5
        ref = ref * 2.0 if np.mean(xv) > 0 else ref + 1.0
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
        np.testing.assert_allclose(got[0].numpy(), ref, rtol=1e-6)
        assert type(got[1]) is int and got[1] == want[1] == 1


def test_a_set_changed_through_two_names_that_nothing_reads_after_converts():
    static = d2s.to_static(both_names)
    for xv in INPUTS + ([0.25, 0.5, 0.125],):
        x = rt.to_tensor(np.array(xv, "float32"))
        h = np.array(xv, "float32") * 1.5
        ref = h * 2.0 if h.mean() > 0 else (h + 1.0 if h.sum() > 1.0 else h) - 1.0
        np.testing.assert_allclose(static(x, 1.5).numpy(), both_names(x, 1.5).numpy())
        np.testing.assert_allclose(static(x, 1.5).numpy(), ref, rtol=1e-6)


def _reference(xv, added):
    h = np.array(xv, "float32")
    return (h * 2.0 if h.mean() > 0 else h) + (added if h.mean() > 0 else 1)


@pytest.mark.parametrize("fn", [closure_reads_later, alias_read_after])
def test_a_set_read_later_through_a_closure_or_alias_follows_the_run(fn):
    """`len()` of it through a function defined before the `if`, or through the alias (refused
    at the `if` before)."""
    static = d2s.to_static(fn)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        np.testing.assert_allclose(static(x, 1.0).numpy(), fn(x, 1.0).numpy())
        np.testing.assert_allclose(static(x, 1.0).numpy(), _reference(xv, 2), rtol=1e-6)


def test_a_set_changed_again_on_the_next_trip_follows_the_run():
    """A second tensor `if` (the next trip of a Python loop) adding another item: each item
    its own flag."""
    static = d2s.to_static(alias_read_next_trip)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        h = np.array(xv, "float32")
        ref = h + 1 + (2 if h.mean() > 0 else 1)
        np.testing.assert_allclose(static(x, 1.0).numpy(), alias_read_next_trip(x, 1.0).numpy())
        np.testing.assert_allclose(static(x, 1.0).numpy(), ref, rtol=1e-6)
