"""`zip(*pairs)` of a list of tuples that the program grows (issue 35): a loop over a tensor
range or one branch of a tensor `if` appends `(a, b)` items (a tensor array per part). The
transpose `a, b = zip(*pairs)`, `a, b = map(list, zip(*pairs))`, `for a, b in pairs`, a
comprehension over the pairs, `pairs[-1]` and `len(pairs)` run when the program runs, one
program for every length; with no items eager's unpacking raises `ValueError: not enough
values to unpack`, and so does the program, at the user's line."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line, shown


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def attention_pool(x, n):
    """Keys and values collected per step, then transposed into two stacks."""
    pairs = []
    for i in range(n):
        pairs.append((x[i] * 2.0, rt.tanh(x[i])))
    keys, values = zip(*pairs)
    k, v = rt.stack(keys), rt.stack(values)
    weights = rt.nn.functional.softmax(k.sum(-1), axis=0)
    return (weights.unsqueeze(-1) * v).sum(0), len(pairs)


def ref_attention_pool(x, n):
    k, v = x[:n] * 2.0, np.tanh(x[:n])
    s = k.sum(-1)
    w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    return (w[:, None] * v).sum(0), n


X = np.array([[0.5, -1.0], [1.5, 0.25], [-0.5, 2.0], [1.0, 1.0]], "float32")


def test_zip_star_unpacked_over_several_lengths_in_one_program():
    static = d2s.to_static(attention_pool, full_graph=True)
    for n in (1, 3, 4, 2):
        want = ref_attention_pool(X.astype(np.float64), n)
        eager = attention_pool(rt.to_tensor(X), n)
        got = static(rt.to_tensor(X), rt.to_tensor(n))
        for out in (eager, got):
            np.testing.assert_allclose(out[0].numpy(), want[0], rtol=1e-5, atol=1e-6)
            assert int(out[1]) == n
    assert len(static.program_cache) == 1


def test_zip_star_of_no_items_raises_eagers_value_error_at_the_users_line():
    static = d2s.to_static(attention_pool, full_graph=True)
    static(rt.to_tensor(X), rt.to_tensor(2))
    with pytest.raises(ValueError) as eager:
        attention_pool(rt.to_tensor(X), 0)
    with pytest.raises(ValueError) as info:
        static(rt.to_tensor(X), rt.to_tensor(0))
    assert str(eager.value) == "not enough values to unpack (expected 2, got 0)"
    assert str(eager.value) in shown(info.value)
    assert_at_user_line(info.value, __file__, line_of(attention_pool, "zip(*pairs)"))
    assert len(static.program_cache) == 1


def test_zip_star_gradient_matches_finite_differences():
    static = d2s.to_static(attention_pool, full_graph=True)
    weights = np.array([1.0, -2.0])
    for n in (2, 4):
        x = rt.to_tensor(X)
        x.stop_gradient = False
        (static(x, rt.to_tensor(n))[0] * rt.to_tensor(weights, "float32")).sum().backward()
        want = numeric_grad(lambda a, n=n: float((ref_attention_pool(a, n)[0] * weights).sum()),
                            X.astype(np.float64))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-3, atol=1e-4)


def kept_by_sign(x):
    """Pairs appended on one branch of a tensor `if`, transposed through `map(list, ...)`,
    beside `for a, b in pairs`, a comprehension, `pairs[-1]` and `len(pairs)`."""
    pairs = [(x[0], x[0] + 1.0)]
    for i in range(1, 4):
        if x[i] > 0:
            pairs.append((x[i], x[i] * x[i]))
    firsts, seconds = map(list, zip(*pairs))
    total = x[0] * 0.0
    for a, b in pairs:
        total = total + a * b
    products = [a - b for a, b in pairs]
    return (rt.stack(firsts).sum() + rt.stack(seconds).sum(), total,
            rt.stack(products).sum(), pairs[-1][1], len(pairs), len(firsts))


def ref_kept_by_sign(x):
    pairs = [(x[0], x[0] + 1.0)] + [(v, v * v) for v in x[1:4] if v > 0]
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    return (a.sum() + b.sum(), (a * b).sum(), (a - b).sum(), pairs[-1][1], len(pairs),
            len(pairs))


@pytest.mark.parametrize("xv", [[1.0, 2.0, -1.0, 3.0], [0.5, -1.0, -2.0, -3.0],
                                [2.0, 1.0, 1.5, 0.5]])
def test_pairs_appended_under_a_tensor_if_transposed_iterated_and_indexed(xv):
    static = d2s.to_static(kept_by_sign, full_graph=True)
    want = ref_kept_by_sign(np.asarray(xv, np.float64))
    for fn in (kept_by_sign, static):
        got = fn(rt.to_tensor(np.asarray(xv, "float32")))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(float(g), w, rtol=1e-5, atol=1e-6)


def test_one_program_for_pairs_under_a_tensor_if():
    static = d2s.to_static(kept_by_sign, full_graph=True)
    for xv in ([1.0, 2.0, -1.0, 3.0], [0.5, -1.0, -2.0, -3.0]):
        static(rt.to_tensor(np.asarray(xv, "float32")))
    assert len(static.program_cache) == 1


def columns_as_sequence(x, n):
    pairs = []
    for i in range(n):
        pairs.append((x[i], x[i] * 2.0))
    out = []
    for column in zip(*pairs):
        out.append(rt.stack(column))
    return out


def test_columns_used_as_a_sequence_are_refused_at_the_users_line():
    with pytest.raises(TypeError) as info:
        d2s.to_static(columns_as_sequence, full_graph=True)(rt.to_tensor(X), rt.to_tensor(2))
    text = assert_at_user_line(info.value, __file__, line_of(columns_as_sequence, "zip(*"))
    assert "a count only the run decides" in text


def test_zip_star_of_python_lists_is_pythons():
    @d2s.to_static
    def f(x):
        a, b = zip(*[(x, 1), (x * 2.0, 2)])
        return rt.stack(a).sum() * sum(b)

    assert float(f(rt.to_tensor(np.array([1.0, 2.0], "float32")))) == pytest.approx(27.0)


def nested_items(x, n):
    """Items with a nested pair, transposed by a starred unpacking; the nested column is a
    list of pairs itself (a comprehension unpacks it), and the items sort part by part."""
    items = []
    for i in range(n):
        items.append((x[i, 0], (x[i, 1] * 2.0, x[i, 0] + 1.0)))
    first, *rest = zip(*items)
    inner = [a * b for a, b in rest[0]]
    smallest = sorted(items)[0]  # noqa: FURB192  (the sort is what is tested)
    return rt.stack(first).sum(), rt.stack(inner).sum(), smallest[1][0], len(rest)


def ref_nested_items(x, n):
    items = [(x[i, 0], (x[i, 1] * 2.0, x[i, 0] + 1.0)) for i in range(n)]
    return (sum(a for a, _ in items), sum(b * c for _, (b, c) in items),
            sorted(items)[0][1][0], 1)  # noqa: FURB192


def test_a_starred_unpacking_of_nested_items_over_several_lengths():
    static = d2s.to_static(nested_items, full_graph=True)
    for n in (4, 1, 3):
        want = ref_nested_items(X.astype(np.float64), n)
        for got in (nested_items(rt.to_tensor(X), n), static(rt.to_tensor(X), rt.to_tensor(n))):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(float(g), w, rtol=1e-6)
    with pytest.raises(ValueError) as eager:
        nested_items(rt.to_tensor(X), 0)
    with pytest.raises(ValueError) as info:
        static(rt.to_tensor(X), rt.to_tensor(0))
    assert str(eager.value) == "not enough values to unpack (expected at least 1, got 0)"
    assert str(eager.value) in shown(info.value)
    assert len(static.program_cache) == 1
