"""Lists that start with Python numbers and get tensors where a tensor decides their length
(issue 35, "Mixed lists in graph loops"): `out = [0.0]`, then `out.append(x[i] * 2)` in a loop
over a tensor range, `[bos]` then int64 token tensors, `[True]` then bool tensors, insert /
extend / `+=` / `pop` / `out[i] = t`, and a list a tensor `if` grows. They were refused at the
append ("an array holds one dtype ... Cast what you append"); they convert: the items read
(`out[0]`, `out[-1]`, a `for`, `pop`), `len`, `sum` and the returned list give eager's Python
numbers where eager has them and tensors of eager's dtype elsewhere. Eager vs static vs a
NumPy reference over trip counts 0, 1 and 3 through one program, gradients against finite
differences; what cannot be kept (an int beside float tensors, a float the dtype cannot
hold, comparing the items) is an error at the user's line."""
import inspect

import numpy as np
import pytest

import d2s
import runtime as rt
from runtime.static import InputSpec
from tests.finite_differences import numeric_grad

from .messages import assert_at_user_line, shown

XV = np.array([1.5, -2.0, 3.0, 0.5], "float32")


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def doubled(x, n):
    out = [0.5]
    for i in range(n):
        out.append(x[i] * 2)
    return out


def scores(x, n):
    out = doubled(x, n)
    first, last = out[0], out[-1]
    total = 0.0
    for v in out:
        total = total + v
    return out, len(out), first * 2, last, total, sum(out)


def reference(xv, k):
    items = [0.5] + [np.float32(xv[i] * 2) for i in range(k)]
    return items, np.float32(sum(np.float64(v) for v in items))


def test_floats_then_float_tensors_through_one_program():
    static = d2s.to_static(scores, full_graph=True)
    for k in (0, 1, 3):
        items, total = reference(XV, k)
        for fn in (scores, static):
            out, n, first, last, loop_total, summed = fn(rt.to_tensor(XV), rt.to_tensor(k))
            assert type(out) is list and int(n) == k + 1
            assert type(out[0]) is float and out[0] == 0.5
            assert all(isinstance(v, rt.Tensor) and v.dtype == rt.float32 and v.shape == []
                       for v in out[1:])
            np.testing.assert_allclose([float(v) for v in out], items, rtol=1e-6)
            assert type(first) is float and first == 1.0
            if k == 0:
                assert type(last) is float and last == 0.5
                assert type(loop_total) is float and type(summed) is float
            else:
                assert isinstance(last, rt.Tensor) and last.dtype == rt.float32
                assert isinstance(summed, rt.Tensor) and summed.dtype == rt.float32
                np.testing.assert_allclose(float(last), items[-1], rtol=1e-6)
            np.testing.assert_allclose(float(loop_total), total, rtol=1e-6)
            np.testing.assert_allclose(float(summed), total, rtol=1e-6)
    assert len(static.program_cache) == 1


def loss_of(x, n):
    out = [1.0]
    for i in range(n):
        out.append(x[i] * x[i])
    return sum(out) * 2.0 + out[-1] * 3.0


def test_gradients_through_the_tensor_items():
    static = d2s.to_static(loss_of, full_graph=True)
    for k in (1, 3):
        def f(v, k=k):
            sq = [1.0] + [float(v[i]) ** 2 for i in range(k)]
            return 2.0 * sum(sq) + 3.0 * sq[-1]
        want = numeric_grad(f, XV.astype("float64"))
        for fn in (loss_of, static):
            x = rt.to_tensor(XV, stop_gradient=False)
            loss = fn(x, rt.to_tensor(k))
            np.testing.assert_allclose(float(loss), f(XV.astype("float64")), rtol=1e-5)
            loss.backward()
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)
    x = rt.to_tensor(XV, stop_gradient=False)
    loss = static(x, rt.to_tensor(0))
    assert type(loss) is float and loss == 5.0  # (no tensor: eager's Python float)
    assert len(static.program_cache) == 1


def greedy(logits, n, bos):
    tokens = [bos]
    for i in range(n):
        tokens.append(rt.argmax(logits[i]))
    return tokens, tokens[-1]


