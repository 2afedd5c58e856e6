"""Functions written the way Paddle users write them for `paddle.jit.to_static`, ported by
changing the import (`import runtime as paddle`): `.numpy()` and `.item()` in conditions and
loops, `paddle.to_tensor` of traced values, NumPy arrays as arguments, `self.` state,
closures, nested containers, and `to_static(full_graph=False)` on code that cannot be one
program. Each runs eagerly and converted on inputs that take different paths through ONE
program, and is checked against a NumPy reference."""
import math
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import d2s
import runtime as paddle

to_static = d2s.to_static  # as `from paddle.jit import to_static`


class NP(NamedTuple):
    """An argument passed as a NumPy array (Paddle feeds it to the program as a tensor)."""

    a: np.ndarray


class Case(NamedTuple):
    fn: Callable
    inputs: list          # argument tuples: np arrays become tensors, NP(...) stay arrays
    ref: Callable         # the NumPy reference, on the same arguments as arrays
    programs: int         # programs the converted function ends with
    full_graph: bool


CASES: list[Case] = []


def case(*inputs, ref, programs=1, full_graph=True):
    def register(fn):
        CASES.append(Case(fn, list(inputs), ref, programs, full_graph))
        return fn
    return register


def f32(*v):
    return np.array(v, dtype="float32")


POS, NEG = f32(1.0, 2.0, 3.0), f32(-1.0, -2.0, -4.0)
I2, I4 = np.array([2], "int64"), np.array([4], "int64")


# ---- .numpy() inside converted code (kept in the graph) ------------------------------------

@case((POS,), (NEG,), ref=lambda x: x * 2 if x.mean() > 0.5 else x - 1)
def numpy_in_condition(x):
    if paddle.mean(x).numpy() > 0.5:
        y = x * 2
    else:
        y = x - 1
    return y


@case((POS,), (NEG,), ref=lambda x: x + x[0])
def numpy_then_index(x):
    first = x.numpy()[0]
    return x + first


@case((POS, I2), (NEG, I4), ref=lambda x, n: x + n[0])
def range_of_numpy_element(x, n):
    for _ in range(n.numpy()[0]):
        x = x + 1
    return x


@case((POS,), (NEG,), ref=lambda x: x * 3 if x[0] > 0 else -x)
def numpy_element_in_condition(x):
    if x.numpy()[0] > 0:
        return x * 3
    return -x


@case((POS,), (NEG,), ref=lambda x: np.where(x.sum() > 0, x, 0 * x) + 1)
def numpy_sum_method_in_condition(x):
    out = paddle.zeros_like(x)
    if x.numpy().sum() > 0:
        out = x
    return out + 1


@case((POS,), (NEG,), ref=lambda x: x * 0.5 if x.max() > 2.5 else (x * 2 if x.max() > 0 else x))
def numpy_in_elif_chain(x):
    m = paddle.max(x).numpy()
    if m > 2.5:
        x = x * 0.5
    elif m > 0:
        x = x * 2
    return x


@case((POS,), (NEG,), ref=lambda x: _while_ref(x))
def while_on_numpy(x):
    while paddle.sum(x).numpy() < 20:
        x = x + 3
    return x


def _while_ref(x):
    while x.sum() < 20:
        x = x + 3
    return x


# ---- .item() / float() / int() as tensor operands ------------------------------------------

@case((POS,), (NEG,), ref=lambda x: x * x.sum())
def item_as_operand(x):
    s = paddle.sum(x).item()
    return x * s


@case((POS,), (NEG,), ref=lambda x: x / x.max())
def float_of_tensor_as_operand(x):
    return x / float(paddle.max(x))


@case((POS, I2), (NEG, I4), ref=lambda x, n: x * 2.0 ** n[0])
def int_of_tensor_as_range_bound(x, n):
    for _ in range(int(n[0])):
        x = x * 2
    return x


@case((POS,), (NEG,), ref=lambda x: x + 1 if x.sum() > 0 else x - 1)
def item_in_condition(x):
    if x.sum().item() > 0:
        return x + 1
    return x - 1


@case((POS,), (NEG,), ref=lambda x: np.maximum(x, max(x.mean(), 0.5)))
def max_of_item_and_number(x):
    floor = max(paddle.mean(x).item(), 0.5)
    return paddle.maximum(x, paddle.full_like(x, 1.0) * floor)


@case((POS,), (NEG,), ref=lambda x: x * 2 if x.mean() > 0 else x * -3)
def conditional_expression_on_item(x):
    k = 2.0 if x.mean().item() > 0 else -3.0
    return x * k


