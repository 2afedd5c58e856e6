"""Ints beside floats and bools in one list of Python numbers that the program grows (issues
33 and 35: the largest class of the observe fuzzer's refusals, a StateChangeError). Such a list
is a tensor array of `[value, kind]` float64 pairs (`runtime/ops/array_number_kinds.py`):
append, insert, pop, slicing, `+` and reversed move each item with its Python type, and a read
(`lst[-1]`, iteration), `sum`, `max`, `min`, `len`, `in` and the returned list follow eager.
Eager vs static vs a plain-Python reference, type and value of every leaf (lists by length
first), inputs taking different paths through one program."""
import numpy as np
import pytest

import d2s
import runtime as rt

from .test_number_kinds_branches import same_leaves


def decode(x, n):
    """A decoding loop's bookkeeping: an int length per step, a float where a step is cut."""
    lengths = [0]
    step = 0
    while step < n:
        if x[step] > 0:
            lengths.append(step + 1)
        else:
            lengths.append(0.5 * (step + 1))  # a partial step
        step += 1
    return (lengths, sum(lengths), lengths[-1], len(lengths), max(lengths), min(lengths),
            0.5 in lengths)


def decode_reference(data, n):
    lengths = [0] + [k + 1 if data[k] > 0 else 0.5 * (k + 1) for k in range(n)]
    return (lengths, sum(lengths), lengths[-1], len(lengths), max(lengths), min(lengths),
            0.5 in lengths)


def hits(x, n):
    """True beside ints: a flag per step where the step hit, its index elsewhere."""
    scores = [1, 2]
    for i in range(n):
        if x[i] > 1.0:
            scores.append(True)
        else:
            scores.append(i)
    return scores, sum(scores), scores[-1]


def hits_reference(data, n):
    scores = [1, 2] + [True if data[i] > 1.0 else i for i in range(n)]
    return scores, sum(scores), scores[-1]


def reordered(x, n):
    xs = [0]
    for i in range(n):
        if x[i] > 0:
            xs.append(float(x[i]))
        else:
            xs.insert(0, True)
    last = xs.pop()
    total = 0
    for v in xs:
        total = total + v
    return last, xs[1:], list(reversed(xs)), xs + [7], total, len(xs + [7])


def reordered_reference(data, n):
    xs = [0]
    for i in range(n):
        if data[i] > 0:
            xs.append(float(np.float32(data[i])))
        else:
            xs.insert(0, True)
    last = xs.pop()
    return last, xs[1:], list(reversed(xs)), xs + [7], sum(xs, 0), len(xs + [7])


def chosen_by_a_branch(x, n):
    picks = [0.25]
    if x.sum() > 0:
        picks.append(1)
        picks.append(2)
    else:
        picks.append(False)
    return picks, sum(picks), picks[-1]


def chosen_reference(data, n):
    picks = [0.25] + ([1, 2] if sum(data) > 0 else [False])
    return picks, sum(picks), picks[-1]


CASES = [([1.0, -1.0, 2.0], 3), ([-1.0, -1.0, -2.0], 3), ([1.5, 1.0, -2.0], 1),
         ([2.0, 3.0, 1.0], 2), ([1.0, 1.0, -2.0], 0)]
FUNCTIONS = [(decode, decode_reference), (hits, hits_reference),
             (reordered, reordered_reference), (chosen_by_a_branch, chosen_reference)]


@pytest.mark.parametrize(("fn", "reference"), FUNCTIONS, ids=lambda f: f.__name__)
def test_each_item_keeps_its_python_type(fn, reference):
    static = d2s.to_static(fn)
    ran = 0
    for data, n in CASES:
        x = rt.to_tensor(np.array(data, "float32"))
        try:
            want = reference(data, n)
        except (IndexError, ValueError) as e:  # (eager's own error: the program raises it)
            with pytest.raises(type(e)):
                fn(x, n)
            with pytest.raises(type(e)):
                static(x, rt.to_tensor(n))
            continue
        same_leaves(fn(x, n), want)
        same_leaves(static(x, rt.to_tensor(n)), want)
        ran += 1
    assert ran >= 4 and len(static.program_cache) == 1


