"""Issue 12, item 10 follow-up: comprehension filters on an EARLIER `for` of a nested
comprehension (`[a * b for a in xs if a.mean() > 0 for b in ys]`), and dict / set
comprehensions filtered by a tensor.

A tensor filter of an earlier `for` is a condition of every item appended under that
iteration: the result is a tensor array (read by `rt.stack`, `rt.concat`, `len`, `sum`,
indexing), as the nested `for` statements that append would convert. A Python filter still
filters in Python (it may guard what the inner `for` iterates). A dict comprehension's keys,
or a set's members, cannot depend on data: a ConversionError naming the line and what to
write instead.

Eager vs static vs NumPy through ONE program, inputs keeping different items.
"""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError
from tests.finite_differences import numeric_grad

ROWS = [[1.0, 2.0], [-1.0, -2.0], [0.5, -0.2], [3.0, -1.0]]


def _t(v):
    return rt.to_tensor(np.asarray(v, "float32"))


def _np(v):
    return np.asarray(v.numpy() if hasattr(v, "numpy") else v, "float64")


def _same(fn, reference, rows=ROWS):
    static = d2s.to_static(fn)
    for row in rows:
        want, got = fn(_t(row)), static(_t(row))
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        ref = reference(np.asarray(row, "float64"))
        ref = ref if isinstance(ref, tuple) else (ref,)
        for w, g, r in zip(want, got, ref, strict=True):
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-5, atol=1e-6, err_msg=str(row))
            np.testing.assert_allclose(_np(g), r, rtol=1e-5, atol=1e-5, err_msg=str(row))
    assert len(static.program_cache) == 1


def outer_filter(x):
    xs = (x, x - 1.0, -x)
    scales = [x * 0.5, x + 2.0]
    out = [a * b for a in xs if a.mean() > 0 for b in scales]
    return rt.stack(out).sum(0) if len(out) > 0 else x * 0.0, len(out)


def _outer_filter_ref(a):
    out = [p * q for p in (a, a - 1, -a) if p.mean() > 0 for q in (a * 0.5, a + 2)]
    return (sum(out) if out else a * 0.0), len(out)


def test_filter_on_the_outer_for_of_a_nested_comprehension():
    _same(outer_filter, _outer_filter_ref, ROWS + [[0.0, 0.0]])


def both_filters(x):
    pairs = (x, x * 2.0, -x)
    return sum((a * b for a in pairs if a.max() > 0 for b in (a, x) if (a * b).sum() > 1),
               rt.zeros([2]))


def _both_filters_ref(a):
    return sum((p * q for p in (a, a * 2, -a) if p.max() > 0 for q in (p, a)
                if (p * q).sum() > 1), np.zeros(2))


def test_filters_on_both_fors_and_an_inner_iterable_from_the_outer_item():
    _same(both_filters, _both_filters_ref)


def python_then_tensor(x):
    blocks = [x, None, -x, x * 3.0]
    # `a is not None` filters in Python: it guards what the inner `for` iterates
    return rt.concat([b for a in blocks if a is not None if a.sum() > 0 for b in (a, a * 2.0)])


def _python_then_tensor_ref(a):
    return np.concatenate([b for p in (a, None, -a, a * 3) if p is not None if p.sum() > 0
                           for b in (p, p * 2)])


def test_python_filter_then_tensor_filter_on_the_same_for():
    _same(python_then_tensor, _python_then_tensor_ref, [[1.0, 2.0], [-1.0, -2.0], [2.0, -1.0]])


def three_levels(x):
    return rt.stack([a + b + c for a in (x, -x) if a.sum() > 0
                     for b in (x, x * 2.0) if (a * b).mean() > 0.5
                     for c in (x, 1.0 - x)]).sum(0)


def _three_levels_ref(a):
    return sum(p + q + r for p in (a, -a) if p.sum() > 0
               for q in (a, a * 2) if (p * q).mean() > 0.5 for r in (a, 1 - a))


def test_three_levels_with_filters_on_the_first_two():
    _same(three_levels, _three_levels_ref, [[1.0, 2.0], [0.6, 0.5], [2.0, 0.1]])


class Router(rt.nn.Layer):
    """A Paddle-style router: each active expert (by its gate) applied to every input."""

    def __init__(self):
        super().__init__()
        self.experts = rt.nn.LayerList([rt.nn.Linear(2, 2) for _ in range(3)])
        self.gate = rt.nn.Linear(2, 3)

    def forward(self, x, y):
        scores = self.gate(x).mean(0)
        outs = [expert(h) for k, expert in enumerate(self.experts) if scores[k] > 0
                for h in (x, y)]
        return rt.stack(outs).sum(0) if len(outs) > 0 else x * scores.sum() * 0.0


