"""`pop()` on lists that are tensor arrays (their length depends on a tensor): inside graph
`while`/`for` bodies and tensor `if` branches, `pop()`, `pop(i)` with a constant or negative
`i`, `len` afterwards, stack-like code (push in one loop, pop in another), backward."""
import numpy as np
import pytest

import d2s
import runtime as rt

from finite_differences import numeric_grad
from .helpers import check, t


def push_then_pop(x):
    stack = []
    i = 0
    while i < rt.sum(x):          # a graph loop: the list becomes a tensor array
        stack.append(x * (i + 1))
        i += 1
    total = x * 0.0
    k = 0
    while k < rt.sum(x) - 1:      # pop all but the bottom one, last pushed first
        top = stack.pop()
        total = total * 0.5 + top
        k += 1
    return total + len(stack) + stack[-1]


def ref_push_then_pop(x):
    stack = [x * (i + 1) for i in range(int(np.ceil(x.sum())))]
    total = x * 0.0
    for _ in range(int(np.ceil(x.sum() - 1))):
        total = total * 0.5 + stack.pop()
    return total + len(stack) + stack[-1]


def test_push_in_one_graph_loop_pop_in_another():
    check(push_then_pop, ref_push_then_pop, [([1.0, 2.0],), ([0.5, 0.5],), ([2.0, 2.5],)])


def brackets(x):
    """Bracket matching over a sequence (> 0 opens, <= 0 closes): unmatched count."""
    open_ = []
    unmatched = rt.zeros([])
    i = 0
    while i < x.shape[0]:
        if x[i] > 0:
            open_.append(x[i])
        elif len(open_) > 0:
            open_.pop()
        else:
            unmatched = unmatched + 1.0
        i += 1
    return unmatched + len(open_)


def ref_brackets(x):
    depth, bad = 0, 0
    for v in x:
        if v > 0:
            depth += 1
        elif depth:
            depth -= 1
        else:
            bad += 1
    return np.float32(bad + depth)


def test_bracket_matching_pushes_and_pops_in_one_graph_loop():
    sf = d2s.to_static(brackets, input_spec=[d2s.InputSpec([None], "float32")])
    for seq in ([1, -1, 1, 1, -1], [-1, 1, -1, -1], [1, 1, 1], [-1], [1, -1, -1, 1, 1, -1, -1]):
        x = t(seq)
        want = ref_brackets(seq)
        np.testing.assert_allclose(brackets(x).numpy(), want)
        np.testing.assert_allclose(sf(x).numpy(), want)
    assert len(sf.program_cache) == 1


class DepthFirst(rt.nn.Layer):
    """A DFS-style walk with an explicit stack kept on `self`: each visited value spawns
    children while it is above a threshold."""

    def __init__(self):
        super().__init__()
        self.decay = 0.5

    def children(self, v):
        return [v * self.decay, v * self.decay - 0.25]

    def forward(self, x):
        todo = [x]
        seen = rt.zeros([])
        steps = rt.zeros([], "int64")
        while len(todo) > 0:
            v = todo.pop()
            seen = seen + v
            steps = steps + 1
            if v > 0.3:
                for c in self.children(v):
                    todo.append(c)
        return seen + steps.astype("float32") * 100.0


def ref_dfs(x):
    todo, seen, steps = [np.float32(x)], np.float32(0), 0
    while todo:
        v = todo.pop()
        seen += v
        steps += 1
        if v > 0.3:
            todo += [v * np.float32(0.5), v * np.float32(0.5) - np.float32(0.25)]
    return seen + steps * 100.0


def test_dfs_stack_with_self_state_and_a_helper():
    model = DepthFirst()
    sf = d2s.to_static(DepthFirst())
    for v in (0.2, 0.9, 2.0, 5.0):
        x = rt.to_tensor(np.float32(v))
        np.testing.assert_allclose(model(x).numpy(), ref_dfs(v), rtol=1e-5)
        np.testing.assert_allclose(sf(x).numpy(), ref_dfs(v), rtol=1e-5)
    assert len(sf.forward.program_cache) == 1


def queue_front(x):
    """pop(0) (a queue) and pop(i) with constant and negative i, on a pre-filled list that
    becomes an array in a graph loop."""
    q = [x, x * 2.0, x * 3.0, x * 4.0, x * 5.0]
    acc = x * 0.0
    i = rt.zeros([], "int64")
    while i < rt.sum(x).astype("int64"):
        acc = acc * 2.0 + q.pop(0)
        if len(q) > 2:
            acc = acc + q.pop(-2)
        i = i + 1
    return acc + len(q) + q.pop(1) * 10.0


def ref_queue_front(x):
    q = [x * k for k in (1.0, 2.0, 3.0, 4.0, 5.0)]
    acc = x * 0.0
    for _ in range(int(x.sum())):
        acc = acc * 2.0 + q.pop(0)
        if len(q) > 2:
            acc = acc + q.pop(-2)
    return acc + len(q) + q.pop(1) * 10.0


def test_pop_front_and_constant_negative_index_in_a_graph_loop():
    check(queue_front, ref_queue_front, [([1.0, 0.0],), ([1.0, 1.0],), ([0.0, 0.0],)])


def pop_in_branch(x):
    outs = []
    for i in range(rt.shape(x)[0]):   # a graph for: outs is an array
        outs.append(x[i] * 2.0)
    if rt.mean(x) > 0:                # pop in one branch of a tensor if
        last = outs.pop()
        first = outs.pop(0)
    else:
        last = x[0]
        first = x[0] * 0.0
    return rt.stack(outs).sum() + last * 3.0 + first * 5.0 + len(outs)