def test_an_empty_list_of_several_types_raises_eagers_error():
    def longest(x, n):
        lengths = []
        for i in range(n):
            lengths.append(1.5 if x[i] > 0 else i)
        return max(lengths)

    static = d2s.to_static(longest)
    x = rt.to_tensor(np.array([1.0, -1.0], "float32"))
    same_leaves(static(x, rt.to_tensor(2)), longest(x, 2))
    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        longest(x, 0)
    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        static(x, rt.to_tensor(0))


class Tracker(rt.nn.Layer):
    """Keeps per-step lengths on `self`: an int where a step was cut, its float score else."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.hist = [0]

    def forward(self, x, n, stats):
        h = self.fc(x)
        for i in range(n):
            self.hist.append(float(h[0, i]) if h[0, i] > 0 else i)
            stats["flags"].append(bool(h[0, i] > 0.5))
        return h


def test_lists_on_self_and_in_an_argument_dict_keep_each_items_type():
    rt.seed(5)
    eager_net, static_net = Tracker(), Tracker()
    static_net.set_state_dict(eager_net.state_dict())
    static = d2s.to_static(static_net)
    kinds = set()
    for n, sign in ((3, 1.0), (0, 1.0), (2, -1.0), (3, -1.0)):
        x = rt.to_tensor(np.full([1, 3], sign, "float32"))
        h = eager_net.fc(x).numpy()[0]
        want_hist = [0] + [float(np.float32(h[i])) if h[i] > 0 else i for i in range(n)]
        want_flags = [True] + [bool(h[i] > 0.5) for i in range(n)]
        eager_net.hist, static_net.hist = [0], [0]
        eager_stats, static_stats = {"flags": [True]}, {"flags": [True]}
        eager_net(x, n, eager_stats)
        static(x, rt.to_tensor(n), static_stats)
        for net, stats in ((eager_net, eager_stats), (static_net, static_stats)):
            same_leaves(net.hist, want_hist)
            same_leaves(stats["flags"], want_flags)
        kinds.update(type(v) for v in want_hist[1:])
    assert kinds == {int, float}


def compared_and_overwritten(x, n):
    lengths = [0]
    for i in range(n):
        lengths.append(1.5 if x[i] > 0 else i)
    ints = [0]
    for i in range(n):
        ints.append(i)  # noqa: PERF402  (a graph loop: the list becomes a tensor array)
    ints[0] = 2.5  # a float into a list of ints
    return lengths == [0, 1.5], lengths != [0, 1], ints, rt.to_tensor(lengths, "float32")


def test_comparing_overwriting_and_making_a_tensor():
    static = d2s.to_static(compared_and_overwritten)
    for data, n in (([1.0, -1.0, 2.0], 3), ([1.0, 1.0, -2.0], 1), ([-1.0, 1.0, 2.0], 1)):
        x = rt.to_tensor(np.array(data, "float32"))
        lengths = [0] + [1.5 if data[i] > 0 else i for i in range(n)]
        want = (lengths == [0, 1.5], lengths != [0, 1], [2.5] + list(range(n)))
        for got in (compared_and_overwritten(x, n), static(x, rt.to_tensor(n))):
            same_leaves(got[:3], want)
            np.testing.assert_array_equal(got[3].numpy(), np.array(lengths, "float32"))
    assert len(static.program_cache) == 1


def test_a_tensor_of_numbers_of_several_types_needs_its_dtype():
    def as_tensor(x, n):
        lengths = [0]
        for i in range(n):
            lengths.append(1.5 if x[i] > 0 else i)
        return rt.to_tensor(lengths)  # float32 or int64: eager's depends on the items

    x, no_float = rt.to_tensor([1.0, -1.0]), rt.to_tensor([-1.0, -1.0])
    assert as_tensor(x, 2).dtype == rt.float32 and as_tensor(no_float, 2).dtype == rt.int64
    with pytest.raises(TypeError, match="only the run decides. Give the dtype"):
        d2s.to_static(as_tensor)(x, rt.to_tensor(2))