def test_a_start_token_then_int64_token_tensors():
    logits = np.array([[0.1, 0.9, 0.0], [0.7, 0.2, 0.1], [0.0, 0.1, 0.9]], "float32")
    static = d2s.to_static(greedy, full_graph=True)
    for k in (0, 1, 3):
        want = [2] + [int(np.argmax(logits[i])) for i in range(k)]
        for fn in (greedy, static):
            tokens, last = fn(rt.to_tensor(logits), rt.to_tensor(k), 2)
            assert type(tokens[0]) is int and tokens[0] == 2
            assert all(isinstance(t, rt.Tensor) and t.dtype == rt.int64 for t in tokens[1:])
            assert [int(t) for t in tokens] == want
            assert (type(last) is int) == (k == 0) and int(last) == want[-1]
    assert len(static.program_cache) == 1


def positives(x, n):
    seen = [True]
    for i in range(n):
        seen.append(x[i] > 0)
    return seen


def test_a_bool_then_bool_tensors():
    static = d2s.to_static(positives, full_graph=True)
    for k in (0, 1, 3):
        want = [True] + [bool(XV[i] > 0) for i in range(k)]
        for fn in (positives, static):
            seen = fn(rt.to_tensor(XV), rt.to_tensor(k))
            assert type(seen[0]) is bool
            assert all(isinstance(t, rt.Tensor) and t.dtype == rt.bool for t in seen[1:])
            assert [bool(t) for t in seen] == want


class Buffer:
    """A model-style helper: the list starts from a Python number on `self`."""

    def __init__(self):
        self.start = 0.0

    def collect(self, x, n):
        out = [self.start]
        for i in range(n):
            out.insert(0, x[i])
            out.extend([x[i] + 1.0, 2.0])
            out += [x[i] * 3.0]
        out[0] = x[0] * 2.0
        last = out.pop()
        return out, last


def collect_ref(xv, k):
    out = [0.0]
    for i in range(k):
        out.insert(0, np.float32(xv[i]))
        out.extend([np.float32(xv[i] + 1.0), 2.0])
        out += [np.float32(xv[i] * 3.0)]
    out[0] = np.float32(xv[0] * 2.0)
    return out[:-1], out[-1]


def test_insert_extend_plus_equal_setitem_and_pop():
    buf = Buffer()
    static = d2s.to_static(buf.collect, full_graph=True)
    for k in (0, 1, 3):
        want, want_last = collect_ref(XV, k)
        for fn in (buf.collect, static):
            out, last = fn(rt.to_tensor(XV), rt.to_tensor(k))
            assert [type(v) is float for v in out] == [type(v) is float for v in want]
            np.testing.assert_allclose([float(v) for v in out], want, rtol=1e-6)
            assert (type(last) is float) == (type(want_last) is float)
            np.testing.assert_allclose(float(last), want_last, rtol=1e-6)


def grown_by_if(x):
    out = [0.0]
    if x.sum() > 0:
        out.append(x.sum())
    plus = [v + 1.0 for v in out]
    return out, plus, len(out)


def test_a_list_a_tensor_if_grows():
    static = d2s.to_static(grown_by_if, full_graph=True)
    for xv in (XV, -XV):
        taken = xv.sum() > 0
        for fn in (grown_by_if, static):
            out, plus, n = fn(rt.to_tensor(xv))
            assert int(n) == (2 if taken else 1) and type(out[0]) is float
            assert type(plus[0]) is float and plus[0] == 1.0
            if taken:
                assert isinstance(out[1], rt.Tensor) and isinstance(plus[1], rt.Tensor)
                np.testing.assert_allclose(float(plus[1]), xv.sum() + 1.0, rtol=1e-6)
    assert len(static.program_cache) == 1


def floats_then_ints(x, n):
    out = [0.5]
    for i in range(n):
        out.append(rt.argmax(x[i:]))
    return out


def inexact_start(x, n):
    out = [0.1]
    for i in range(n):
        out.append(x[i])
    return out


def counted(x, n):
    out = doubled(x, n)
    return out.count(0.5)


