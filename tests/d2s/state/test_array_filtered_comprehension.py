"""A comprehension or generator expression with a tensor filter over a list that is a tensor
array (grown in a graph loop): one graph loop that appends under a graph `if` (it raised an
internal error naming a Variable 'created inside a cond/while block')."""
import numpy as np

import runtime as rt

from .helpers import check, check_grad


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
    # (points whose sums are away from integers: no jump in the length)
    check_grad(keep_positive_steps, ref_keep_positive_steps, [[1.2, 1.5], [0.3, 0.4], [-1.2, 0.6]])