@case((POS,), (NEG,), ref=lambda x: x[1:] * x[0])
def item_of_an_element(x):
    return x[1:] * x[0].item()


# ---- paddle.to_tensor of traced values ----------------------------------------------------

@case((POS,), (NEG,), ref=lambda x: (x * 2).astype("int64"))
def to_tensor_of_traced_value(x):
    y = paddle.to_tensor(x * 2, dtype="int64")
    return y


@case((POS,), (NEG,), ref=lambda x: x + x.mean())
def to_tensor_of_numpy_of_traced_value(x):
    m = paddle.to_tensor(paddle.mean(x).numpy())
    return x + m


@case((POS,), (NEG,), ref=lambda x: x * 2 + 1)
def to_tensor_of_input(x):
    t = paddle.to_tensor(x)
    t = t * 2
    return t + 1


# ---- NumPy arrays as arguments --------------------------------------------------------------

@case((NP(POS),), (NP(NEG),), ref=lambda x: x * 2 if x.mean() > 0 else x - 1)
def numpy_argument_in_condition(x):
    if paddle.mean(x) > 0:
        return x * 2
    return x - 1


@case((NP(POS), POS), (NP(NEG), POS), ref=lambda a, b: a * b if a.sum() > b.sum() else b - a)
def numpy_and_tensor_arguments(a, b):
    if paddle.sum(a) > paddle.sum(b):
        return paddle.multiply(a, b)
    return b - a


# ---- the usual idioms: shapes, loops, containers, closures, Layers ---------------------------

@case((POS,), (f32(1, 2, 3, 4, 5),), ref=lambda x: np.cumsum(x)[-1] + 0 * x[:1], programs=2)
def loop_over_shape(x):
    acc = paddle.zeros([1])
    for i in range(x.shape[0]):
        acc = acc + x[i]
    return acc


@case((POS,), (NEG,), ref=lambda x: np.array([r * (i + 1) for i, r in enumerate(x)]).sum())
def enumerate_rows(x):
    total = paddle.zeros([])
    for i, v in enumerate(x):
        total = total + v * (i + 1)
    return total


@case((POS,), (NEG,), ref=lambda x: [x * 2, x.sum()] if x.sum() > 0 else [x, x.sum() * 0])
def returns_a_list(x):
    s = paddle.sum(x)
    if s > 0:
        out = [x * 2, s]
    else:
        out = [x, s * 0]
    return out


@case((POS,), (NEG,), ref=lambda x: {"a": x + 1, "b": x.max()}["a"] * x.max())
def dict_of_tensors(x):
    d = {"a": x + 1}
    d["b"] = paddle.max(x)
    return d["a"] * d["b"]


@case((POS,), (NEG,), ref=lambda x: np.tanh(x) * 2 if x.sum() > 0 else np.tanh(x))
def closure_helper(x):
    scale = 2.0

    def act(t):
        return paddle.tanh(t) * scale

    if paddle.sum(x) > 0:
        return act(x)
    return paddle.tanh(x)


@case((POS,), (NEG,), ref=lambda x: np.where(x > 0, x, 0.1 * x))
def where_instead_of_branch(x):
    return paddle.where(x > 0, x, x * 0.1)


@case((POS,), (NEG,), ref=lambda x: _appended_ref(x))
def append_in_tensor_loop(x):
    outs = []
    i = paddle.zeros([], "int64")
    while i < 3:
        outs.append(x * paddle.cast(i, "float32"))
        i = i + 1
    return paddle.stack(outs)


def _appended_ref(x):
    return np.stack([x * i for i in range(3)])


@case((POS,), (NEG,), ref=lambda x: x + 1 if np.any(x > 0) else x - 1)
def bool_of_any(x):
    if bool(paddle.any(x > 0)):
        return x + 1
    return x - 1


@case((POS, 2), (NEG, 0), ref=lambda x, k: x * k if k > 0 else -x, programs=2)
def python_int_argument(x, k):
    if k > 0:
        return x * k
    return -x


@case((POS,), (NEG,), ref=lambda x: x[x > 0].sum() + 0 * x.mean())
def early_exit_in_loop(x):
    total = paddle.zeros([])
    for i in range(3):
        if x[i].numpy() <= 0:
            break
        total = total + x[i]
    return total


