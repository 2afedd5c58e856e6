"""`list(lst)` / `tuple(lst)` of a list that is a tensor array (its length depends on a
tensor): a copy of the array in the program, stacked, indexed, iterated and differentiated as
eager's list of tensors; appending to the copy leaves the original as it was, and the tuple
copy has no list methods, as in Python."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import check, check_grad, t


def collect_then_copy(x):
    steps = []
    h = x
    i = 0
    while i < rt.sum(x):              # a graph loop: `steps` becomes a tensor array
        h = h * 0.5 + x
        steps.append(h)
        i += 1
    kept = list(steps)                # a copy: appending to it leaves `steps` as it was
    kept.append(x * 10.0)
    frozen = tuple(steps)
    total = rt.stack(kept).sum(axis=0) + len(frozen)
    for s in tuple(reversed(frozen)):
        total = total * 0.5 + s
    return total + len(steps)


def ref_collect_then_copy(x):
    steps, h = [], x
    for _ in range(int(np.ceil(x.sum()))):
        h = h * 0.5 + x
        steps.append(h)
    kept = list(steps)
    kept.append(x * 10.0)
    frozen = tuple(steps)
    total = np.stack(kept).sum(axis=0) + len(frozen)
    for s in tuple(reversed(frozen)):
        total = total * 0.5 + s
    return total + len(steps)


def test_list_and_tuple_of_a_tensor_array_match_eager_on_every_length():
    check(collect_then_copy, ref_collect_then_copy,
          [([1.0, 2.0],), ([0.25, 0.5],), ([-1.0, 0.5],), ([2.0, 1.5],)])


def test_gradient_through_the_copies_matches_finite_differences():
    # (points whose sums are away from integers: no jump in the length)
    check_grad(collect_then_copy, ref_collect_then_copy, [[1.2, 1.5], [0.3, 0.4]])


def pairs_copied(x):
    pairs = []
    k = 0
    while k < rt.sum(x):
        pairs.append((x * (k + 1), x.sum() * k))
        k += 1
    out = x * 0.0
    for a, b in list(pairs):          # a list of tuples: one array per part, copied
        out = out + a * b
    return out


def ref_pairs_copied(x):
    out = x * 0.0
    for k in range(int(np.ceil(x.sum()))):
        out = out + (x * (k + 1)) * (x.sum() * k)
    return out


def test_list_of_a_structure_array_matches_eager():
    check(pairs_copied, ref_pairs_copied, [([1.0, 2.0],), ([0.25, 0.5],), ([-1.0, 0.5],)])


def append_to_tuple_copy(x):
    seen = []
    while len(seen) < rt.sum(x):
        seen.append(x)
    frozen = tuple(seen)
    frozen.append(x)                  # as in eager: a tuple has no append
    return frozen


def test_a_tuple_copy_has_no_list_methods_as_in_eager():
    with pytest.raises(AttributeError, match="'tuple' object has no attribute 'append'"):
        append_to_tuple_copy(t([1.0, 2.0]))
    with pytest.raises(AttributeError, match="'tuple' object has no attribute 'append'"):
        d2s.to_static(append_to_tuple_copy)(t([1.0, 2.0]))