def test_layer_with_an_outer_filter_trains_like_eager():
    eager = Router()
    static = d2s.to_static(Router())
    static.set_state_dict(eager.state_dict())
    rng = np.random.default_rng(3)
    active = set()
    for _ in range(6):
        x, y = _t(rng.normal(size=(2, 2))), _t(rng.normal(size=(2, 2)))
        active.add(int((eager.gate(x).mean(0) > 0).numpy().sum()))
        want, got = eager(x, y), static(x, y)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        want.sum().backward()
        got.sum().backward()
        for pe, ps in zip(eager.parameters(), static.parameters()):
            ge = pe.grad.numpy() if pe.grad is not None else np.zeros(pe.shape)
            gs = ps.grad.numpy() if ps.grad is not None else np.zeros(ps.shape)
            np.testing.assert_allclose(gs, ge, rtol=1e-4, atol=1e-5)
        eager.clear_gradients()
        static.clear_gradients()
    assert len(active) >= 2  # different experts kept through one program
    assert len(static.forward.program_cache) == 1


def test_gradient_through_an_outer_filter_matches_finite_differences():
    def loss(x):
        return rt.stack([(a * b).sum() for a in (x, x - 1.0) if a.mean() > 0
                         for b in (x, x * x)]).sum()
    static = d2s.to_static(loss)
    for row in ([1.0, 2.0], [0.5, 0.75]):  # both outer items kept; only the first
        x = _t(row)
        x.stop_gradient = False
        static(x).backward()
        want = numeric_grad(lambda a: float(loss(rt.to_tensor(a.astype("float32"))).item()),
                            np.asarray(row, "float64"), eps=1e-3)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-2, atol=1e-2)


# -- dict and set comprehensions: a clear error --------------------------------------------

def dict_by_value(x):
    d = {"a": x, "b": -x}
    kept = {k: v for k, v in d.items() if v.sum() > 0}
    return kept


def dict_outer_filter(x):
    return {k: [v * i for i in range(2)] for k, v in enumerate((x, -x)) if v.mean() > 0}


def set_of_indices(x):
    return len({k for k, v in enumerate((x, -x)) if v.sum() > 0})


@pytest.mark.parametrize("fn,kind", [(dict_by_value, "dict"), (dict_outer_filter, "dict"),
                                     (set_of_indices, "set")])
def test_dict_and_set_comprehensions_filtered_by_a_tensor_are_clear_errors(fn, kind):
    with pytest.raises(ConversionError, match=f"a {kind} comprehension filter") as info:
        d2s.to_static(fn)(_t([1.0, 2.0]))
    message = str(info.value)
    assert "test_comprehension_nested_filters.py" in message and "rt.where" in message
    assert "list comprehension" in message


def masked_dict(x):  # what the error message suggests: every key, masked values
    d = {"a": x, "b": -x}
    return {k: rt.where(v.sum() > 0, v, rt.zeros_like(v)) for k, v in d.items()}


def test_the_suggested_masked_dict_converts():
    static = d2s.to_static(masked_dict)
    for row in ([1.0, 2.0], [-1.0, -2.0]):
        want, got = masked_dict(_t(row)), static(_t(row))
        assert want.keys() == got.keys()
        for k in want:
            np.testing.assert_allclose(got[k].numpy(), want[k].numpy())


def python_filtered_dict(x):  # a Python filter: a dict as in eager code
    return {k: v * 2 for k, v in {"a": x, "b": None}.items() if v is not None}


def test_a_python_filter_in_a_dict_comprehension_stays_python():
    got = d2s.to_static(python_filtered_dict)(_t([1.0, 2.0]))
    assert list(got) == ["a"]
    np.testing.assert_allclose(got["a"].numpy(), [2.0, 4.0])


# -- an inner iterable that calls a function runs only for the items the filter keeps -----

def _split(a):
    if a.max() > 4:
        raise ValueError("too big to split")
    return (a * 0.5, a * 0.25)


def split_kept(x):
    parts = [b for a in (x, x * 3.0, -x) if a.mean() > 1 for b in _split(a)]
    return rt.concat(parts) if len(parts) > 0 else rt.concat([x, x]) * 0.0


def split_kept_in_try(x):
    try:
        parts = [b for a in (x, x * 3.0, -x) if a.mean() > 1 for b in _split(a)]
        out = rt.stack(parts).sum(0) if len(parts) > 0 else x * 0.0
    except ValueError:
        out = x - 100.0
    return out


def _split_ref(a, in_try):
    parts = []
    try:
        for p in (a, a * 3, -a):
            if p.mean() > 1:
                if p.max() > 4:
                    raise ValueError
                parts += [p * 0.5, p * 0.25]
    except ValueError:
        if not in_try:
            return "ValueError"
        return a - 100
    if in_try:
        return sum(parts) if parts else a * 0
    return np.concatenate(parts) if parts else np.zeros(4)


@pytest.mark.parametrize("fn,in_try", [(split_kept, False), (split_kept_in_try, True)])
def test_inner_iterable_is_computed_only_for_kept_items(fn, in_try):
    # [-5, 4.8]: every item is dropped, and _split would raise on each of them
    static = d2s.to_static(fn)
    for row in ([1.0, 1.0], [-2.0, -1.0], [2.0, 2.0], [-5.0, 4.8], [0.5, 0.5]):
        ref = _split_ref(np.asarray(row, "float64"), in_try)
        if isinstance(ref, str):
            for f in (fn, static):
                with pytest.raises(ValueError, match="too big to split"):
                    f(_t(row))
            continue
        want, got = fn(_t(row)), static(_t(row))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, err_msg=str(row))
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, err_msg=str(row))
    assert len(static.program_cache) == 1
