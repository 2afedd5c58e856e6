"""A comprehension or generator expression with a tensor filter over a list that is a tensor
array (grown in a graph loop): one graph loop that appends under a graph `if` (it raised an
internal error naming a Variable 'created inside a cond/while block')."""
import numpy as np

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t


def keep_positive_steps(x):
    steps = []
    h = x
    i = 0
    while i < rt.sum(rt.abs(x)):      # a graph loop: `steps` becomes a tensor array
        h = h * -0.5 + x
        steps.append(h)
        i += 1
    kept = [s * 2.0 for s in steps if s.sum() > 0]
    total = sum((s.mean() for s in steps if s.max() > 1.0), rt.zeros([]))
    acc = x * 1.0
    for s in kept:
        acc = acc * 0.5 + s
    return acc + total + len(kept)


def ref_keep_positive_steps(x):
    steps, h = [], x
    for _ in range(int(np.ceil(np.abs(x).sum()))):
        h = h * -0.5 + x
        steps.append(h)
    kept = [s * 2.0 for s in steps if s.sum() > 0]
    total = sum(s.mean() for s in steps if s.max() > 1.0)
    acc = x * 1.0
    for s in kept:
        acc = acc * 0.5 + s
    return acc + total + len(kept)


def test_filtered_comprehensions_over_an_array_match_eager_on_every_path():
    # lengths 3, 1, 2, 4: some items kept, none kept, all kept
    check(keep_positive_steps, ref_keep_positive_steps,
          [([1.0, 2.0],), ([0.25, 0.5],), ([-1.0, 0.5],), ([2.0, 1.5],)])


def test_gradient_through_the_kept_items_matches_finite_differences():
    sf = d2s.to_static(keep_positive_steps)
    for xv in ([1.2, 1.5], [0.3, 0.4], [-1.2, 0.6]):
        x = t(xv)
        x.stop_gradient = False
        rt.sum(sf(x) * t([1.0, -2.0])).backward()
        want = numeric_grad(
            lambda a: float((ref_keep_positive_steps(a) * [1.0, -2.0]).sum()),
            np.asarray(xv, np.float64))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-3)
