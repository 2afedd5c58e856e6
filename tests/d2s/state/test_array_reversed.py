"""`reversed()` of a list that is a tensor array (its length depends on a tensor): a backward
pass over the states a graph loop collected (a bidirectional RNN's second direction, decoding
read back to front), of tensors and of tuples, with gradients through the reversed items."""
import numpy as np

import d2s
import runtime as rt

from .helpers import check, check_grad, t


def backward_pass(x):
    states = []
    h = x * 0.0
    i = 0
    while i < rt.sum(x):              # a graph loop: `states` becomes a tensor array
        h = rt.tanh(h + x * (i + 1))
        states.append(h)
        i += 1
    acc = x * 0.0
    for s in reversed(states):        # last state first
        acc = acc * 0.5 + s
    return acc + len(states)


def ref_backward_pass(x):
    states, h = [], x * 0.0
    for i in range(int(np.ceil(x.sum()))):
        h = np.tanh(h + x * (i + 1))
        states.append(h)
    acc = x * 0.0
    for s in reversed(states):
        acc = acc * 0.5 + s
    return acc + len(states)


def test_reversed_over_a_tensor_array_matches_eager_on_every_length():
    check(backward_pass, ref_backward_pass, [([1.0, 2.0],), ([0.25, 0.5],), ([-1.0, 0.5],),
                                             ([2.0, 0.5],)])


def test_gradient_through_reversed_items_matches_finite_differences():
    # (points whose sums are away from integers: no jump in the length)
    check_grad(backward_pass, ref_backward_pass, [[1.2, 1.5], [0.3, 0.4]])


def pairs_back_to_front(x, n):
    seen = []
    k = rt.zeros([], "int64")
    while k < n:
        seen.append((x * (k + 1).astype("float32"), k))
        k += 1
    out = []
    for value, step in reversed(seen):
        out.append(value + step.astype("float32"))
    return rt.stack(out) if len(seen) else x[None] * 0.0


def test_reversed_list_of_tuples_and_a_python_list_of_the_results():
    sf = d2s.to_static(pairs_back_to_front)
    x = t([1.0, -1.0])
    for n in (3, 1):
        want = np.stack([np.array([1.0, -1.0]) * (k + 1) + k for k in reversed(range(n))])
        np.testing.assert_allclose(sf(x, rt.to_tensor(n)).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(pairs_back_to_front(x, rt.to_tensor(n)).numpy(), want)
    assert len(sf.program_cache) == 1


def test_reversed_of_python_sequences_is_python_reversed():
    def f(x):
        names = ["a", "b"]
        return [x * len(n) for n in reversed(names + ["ccc"])], list(reversed(range(3)))

    out, r = d2s.to_static(f)(t([1.0]))
    assert r == [2, 1, 0]
    np.testing.assert_allclose([o.numpy()[0] for o in out], [3.0, 1.0, 1.0])
