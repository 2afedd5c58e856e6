"""A tensor `if` whose branch rebinds a list name to a list of another length: the name
becomes a tensor array, and the old list, which no branch changed, stays as it was for every
other reference to it (as in Python). Only a list changed in place needs a single name."""
import numpy as np
import pytest

import d2s
import runtime as rt


def rebind(x, y):
    xs = [x, y]
    keep = xs                       # another reference to the old list
    if rt.mean(x) > 0:
        xs = [x, y, x + y]
    return len(xs), rt.stack(xs).sum(0), len(keep), keep[1]


def grow_in_place(x, y):
    xs = [x, y]
    keep = xs
    if rt.mean(x) > 0:
        xs.append(x + y)            # changes the object `keep` also names
    return len(xs), len(keep)


def test_rebinding_a_list_in_one_branch():
    static = d2s.to_static(rebind)
    y = np.array([0.5, 4.0], "float32")
    for xv in ([1.0, 2.0], [-1.0, -3.0]):  # both branches through one program
        x = np.array(xv, "float32")
        items = [x, y, x + y] if x.mean() > 0 else [x, y]
        for fn in (rebind, static):
            n, total, n_keep, kept = fn(rt.to_tensor(x), rt.to_tensor(y))
            assert int(n) == len(items) and int(n_keep) == 2
            np.testing.assert_allclose(total.numpy(), np.stack(items).sum(0))
            np.testing.assert_allclose(kept.numpy(), y)
    assert len(static.program_cache) == 1


def test_growing_an_aliased_list_in_place_is_refused_naming_the_other_reference():
    with pytest.raises(d2s.StateChangeError, match="'xs'.*keep"):
        d2s.to_static(grow_in_place)(rt.to_tensor(np.ones(2, "float32")),
                                     rt.to_tensor(np.ones(2, "float32")))
