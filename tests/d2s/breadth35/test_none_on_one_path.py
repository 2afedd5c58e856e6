"""A value that is None on one path of a tensor `if` and a tensor on the other (issue 35):
`bias = None` then `bias = self.proj(x)` under a tensor condition, read as `if bias is not
None:`; `return out, None` beside `return out, counts` (in tuples, lists and dicts); a skipped
optimizer step that returns `None, 0.0`; `self.cache = None` in one branch. One program serves
inputs taking either path: the call gives eager's None exactly where the branch left None, and
`is None` / `is not None` of the value decide a tensor `if` per run. Any other use of the
value on the runs where it is None raises as eager code does (a TypeError or AttributeError:
`NoneValueError` is both) at the user's line, never computes with the zeros; a graph loop
carrying such a value, and `d2s.save` of one, are refused with a clear error."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn as nn
from d2s.errors import ConversionError

from .messages import INTERNAL, assert_at_user_line, shown

POS = np.array([[0.5, 1.0, -0.25], [1.5, 0.25, 0.75]], "float32")  # mean > 0
NEG = np.array([[-0.5, -1.0, 0.25], [-1.5, 0.25, -0.75]], "float32")  # mean < 0
INPUTS = [POS, NEG, POS]  # (back to the first path: one program, no stale flag)


def _leaves_same(got, want):
    """Python types, None-ness, values, dtypes and stop_gradient of what a user observes."""
    if want is None or isinstance(want, (float, int, str)):
        assert type(got) is type(want), (got, want)
        if want is not None:
            assert got == pytest.approx(want, rel=1e-6)
        return
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            _leaves_same(g, w)
        return
    if isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want), (got, want)
        for k in want:
            _leaves_same(got[k], want[k])
        return
    assert isinstance(got, rt.Tensor), got
    assert got.dtype == want.dtype and got.stop_gradient == want.stop_gradient
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


class Gate(nn.Layer):
    """A residual whose bias exists only for positive inputs (a Paddle-style helper)."""

    def __init__(self):
        super().__init__()
        rt.seed(3)
        self.proj = nn.Linear(3, 3)

    def make_bias(self, x):
        bias = None
        if x.mean() > 0:
            bias = self.proj(x) * 0.5
        return bias

    def forward(self, x):
        bias = self.make_bias(x)
        if bias is not None:
            x = x + bias
        return x.tanh(), bias


def _gate_reference(layer, x):
    w, b = layer.proj.weight.numpy().astype("float64"), layer.proj.bias.numpy()
    bias = (x @ w + b) * 0.5 if x.mean() > 0 else None
    return np.tanh(x + bias) if bias is not None else np.tanh(x), bias


def test_bias_on_one_path_read_by_is_not_none():
    layer = Gate()
    static = d2s.to_static(Gate())
    static.set_state_dict(layer.state_dict())
    for x in INPUTS:
        want = layer(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        _leaves_same(got, want)
        ref = _gate_reference(layer, x.astype("float64"))
        np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-5)
        assert (got[1] is None) == (ref[1] is None)
        if ref[1] is not None:
            np.testing.assert_allclose(got[1].numpy(), ref[1], rtol=1e-5)
    assert len(static.forward.program_cache) == 1


def _grad_of(fn, x):
    for p in fn.parameters():
        p.grad = None
    t = rt.to_tensor(x, stop_gradient=False)
    out, bias = fn(t)
    loss = (out * out).sum() + (bias.sum() if bias is not None else 0.0)
    loss.backward()
    # (the projection's parameters get no gradient where the bias is None)
    assert [p.grad is None for p in fn.parameters()] == [x.mean() <= 0] * 2
    return t.grad.numpy()


def _finite_difference(layer, x, eps=1e-3):
    def loss(v):
        out, bias = _gate_reference(layer, v)
        return (out * out).sum() + (bias.sum() if bias is not None else 0.0)
    x = x.astype("float64")
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (loss(x + d) - loss(x - d)) / (2 * eps)
    return g


def test_gradients_through_the_tensor_path_and_the_none_path():
    layer = Gate()
    static = d2s.to_static(Gate())
    static.set_state_dict(layer.state_dict())
    for x in INPUTS:
        want = _finite_difference(layer, x)
        np.testing.assert_allclose(_grad_of(layer, x), want, rtol=2e-3, atol=2e-4)
        np.testing.assert_allclose(_grad_of(static, x), want, rtol=2e-3, atol=2e-4)
    assert len(static.forward.program_cache) == 1


def counts_or_none(x, with_counts):
    out = x * 3
    if x.sum() > 0:
        return out, None, [out.sum(), None], {"aux": None, "n": 1}
    counts = (x > 0).astype("int64").sum(axis=0)
    return out, counts, [out.sum(), counts], {"aux": counts, "n": 2}


def counts_reference(x):
    out = x * 3
    if x.sum() > 0:
        return out, None, [out.sum(), None], {"aux": None, "n": 1}
    counts = (x > 0).astype("int64").sum(axis=0)
    return out, counts, [out.sum(), counts], {"aux": counts, "n": 2}


@pytest.mark.parametrize("calls", [1, 3])  # the slow call path, then the fast one
def test_none_inside_returned_tuples_lists_and_dicts(calls):
    static = d2s.to_static(counts_or_none)
    for _ in range(calls):
        for x in INPUTS:
            want = counts_or_none(rt.to_tensor(x), True)
            got = static(rt.to_tensor(x), True)
            _leaves_same(got, want)
            ref = counts_reference(x.astype("float64"))
            assert [v is None for v in (got[1], got[2][1], got[3]["aux"])] == \
                [v is None for v in (ref[1], ref[2][1], ref[3]["aux"])]
            assert got[3]["n"] == ref[3]["n"] and type(got[3]["n"]) is int
    assert len(static.program_cache) == 1


def clip_or_skip(grad, max_norm):
    norm = rt.linalg.norm(grad)
    if not rt.isfinite(norm):
        return None, 0.0
    scale = max_norm / (norm + 1e-6)
    if scale < 1.0:
        grad = grad * scale
    return grad, 1.0


@pytest.mark.parametrize("values", [[0.5, -0.2, 0.1], [3.0, -4.0, 0.0], [np.nan, 1.0, 0.0]])
def test_skipped_step_returns_none_and_a_python_float(values):
    static = d2s.to_static(clip_or_skip)
    for v in (values, [np.nan, 0.0, 0.0], [30.0, 40.0, 0.0]):  # (every path, one program)
        g = np.array(v, "float32")
        want = clip_or_skip(rt.to_tensor(g), 1.0)
        got = static(rt.to_tensor(g), 1.0)
        _leaves_same(got, want)
        norm = np.linalg.norm(g.astype("float64"))
        assert (got[0] is None) == (not np.isfinite(norm))
        if got[0] is not None:
            np.testing.assert_allclose(got[0].numpy(), g * min(1.0, 1.0 / (norm + 1e-6)),
                                       rtol=1e-5)
    assert len(static.program_cache) == 1


class Streaming(nn.Layer):
    """A cache kept only while the input is positive (`self.cache = None` resets it)."""

    def __init__(self):
        super().__init__()
        self.cache = None

    def forward(self, x):
        if x.mean() > 0:
            self.cache = x * 2
        else:
            self.cache = None
        return x + 1


class Holder:
    def __init__(self):
        self.last = rt.zeros([2, 3])


def keep_or_drop(x, holder):
    if x.max() > 1.0:
        holder.last = None
    return x * 2


def test_written_back_attributes_are_none_where_eager_sets_none():
    eager, static = Streaming(), d2s.to_static(Streaming())
    h_eager, h_static = Holder(), Holder()
    convert = d2s.to_static(keep_or_drop)
    for x in INPUTS:
        _leaves_same(static(rt.to_tensor(x)), eager(rt.to_tensor(x)))
        assert (static.cache is None) == (eager.cache is None) == (x.mean() <= 0)
        if eager.cache is not None:
            _leaves_same(static.cache, eager.cache)
        h_eager.last, h_static.last = rt.zeros([2, 3]), rt.zeros([2, 3])
        _leaves_same(convert(rt.to_tensor(x), h_static), keep_or_drop(rt.to_tensor(x), h_eager))
        assert (h_static.last is None) == (h_eager.last is None) == (x.max() > 1.0)
    # (a program traced where the cache was None keeps it None on the path that leaves it:
    # guarded, so a call where it holds a tensor traces the one other program)
    assert len(static.forward.program_cache) == 2


class LastPositive:
    def __init__(self):
        self.last = None

    def update(self, v):
        if v.mean() > 0:
            self.last = v * 1.0
        return v * 2.0


def test_a_none_the_call_keeps_is_guarded():
    """`self.last` None before the call and kept by the path not taken: the program gives
    that None, so a later call where it holds a tensor keeps the tensor (not None)."""
    eager, static = LastPositive(), LastPositive()
    convert = d2s.to_static(lambda h, v: h.update(v))
    for x in (NEG, POS, NEG, POS * 2, NEG):
        convert(static, rt.to_tensor(x))
        eager.update(rt.to_tensor(x))
        assert (static.last is None) == (eager.last is None)
        if eager.last is not None:
            _leaves_same(static.last, eager.last)


def use_without_test(x):
    bias = None
    if x.mean() > 0:
        bias = x * 2
    y = x * 3
    return y + bias  # line 15 of the function


def method_without_test(x):
    bias = None
    if x.mean() > 0:
        bias = x * 2
    return bias.sum()  # line 5 of the function


@pytest.mark.parametrize("fn, line", [(use_without_test, 5), (method_without_test, 4)])
def test_a_use_on_runs_where_it_is_none_raises_eagers_error_at_the_users_line(fn, line):
    static = d2s.to_static(fn)
    _leaves_same(static(rt.to_tensor(POS)), fn(rt.to_tensor(POS)))
    with pytest.raises((TypeError, AttributeError)) as eager:
        fn(rt.to_tensor(NEG))
    with pytest.raises(type(eager.value)) as e:  # (eager's type: `except` catches it)
        static(rt.to_tensor(NEG))
    assert isinstance(e.value, TypeError) and isinstance(e.value, AttributeError)
    text = assert_at_user_line(e.value, __file__, fn.__code__.co_firstlineno + line)
    assert "'bias' is None on this run" in text and "bias is not None" in text
    _leaves_same(static(rt.to_tensor(POS)), fn(rt.to_tensor(POS)))  # (and on again)


def carried_by_a_graph_loop(x):
    bias = None
    if x.mean() > 0:
        bias = x * 2
    i = rt.to_tensor(0)
    while i < x.shape[0] + (x.sum() * 0).astype("int64"):
        bias = bias + 1
        i = i + 1
    return bias


def test_a_graph_loop_carrying_it_is_refused_at_the_loop():
    with pytest.raises(ConversionError) as e:
        d2s.to_static(carried_by_a_graph_loop)(rt.to_tensor(POS))
    text = assert_at_user_line(e.value, __file__,
                               carried_by_a_graph_loop.__code__.co_firstlineno + 5)
    assert "'bias' is None on some runs" in text


def test_saving_such_a_result_is_refused(tmp_path):
    static = d2s.to_static(counts_or_none)
    with pytest.raises(TypeError, match="None on some runs") as e:
        d2s.save(static, str(tmp_path / "m"), input_spec=[d2s.InputSpec([2, 3], "float32"),
                                                          True])
    assert not INTERNAL.search(shown(e.value))


def _optional(x):
    bias = None
    if x.mean() > 0:
        bias = x * 2
    return bias


def truth_and_default(x):
    bias = _optional(x)
    if bias is not None and bias.sum() > 3:  # (`and`: the right side only where not None)
        x = x + bias
    if bias is None:
        bias = rt.zeros_like(x)  # (a default: a tensor on every run after it)
    return x, bias


def conditional_expressions(x):
    bias = _optional(x)
    y = bias if bias is not None else x
    z = x if bias is None else bias * 3
    return y, z, bias == None, bias != None  # noqa: E711  (user code compares so)


def nested_and_in_lists(x):
    bias = None
    if x.mean() > 0:
        if x.max() > 1.2:
            bias = x * 2
    out = [x.sum()]
    out.append(bias)
    return out, {"bias": bias}


def raising_branch(x):
    bias = _optional(x)
    if x.max() > 100:
        raise ValueError("too big")
    else:
        if x.min() < -1.2:
            bias = None
    return bias


def truthiness(x):
    total = None
    if x.mean() > 0:
        total = x.sum()
    if total:  # (False where None, as `bool(None)`)
        return x
    return x * 2


def _reference(name, x):
    """What eager code gives, computed with NumPy (None where it has None)."""
    pos = x.mean() > 0
    bias = x * 2 if pos else None
    if name == "truth_and_default":
        y = x + bias if bias is not None and bias.sum() > 3 else x
        return y, bias if bias is not None else np.zeros_like(x)
    if name == "conditional_expressions":
        return (bias if pos else x), (bias * 3 if pos else x), not pos, pos
    if name == "nested_and_in_lists":
        b = x * 2 if pos and x.max() > 1.2 else None
        return [x.sum(), b], {"bias": b}
    if name == "raising_branch":
        return None if x.min() < -1.2 else bias
    return x if pos and x.sum() != 0 else x * 2


def _same_as_reference(got, want):
    if isinstance(want, (list, tuple)):
        for g, w in zip(got, want, strict=True):
            _same_as_reference(g, w)
    elif isinstance(want, dict):
        for k in want:
            _same_as_reference(got[k], want[k])
    elif want is None or isinstance(want, (bool, np.bool_)):
        assert (got is None) if want is None else (bool(got) == bool(want)), (got, want)
    else:
        np.testing.assert_allclose(np.asarray(got.numpy(), "float64"), want, rtol=1e-5)


@pytest.mark.parametrize("fn", [truth_and_default, conditional_expressions,
                                nested_and_in_lists, raising_branch, truthiness])
def test_idioms_around_an_optional_tensor(fn):
    static = d2s.to_static(fn)
    for x in (POS, NEG, POS * 0.1, NEG * 2, POS):
        want = fn(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        _leaves_same(got, want)
        _same_as_reference(got, _reference(fn.__name__, x.astype("float64")))
    assert len(static.program_cache) == 1


def looked_at(x):
    bias = _optional(x)
    if isinstance(bias, rt.Tensor):  # (False where None)
        x = x - bias
    print("bias:", bias, [bias, 1])
    print(f"b={bias}")
    return x, isinstance(bias, type(None)), isinstance(bias, (rt.Tensor, type(None)))


def test_isinstance_and_print_of_an_optional_tensor(capsys):
    static = d2s.to_static(looked_at)
    for x in (POS, NEG, POS):
        want = looked_at(rt.to_tensor(x))
        printed = capsys.readouterr().out
        got = static(rt.to_tensor(x))
        assert capsys.readouterr().out == printed  # ("None" where eager prints None)
        _leaves_same(got, want)
        assert want[1] == (x.mean() <= 0)
    assert len(static.program_cache) == 1