def ref_pop_in_branch(x):
    outs = [v * 2.0 for v in x]
    if x.mean() > 0:
        last, first = outs.pop(), outs.pop(0)
    else:
        last, first = x[0], x[0] * 0.0
    return np.stack(outs).sum() + last * 3.0 + first * 5.0 + len(outs)


def test_pop_in_one_branch_of_a_tensor_if_after_a_graph_loop():
    sf = d2s.to_static(pop_in_branch, input_spec=[d2s.InputSpec([None], "float32")])
    for v in ([1.0, 2.0, 3.0], [-1.0, -2.0, 4.0], [-1.0, -2.0], [3.0, 1.0, 2.0, 0.5]):
        want = ref_pop_in_branch(np.asarray(v, np.float32))
        np.testing.assert_allclose(pop_in_branch(t(v)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(sf(t(v)).numpy(), want, rtol=1e-5)
    assert len(sf.program_cache) == 1


def pop_python_list_in_branch(x):
    items = [x, x * 2.0, x * 3.0]
    if rt.mean(x) > 0:     # the lengths differ by branch: an array in both
        items.pop()
    return rt.stack(items).sum(0) + len(items)


def test_pop_on_a_python_list_in_one_branch_makes_an_array():
    check(pop_python_list_in_branch,
          lambda x: np.stack([x * k for k in ((1.0, 2.0) if x.mean() > 0 else (1.0, 2.0, 3.0))]
                             ).sum(0) + (2 if x.mean() > 0 else 3),
          [([1.0, 2.0],), ([-1.0, -2.0],)])


def drain(x, w):
    """Backward through pushed and popped entries: each popped value scaled by its order."""
    stack = []
    h = x
    i = 0
    while i < 4:
        h = rt.tanh(h * w)
        stack.append(h)
        i = i + rt.ones([], "int64")
    out = x * 0.0
    k = 1.0
    while len(stack) > 1:
        out = out + stack.pop() * k
        k = k + 1.0
    return (out + stack[0] * 10.0).sum()


def ref_drain(x, w):
    h, stack = x, []
    for _ in range(4):
        h = np.tanh(h * w)
        stack.append(h)
    out, k = x * 0.0, 1.0
    while len(stack) > 1:
        out, k = out + stack.pop() * k, k + 1.0
    return (out + stack[0] * 10.0).sum()


def test_backward_through_popped_entries_matches_finite_differences():
    sf = d2s.to_static(drain)
    w0 = np.asarray([0.7, -1.1], np.float64)
    for x_val in ([0.3, -0.2], [1.5, 0.1]):
        x0 = np.asarray(x_val, np.float64)
        x = rt.to_tensor(x0.astype(np.float32), stop_gradient=False)
        out = sf(x, t(w0))
        np.testing.assert_allclose(out.numpy(), ref_drain(x0, w0), rtol=1e-5)
        out.backward()
        np.testing.assert_allclose(x.grad.numpy(), numeric_grad(lambda v: ref_drain(v, w0), x0),
                                   rtol=1e-3, atol=1e-4)
    assert len(sf.program_cache) == 1


def over_pop(x):
    stack = [x]
    i = 0
    while i < rt.sum(x):
        stack.pop()
        i += 1
    return len(stack)


def test_popping_an_empty_array_raises_index_error_as_eager_does():
    sf = d2s.to_static(over_pop)
    assert int(sf(t([0.5, 0.5]))) == 0
    with pytest.raises(IndexError):
        over_pop(t([1.0, 2.0]))
    with pytest.raises(IndexError, match="pop from an empty array"):
        sf(t([1.0, 2.0]))


def pops_in_expressions(x):
    """Pops inside larger expressions: taken out before the statement where that is exact
    (`acc += q.pop(0)`), and popped in place where something before reads the list
    (`len(q) + q.pop()`), in tensor-if branches and a graph `for` body."""
    q = []
    for i in range(rt.shape(x)[0]):
        q.append(x[i] * 1.0)
    acc = x[0] * 0.0
    if rt.mean(x) > 0:
        acc = len(q) + q.pop() * 2.0
    else:
        acc += q.pop(0)
    for _ in range(rt.shape(x)[0] - 2):
        acc = acc * 0.5 + len(q) * q.pop(-1)
    return acc + len(q) * 100


def ref_pops_in_expressions(x):
    q = list(x * 1.0)
    acc = len(q) + q.pop() * 2.0 if x.mean() > 0 else x[0] * 0 + q.pop(0)
    for _ in range(len(x) - 2):
        acc = acc * 0.5 + len(q) * q.pop(-1)
    return acc + len(q) * 100


def test_pops_inside_expressions_keep_python_order():
    sf = d2s.to_static(pops_in_expressions, input_spec=[d2s.InputSpec([None], "float32")])
    for v in ([1.0, 2.0, 3.0], [-1.0, -2.0, 1.0, 0.5], [2.0, -1.0]):
        want = ref_pops_in_expressions(np.asarray(v, np.float32))
        np.testing.assert_allclose(pops_in_expressions(t(v)).numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(sf(t(v)).numpy(), want, rtol=1e-5)
    assert len(sf.program_cache) == 1
    assert "_d2s.list_pop(q, 0)" in sf.code  # `acc += q.pop(0)` taken out before
