"""A function, a lambda or a sub-Layer chosen by a tensor `if` and called after it (Paddle's
test_lambda.py / test_ifelse.py idioms: `act = F.relu if x.sum() > 0 else rt.tanh`,
`head = self.a` in one branch and `self.b` in the other, an `elif` chain of three): the `if`
failed inside `cond` with an internal "unsupported dtype dtype('O')". The `if` gives out the
callable's index; a call of it from the converted code follows the run (each candidate
converted, a tensor `if` around them), so one program gives eager's values and gradients,
and the Layer not chosen gets no gradient, as in eager. A call from code that is not
converted (`map(fn, xs)`) is refused at the user's line."""
import numpy as np
import pytest

import d2s
import runtime as rt
import runtime.nn.functional as F
from d2s.errors import ConversionError
from tests.d2s.observe_wild.helpers import assert_same_leaves


def activation_by_sign(x):
    act = F.relu if x.sum() > 0 else rt.tanh
    return act(x), act(x * 2.0)


def reducer_by_lambda(x):
    if x.mean() > 0:
        pick = lambda v: (v.max(), v * 2.0)
    else:
        pick = lambda v: (v.min(), v * 3.0)
    top, scaled = pick(x)
    return top + scaled.sum()


def three_way(x):
    if x.sum() > 1:
        g = rt.exp
    elif x.sum() > -1:
        g = rt.abs
    else:
        g = rt.sin
    return g(x)


def mapped(x):
    fn = rt.exp if x.sum() > 0 else rt.abs
    return list(map(fn, [x]))


class TwoHeads(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = rt.nn.Linear(2, 2)
        self.b = rt.nn.Linear(2, 2)

    def forward(self, x):
        head = self.a if x.sum() > 0 else self.b
        return head(x).sum()


INPUTS = [np.array(v, "float32") for v in ([1.0, -2.0], [3.0, 1.0], [-3.0, -1.0])]


def _reference_three_way(x):
    s = x.sum()
    return np.exp(x) if s > 1 else np.abs(x) if s > -1 else np.sin(x)


@pytest.mark.parametrize("fn", [activation_by_sign, reducer_by_lambda, three_way])
def test_chosen_functions_follow_the_run(fn):
    static = d2s.to_static(fn)
    for x in INPUTS:
        want = fn(rt.to_tensor(x))
        got = static(rt.to_tensor(x))
        assert_same_leaves(got, want)
        if fn is three_way:
            np.testing.assert_allclose(got.numpy(), _reference_three_way(x), rtol=1e-6)
        if fn is activation_by_sign:
            ref = np.maximum(x, 0) if x.sum() > 0 else np.tanh(x)
            np.testing.assert_allclose(got[0].numpy(), ref, rtol=1e-6)
    assert len(static.program_cache) == 1


def test_chosen_layer_gets_the_gradient_eager_gives_it():
    rt.seed(3)
    net = TwoHeads()
    static = d2s.to_static(TwoHeads.forward.__get__(net))
    for x in INPUTS[:2]:
        net.clear_gradients()
        want = TwoHeads.forward(net, rt.to_tensor(x))
        want.backward()
        grads = {n: p.grad for n, p in net.named_parameters()}
        net.clear_gradients()
        got = static(rt.to_tensor(x))
        got.backward()
        assert_same_leaves(got, want)
        for n, p in net.named_parameters():
            assert (p.grad is None) == (grads[n] is None), n
            if p.grad is not None:
                np.testing.assert_allclose(p.grad.numpy(), grads[n].numpy(), rtol=1e-6)
    assert len(static.program_cache) == 1


def test_a_call_from_code_not_converted_is_refused_at_the_line():
    with pytest.raises(ConversionError, match=r"chosen by an `if` whose condition is a tensor"
                       r".*fn = rt.exp if x.sum\(\) > 0 else rt.abs.*one of exp, abs"):
        d2s.to_static(mapped)(rt.to_tensor(INPUTS[0]))


class _Box:
    pass


def test_returning_or_storing_a_chosen_function_is_refused_at_the_line():
    box = _Box()

    def returned(x):
        act = F.relu if x.sum() > 0 else rt.tanh
        return act

    def stored(x):
        box.act = F.relu if x.sum() > 0 else rt.tanh
        return box.act(x)

    with pytest.raises(ConversionError, match=r"act = F.relu if .* is returned by the "
                       r"converted function"):
        d2s.to_static(returned)(rt.to_tensor(INPUTS[0]))
    with pytest.raises(ConversionError, match=r"is stored in box.act, which the caller keeps"):
        d2s.to_static(stored)(rt.to_tensor(INPUTS[0]))
    assert not hasattr(box, "act")