def test_what_cannot_be_kept_is_an_error_at_the_line():
    x, n = rt.to_tensor(XV), rt.to_tensor(2)
    # (an int beside float tensors converts since: tests/d2s/breadth35/
    # test_numbers_of_another_type_beside_tensors.py; a float beside int64 tensors cannot)
    assert type(floats_then_ints(x, n)[0]) is float
    with pytest.raises(d2s.StateChangeError) as info:
        d2s.to_static(floats_then_ints, full_graph=True)(x, n)
    text = assert_at_user_line(info.value, __file__, line_of(floats_then_ints, "out.append"))
    assert "Start the list with ints" in text

    assert inexact_start(x, n)[0] == 0.1
    with pytest.raises(ValueError) as info:
        d2s.to_static(inexact_start, full_graph=True)(x, n)
    text = assert_at_user_line(info.value, __file__, line_of(inexact_start, "for i in"))
    assert "cannot hold one of its numbers exactly" in text

    assert counted(x, n) == 1
    with pytest.raises(d2s.ConversionError) as info:
        d2s.to_static(counted, full_graph=True)(x, n)
    text = assert_at_user_line(info.value, __file__, line_of(counted, "out.count"))
    assert "count() of a list holding Python floats and tensors of float32" in shown(
        info.value)


def tagged(x, n):
    names = ["start", 1]
    for i in range(n):
        if i > 5:
            continue
        names.append("s" if x[i] > 0 else 2)
    return len(names)


def tagged_from_empty(x, n):
    names = []
    for i in range(n):
        names.append("s")
        names += [i]
    return len(names)


def test_strs_beside_numbers_in_a_graph_loop_name_the_list_and_the_append():
    x, n = rt.to_tensor(XV), rt.to_tensor(2)
    assert tagged(x, n) == 4 and tagged_from_empty(x, n) == 4
    for fn, grows in ((tagged, "names.append"), (tagged_from_empty, "names.append")):
        with pytest.raises(d2s.StateChangeError) as info:
            d2s.to_static(fn, full_graph=True)(x, n)
        text = assert_at_user_line(info.value, __file__, line_of(fn, "for i in"))
        assert f'File "{__file__}", line {line_of(fn, grows)}' in text
        assert "'names' holds str items" in text and "an index into a tuple of the texts" in text


def tensors_then_floats(x, n):
    out = [x.sum()]
    for i in range(n):
        out.append(0.5)
        out.append(x[i] * 2.0)
    return out, sum(out) * out[-1]


def test_tensors_then_python_floats_keep_each_type_and_the_gradient():
    # (the floats came back as float32 Tensors: eager's list holds Python floats there)
    static = d2s.to_static(tensors_then_floats, full_graph=True)
    for k in (0, 1, 3):
        def f(v, k=k):
            items = [v.sum()] + [w for i in range(k) for w in (0.5, 2.0 * v[i])]
            return sum(items) * items[-1]
        want = numeric_grad(f, XV.astype("float64"))
        for fn in (tensors_then_floats, static):
            x = rt.to_tensor(XV, stop_gradient=False)
            out, loss = fn(x, rt.to_tensor(k))
            assert [type(v) is float for v in out] == [False] + [True, False] * k
            np.testing.assert_allclose(
                [float(v) for v in out],
                [XV.sum()] + [w for i in range(k) for w in (0.5, 2.0 * XV[i])], rtol=1e-6)
            np.testing.assert_allclose(float(loss), f(XV.astype("float64")), rtol=1e-5)
            loss.backward()
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-4, atol=1e-4)
    assert len(static.program_cache) == 1


def scaled_by_counter(x, n):
    b = 1.0
    if x.sum() > 0:
        b = x.sum()
    r = []
    for i in range(n):
        r.append(b * i)
    for i, v in enumerate(doubled(x, n)):
        r.append(v * i)
    return r


def test_a_number_on_some_runs_times_a_graph_loop_counter():
    # (`b * i` with `i` a graph loop's counter was a tensor on every run: the counter was
    # cast to the tensor's dtype before the number path was computed)
    static = d2s.to_static(scaled_by_counter, full_graph=True)
    for xv in (XV, -XV):
        for k in (0, 1, 3):
            b = float(xv.sum()) if xv.sum() > 0 else 1.0
            want = [b * i for i in range(k)] + [v * i for i, v in enumerate(
                [0.5] + [float(np.float32(xv[j] * 2)) for j in range(k)])]
            kinds = [xv.sum() <= 0] * k + [True] + [False] * k
            for fn in (scaled_by_counter, static):
                r = fn(rt.to_tensor(xv), rt.to_tensor(k))
                assert [type(v) is float for v in r] == kinds
                np.testing.assert_allclose([float(v) for v in r], want, rtol=1e-6)
    assert len(static.program_cache) == 1


