"""Found by the observe-sets generator (seeds 29001, 29002): a set that the branches of a
tensor `if` change differently, where the `if` also binds names it is not passed (the
returned value of an early `return`, a name first bound in a branch), was refused at the `if`
with the wrong name (`h is a set of size 1 ...`, `the returned value is a set ...`, `lengths
is a set ...`) and "code after the if can read it as seen", though nothing read it again:
the `if`'s record of the objects it may change paired its state names with the values passed
in by position, and the converter passes only the names bound before the `if`. Now a set
nothing reads after such an `if` converts, and one read after it (`len`) follows the run.
"""
import numpy as np

import d2s
import runtime as rt


def mark(s, item):
    s.add(item)


def early(x, scale):
    h = x * scale
    seen = {(0, 1)}
    lengths = [0.5]
    if rt.sum(h) > 1.0:
        seen -= {(1, 1)}
        lengths.append(3)
        return h, len(lengths), sum(lengths)
    mark(seen, (int(x[0] > 0.0), 0))
    return h + 1.0, len(lengths), sum(lengths)


def first_bound(x, scale):
    h = x * scale
    tags = {0}
    if rt.sum(h) > 1.0:
        tags.add(2)
        out = h * 2.0
    else:
        mark(tags, 1)
        out = h - 1.0
    return out


def read_after(x, scale):
    h = x * scale
    tags = {0}
    if rt.sum(h) > 1.0:
        tags.add(2)
        out = h * 2.0
    else:
        out = h - 1.0
    return out + len(tags)


def reference(xv, scale):
    h = np.array(xv, "float32") * scale
    if h.sum() > 1.0:
        return h, 2, 3.5
    return h + 1.0, 1, 0.5


INPUTS = ([1.25, 0.25, 1.25], [-1.25, 0.75, -1.75], [0.5, -2.0, 0.25])


def test_a_set_nothing_reads_after_an_early_return_converts():
    static = d2s.to_static(early)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        want = early(x, 1.5)
        got = static(x, 1.5)
        ref = reference(xv, 1.5)
        assert type(got[1]) is type(want[1]) is int and got[1] == want[1] == ref[1]
        assert type(got[2]) is type(want[2]) and got[2] == want[2] == ref[2]
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
        np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-6)


def test_a_set_beside_a_name_first_bound_in_the_branches_converts():
    static = d2s.to_static(first_bound)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        np.testing.assert_allclose(static(x, 1.0).numpy(), first_bound(x, 1.0).numpy())


def test_a_set_read_after_the_if_follows_the_run():
    """`len(tags)` after the `if` (refused by its own name before: now each item the branches
    differ on has a presence flag)."""
    static = d2s.to_static(read_after)
    for xv in INPUTS:
        x = rt.to_tensor(np.array(xv, "float32"))
        h = np.array(xv, "float32")
        ref = h * 2.0 + 2 if h.sum() > 1.0 else h - 1.0 + 1
        np.testing.assert_allclose(static(x, 1.0).numpy(), read_after(x, 1.0).numpy())
        np.testing.assert_allclose(static(x, 1.0).numpy(), ref, rtol=1e-6)