class _Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.layers = paddle.nn.LayerList([paddle.nn.Linear(3, 3) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            h = layer(x)
            if paddle.mean(h).numpy() > 0:
                x = h * self.scale
            else:
                x = h
        return x


_BLOCK = _Block()


def _block_ref(x):
    for layer in _BLOCK.layers:
        h = x @ layer.weight.numpy() + layer.bias.numpy()
        x = h * 2.0 if h.mean() > 0 else h
    return x


@case((POS.reshape(1, 3),), (NEG.reshape(1, 3),), ref=_block_ref)
def layer_with_layerlist(x):
    return _BLOCK(x)


# ---- full_graph=False on what cannot be one program ----------------------------------------

@case((POS,), (NEG,), ref=lambda x: x * [1.0, 2.0, 3.0][int(x.sum()) % 3])
def python_index_from_tensor(x):  # (a table of Python numbers a computed index picks from)
    table = [1.0, 2.0, 3.0]
    return x * table[int(x.sum().item()) % 3]


@case((POS,), (NEG,), ref=lambda x: x * math.sqrt(abs(float(x.sum()))))
def math_on_a_tensor_value(x):  # (`math` of a computed number converts: a float64 value)
    return x * math.sqrt(abs(x.sum().item()))


@case((POS,), (NEG,), ref=lambda x: x + np.asarray(x).mean())
def numpy_function_on_a_tensor(x):  # (NumPy of a tensor converts: eager's `__array__`)
    return x + float(np.asarray(x).mean())


@case((POS,), (NEG,), ref=lambda x: x * 2 if x.mean() > 0 else x - 1, full_graph=False)
def convertible_with_full_graph_false(x):
    if paddle.mean(x).numpy() > 0:
        return x * 2
    return x - 1


# ---- the test ------------------------------------------------------------------------------

def _args(inputs):
    return [a.a if isinstance(a, NP) else paddle.to_tensor(a) if isinstance(a, np.ndarray)
            else a for a in inputs]


def _arrays(x):
    if isinstance(x, (list, tuple)):
        return [_arrays(v) for v in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _close(got, want):
    got, want = _arrays(got), want
    if isinstance(got, list):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _close(g, w)
        return
    np.testing.assert_allclose(got, np.asarray(want, dtype=got.dtype), rtol=1e-5, atol=1e-6)


def test_there_are_thirty_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("c", CASES, ids=[c.fn.__name__ for c in CASES])
def test_eager_and_static_agree_with_numpy(c):
    sf = to_static(c.fn, full_graph=c.full_graph)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for inputs in c.inputs:
            plain = [a.a if isinstance(a, NP) else a for a in inputs]
            want = c.ref(*plain)
            _close(c.fn(*_args(inputs)), want)     # eager
            _close(sf(*_args(inputs)), want)       # converted
    assert len(sf.program_cache) == c.programs
    fallbacks = [w for w in caught if "cannot be converted" in str(w.message)]
    if c.programs == 0:  # ran eagerly: one warning naming the user's line
        assert len(fallbacks) == 1, [str(w.message) for w in caught]
        assert f"{__file__}:" in str(fallbacks[0].message)
        assert "full_graph=True" in str(fallbacks[0].message)
    else:
        assert not fallbacks and not caught, [str(w.message) for w in caught]


@pytest.mark.parametrize("c", [c for c in CASES if c.programs == 0],
                         ids=lambda c: c.fn.__name__)
def test_full_graph_true_raises_naming_the_line(c):
    sf = to_static(c.fn)
    with pytest.raises((TypeError, d2s.ConversionError),
                       match="a tensor computed by the converted code|static Variable .x.|"
                             "a value computed by the converted program") as info:
        sf(*_args(c.inputs[0]))
    text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
    assert __file__ in text and "docs/errors.md" in str(info.value)


def test_numpy_is_noted_once_per_line_in_the_report():
    sf = to_static(numpy_in_condition)
    text = str(sf.report(paddle.to_tensor(POS)))
    assert text.count(".numpy(): kept in the graph") == 1
    assert "^ if: graph op (cond)" in text


def test_fallback_is_remembered_across_instances_and_inputs():
    class Model(paddle.nn.Layer):
        @to_static(full_graph=False)
        def forward(self, x):  # (a table of dicts: no program picks among them)
            return x * [{"s": 1.0}, {"s": 2.0}][int(x.sum().item()) % 2]["s"]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for model in (Model(), Model()):
            for x in (POS, NEG, f32(1.0)):
                _close(model(paddle.to_tensor(x)), x * [1.0, 2.0][int(x.sum()) % 2])
    assert sum("cannot be converted" in str(w.message) for w in caught) == 1


def test_fallback_raises_the_users_own_error_when_eager_fails_too():
    @to_static(full_graph=False)
    def broken(x):
        table = {"a": 1.0}
        return x * table[str(int(x.sum().item()))]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyError, match="'6'"):
            broken(paddle.to_tensor(POS))
    assert not [w for w in caught if "cannot be converted" in str(w.message)]
