"""`sorted(items, key=...)` and `items.sort(...)` of a Python list by keys that are tensors
computed by the converted code, as a Python beam search keeps its best hypotheses. The converted
call raised a bare `TypeError: bool() of a tensor computed by the converted code` (a `key=`) or
refused `scores.sort()`; the order is now decided when the program runs (stable, as Python's
sort, also with `reverse=True`), items are picked leaf by leaf, tensors keep their gradient
path, and what one program cannot give is a ConversionError at the user's line."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line


def best_hypotheses(scores, k):
    hyps = [(scores[i] * (i + 1.0), i, "hyp") for i in range(scores.shape[0])]
    ranked = sorted(hyps, key=lambda h: h[0], reverse=True)[:k]
    return rt.stack([h[0] for h in ranked]), [h[1] for h in ranked], ranked[0][2]


def _np_best(sv, k):
    vals = [(sv[i] * (i + 1.0), i) for i in range(len(sv))]
    ranked = sorted(vals, key=lambda h: h[0], reverse=True)[:k]
    return np.array([v for v, _ in ranked]), [i for _, i in ranked]


@pytest.mark.parametrize("sv", [[0.5, 0.1, 0.3, 0.2], [-1.0, 0.5, 0.25, 0.0],
                                [0.2, 0.1, 0.1, 0.05]])  # ties: 0.2 == 0.1*2, 0.2 == 0.05*4
def test_sorted_by_a_tensor_key_picks_items_when_the_program_runs(sv):
    sv = np.array(sv, "float32")
    static = d2s.to_static(best_hypotheses, full_graph=True)
    want_vals, want_idx = _np_best(sv.astype("float64"), 3)
    for fn in (best_hypotheses, static):
        x = rt.to_tensor(sv, stop_gradient=False)
        vals, idx, tag = fn(x, 3)
        np.testing.assert_allclose(vals.numpy(), want_vals, rtol=1e-6)
        assert len(idx) == len(want_idx) == 3
        assert [int(i) for i in idx] == want_idx and tag == "hyp"
        (vals * rt.to_tensor([3.0, 2.0, 1.0])).sum().backward()
        if len(set(sv * np.arange(1, 5))) < 4:
            continue  # (at a tie the order, and so the gradient, jumps: no finite difference)
        grad = numeric_grad(lambda v: float(_np_best(v, 3)[0] @ [3.0, 2.0, 1.0]),
                            sv.astype("float64"), eps=1e-7)
        np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-5, atol=1e-5)
    assert len(static.program_cache) == 1


def ordered(x):
    scores = [x.max(), x.min(), x.mean()]
    scores.sort()
    return scores[0], scores[2]


def test_list_sort_of_tensors_converts():
    static = d2s.to_static(ordered, full_graph=True)
    for v in ([1.0, 5.0, 3.0], [-2.0, -1.0, 0.5]):
        want = (min(v), max(v))
        for fn in (ordered, static):
            lo, hi = fn(rt.to_tensor(v))
            assert (float(lo), float(hi)) == want


def mixed_structures(x):
    items = [(x.sum(), x), (x.mean(), x.sum())]
    return sorted(items, key=lambda t: t[0])[0]  # noqa: FURB192  (sorted is what is tested)


def vector_keys(x):
    return sorted([x, x * 2.0], key=lambda t: t)[0]  # noqa: FURB192


@pytest.mark.parametrize("fn, message", [
    (mixed_structures, "values of other types, dtypes or shapes at one place"),
    (vector_keys, "a sort key computed by the converted code that is not one number")])
def test_what_one_program_cannot_order_is_refused_at_the_line(fn, message):
    x = rt.to_tensor([1.0]) if fn is vector_keys else rt.to_tensor([1.0, 2.0])
    fn(x)
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(fn, full_graph=True)(rt.to_tensor([1.0, 2.0]))
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, s in enumerate(lines) if "sorted(" in s)
    assert message in assert_at_user_line(info.value, __file__, line)