def history(x, tol):
    hist = [1.0]
    loss = x.sum()
    while loss > tol:
        loss = loss * 0.5
        hist.append(loss)
    return rt.stack([rt.to_tensor(h) if isinstance(h, float) else h * 1.0 for h in hist])


def test_stack_of_the_tensors_a_comprehension_made_of_such_a_list():
    static = d2s.to_static(history, full_graph=True)
    for scale, steps in ((1.0, 3), (0.01, 0)):
        xv = XV * scale
        want = [1.0] + [xv.sum() * 0.5 ** (i + 1) for i in range(steps)]
        for fn in (history, static):
            out = fn(rt.to_tensor(xv), 0.5)
            assert isinstance(out, rt.Tensor) and out.dtype == rt.float32
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    assert len(static.program_cache) == 1


class Doubler(rt.nn.Layer):
    def forward(self, x):
        out = [0.5]
        for i in range(x.shape[0]):
            out.append(x[i] * 2)
        return out


def test_saving_a_function_that_returns_such_a_list_is_refused(tmp_path):
    # (a saved model's lists are of tensors or of numbers: its items would be pairs)
    with pytest.raises(TypeError, match="list of Python numbers and tensors"):
        d2s.save(d2s.to_static(Doubler().eval()), str(tmp_path / "doubler"),
                 input_spec=[InputSpec([None], "float32")])


class History:
    """Streaming-model state: a history list on `self` and one in a dict of caches."""

    def __init__(self):
        self.hist = [0.0]
        self.cache = {"h": [1.0]}

    def step(self, x, n):
        for i in range(n):
            self.hist.append(x[i])
            self.cache["h"].append(x[i] * 2.0)
        return len(self.hist)


def test_lists_on_self_and_in_a_dict_grown_in_a_graph_loop():
    for k in (0, 1, 3):
        eager, static = History(), History()
        fn = d2s.to_static(static.step, full_graph=True)
        assert eager.step(rt.to_tensor(XV), rt.to_tensor(k)) == k + 1
        assert int(fn(rt.to_tensor(XV), rt.to_tensor(k))) == k + 1
        for got, want in ((static.hist, eager.hist), (static.cache["h"], eager.cache["h"])):
            assert [type(v) is float for v in got] == [True] + [False] * k
            assert [type(v) is float for v in want] == [True] + [False] * k
            np.testing.assert_allclose([float(v) for v in got], [float(v) for v in want])


def picked(x, y, n):
    out = [0.5]
    for i in range(n):
        if x[i] > 0:
            out.append(x[i] * 2)  # (a gradient path to x)
        else:
            out.append(y[i] * 3)  # (none: y needs no gradient)
    return out


@pytest.mark.parametrize("k", [0, 1, 3])
def test_a_returned_mixed_list_keeps_each_items_gradient_path(k):
    """Returned, the tensor items keep eager's `stop_gradient` and their gradient path (they
    came back cut: stop_gradient True and no gradient)."""
    static = d2s.to_static(picked)
    yv = np.array([5.0, 6.0, 7.0, 8.0], "float32")
    seen = []
    for fn in (picked, static):
        x = rt.to_tensor(XV, stop_gradient=False)
        out = fn(x, rt.to_tensor(yv), rt.to_tensor(np.array(k)))
        seen.append([(type(v).__name__, getattr(v, "stop_gradient", None), float(v))
                     for v in out])
        live = [v for v in out[1:] if not v.stop_gradient]
        if live:
            sum(live).backward()
        seen.append(None if x.grad is None else x.grad.numpy().tolist())
    assert seen[0] == seen[2] and seen[1] == seen[3]
    want = [0.5] + [2 * XV[i] if XV[i] > 0 else 3 * yv[i] for i in range(k)]
    np.testing.assert_allclose([v for _, _, v in seen[2]], want)
    grad = [2.0 if i < k and XV[i] > 0 else 0.0 for i in range(4)]
    assert seen[3] == (grad if any(grad) else None)
    assert static.program_cache.traces == 1
