"""A list grown (or shrunk) through a helper function or a closure inside a graph loop: when
the function's own variable is the only reference to it, that variable becomes a tensor array
carried by the loop; otherwise (an alias, an attribute) a clear refusal naming the loop."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import check, t


def push(lst, v):
    lst.append(v)


def take(lst):
    return lst.pop()


def grows_through_a_helper(x):
    outs = [x]
    i = 0
    while i < rt.sum(x):
        push(outs, x * i)
        i += 1
    return rt.stack(outs).sum(0) + len(outs) + outs[-1]


def ref_grows_through_a_helper(x):
    outs = [x] + [x * i for i in range(int(np.ceil(x.sum())))]
    return np.stack(outs).sum(0) + len(outs) + outs[-1]


def test_a_helper_appends_to_a_list_passed_to_it_in_a_graph_loop():
    check(grows_through_a_helper, ref_grows_through_a_helper,
          [([1.0, 2.0],), ([0.5, 0.5],), ([3.0, 1.0],)])


def closure_appends(x):
    outs = []

    def add(v):
        outs.append(v * 2.0)

    i = 0
    while i < rt.sum(x):
        add(x * i)
        i += 1
    s = x * 0.0
    for v in outs:                     # the array after the loop: for, len
        s = s + v
    return s + len(outs)


def ref_closure_appends(x):
    outs = [x * i * 2.0 for i in range(int(np.ceil(x.sum())))]
    return sum(outs, x * 0.0) + len(outs)


def test_a_closure_appends_to_an_empty_list_in_a_graph_loop():
    check(closure_appends, ref_closure_appends, [([1.0, 2.0],), ([0.5, 0.25],), ([2.0, 2.5],)])


def helper_pops(x):
    stack = [x, x * 2.0, x * 3.0, x * 4.0]
    total = x * 0.0
    while rt.sum(total) < rt.sum(x) * 4.0:
        total = total + take(stack)   # a helper pops from the list passed to it
    return total + len(stack)


def ref_helper_pops(x):
    stack, total = [x, x * 2.0, x * 3.0, x * 4.0], x * 0.0
    while total.sum() < x.sum() * 4.0:
        total = total + stack.pop()
    return total + len(stack)


def test_a_helper_pops_from_a_list_passed_to_it_in_a_graph_loop():
    check(helper_pops, ref_helper_pops, [([1.0, 2.0],), ([0.5, -0.25],), ([-1.0, -2.0],)])


def aliased_closure(x):
    outs = []
    keep = outs                        # another reference: it would miss the appends

    def add(v):
        outs.append(v)

    i = 0
    while i < rt.sum(x):
        add(x * i)
        i += 1
    return rt.stack(outs).sum() + len(keep)


def test_another_reference_is_refused_at_the_loop():
    # (a list held by one place only, a closure variable or an attribute, becomes a tensor
    # array there: test_held_lists.py)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(aliased_closure)(t([1.0, 2.0]))
    msg = str(info.value)
    assert "the list outs" in msg and "changes length inside a loop whose condition is a " \
        "tensor" in msg and "the local name 'keep'" in msg
    assert "line" in msg and "while i < rt.sum(x):" in msg


def closure_grows_in_one_branch(x):
    lst = [x * 1.0]

    def push(v):
        lst.append(v)

    if rt.mean(x) > 0:               # a graph loop in one branch only grows the list
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            push(x * k)
    return rt.stack(lst).sum(0) + len(lst)


def ref_closure_grows_in_one_branch(x):
    lst = [x * 1.0]
    if x.mean() > 0:
        k = 0.0
        while k < abs(x[0]) + 0.5:
            k += 1.0
            lst.append(x * k)
    return np.stack(lst).sum(0) + len(lst)


def test_a_closure_grows_a_list_in_a_graph_loop_in_one_branch_of_a_tensor_if():
    check(closure_grows_in_one_branch, ref_closure_grows_in_one_branch,
          [([1.0, 2.0],), ([-0.5, -0.5],), ([3.0, 1.0],)])


def closure_grows_in_one_branch_aliased(x):
    lst = [x * 1.0]
    keep = [lst]                     # another reference: refused, never a stale list

    def push(v):
        lst.append(v)

    if rt.mean(x) > 0:
        k = rt.zeros([])
        while k < rt.abs(x[0]) + 0.5:
            k = k + 1.0
            push(x * k)
    return rt.stack(lst).sum(0) + len(keep[0])


def test_the_same_with_another_reference_is_refused():
    with pytest.raises(d2s.ConversionError):
        d2s.to_static(closure_grows_in_one_branch_aliased)(t([1.0, 2.0]))
