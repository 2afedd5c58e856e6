"""`raise NewError(...) from err` where the run decides whether it raises (under a tensor
`if`, in a graph loop, in a `try` body the program runs): the exception the call raises has
eager's `__cause__` (a new exception of `err`'s class and message, each call its own) and
`__suppress_context__`; `raise X from None` has no cause. Before, the program's raise op
kept only the class and message (`__cause__` None: the traceback lost "The above exception
was the direct cause"). Eager vs static over inputs that raise and inputs that do not, through
one program."""
import numpy as np
import pytest

import d2s
import runtime as rt


class ConfigError(Exception):
    pass


def lookup(x, table):
    try:
        w = table["scale"]
    except KeyError as err:
        if x.mean() > 0:  # (the run decides whether the cause is raised with)
            raise ConfigError("positive inputs need a 'scale'") from err
        w = -1.0
    return x * w


def grow(x, limit):
    steps = 0
    while x.sum() < limit:  # (a graph loop)
        x = x * 2.0
        steps += 1
        if x.max() > 40.0:
            raise OverflowError("x grew past 40") from ValueError(f"limit {limit}")
    return x


def quiet(x):
    if x.min() < 0:
        raise ValueError("negative input") from None
    return x.sqrt()


class Head(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)

    def forward(self, x):
        h = self.fc(x)
        try:
            if h.sum() > 100.0:
                raise ArithmeticError("sum too large")
        except ArithmeticError as err:
            raise RuntimeError("head diverged") from err
        return h


def _outcome(fn, *args):
    """What the user observes of a call: the result's values, or the exception's class,
    message, cause (class, args, its traceback's presence aside) and suppressed context."""
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001
        cause = e.__cause__
        return ("raised", type(e), str(e).split("\n")[0], type(cause),
                None if cause is None else cause.args, e.__suppress_context__)
    return ("ok", np.asarray(out.numpy()).round(5).tolist())


def _compare(fn, static, cases):
    outcomes = []
    for args in cases:
        want, got = _outcome(fn, *args()), _outcome(static, *args())
        assert got == want, (args, got, want)
        outcomes.append(want[0])
    assert {"ok", "raised"} <= set(outcomes)  # (both paths of the one program)


def t(*v):
    return rt.to_tensor(np.array(v, "float32"))


def test_a_caught_error_as_the_cause_under_a_tensor_if():
    cases = [lambda: (t(1.0, 2.0), {}), lambda: (t(-1.0, -2.0), {}),
             lambda: (t(3.0, 1.0), {}), lambda: (t(1.0, 2.0), {"scale": 2.0})]
    _compare(lookup, d2s.to_static(lookup), cases)


def test_each_call_gets_a_cause_of_its_own():
    static = d2s.to_static(lookup)
    errors = [pytest.raises(ConfigError, static, t(1.0, 2.0), {}).value for _ in range(2)]
    assert type(errors[0].__cause__) is KeyError and errors[0].__cause__.args == ("scale",)
    assert errors[0].__cause__ is not errors[1].__cause__


def test_a_cause_made_at_the_raise_in_a_graph_loop():
    cases = [lambda: (t(1.0, 2.0), 20.0), lambda: (t(30.0, 1.0), 100.0),
             lambda: (t(0.5, 0.5), 5.0), lambda: (t(9.0, 9.0), 50.0)]
    _compare(grow, d2s.to_static(grow), cases)


def test_from_none_has_no_cause():
    cases = [lambda: (t(1.0, 4.0),), lambda: (t(-1.0, 4.0),), lambda: (t(9.0, 0.0),)]
    _compare(quiet, d2s.to_static(quiet), cases)


def test_a_layers_error_caught_and_raised_again_from_it():
    eager, static_layer = Head(), Head()
    static_layer.set_state_dict(eager.state_dict())
    static = d2s.to_static(static_layer)
    cases = [lambda: (t(1.0, 2.0),), lambda: (t(500.0, 500.0),), lambda: (t(-500.0, 0.0),),
             lambda: (t(-500.0, -500.0),)]
    outcomes = []
    for args in cases:
        want, got = _outcome(eager, *args()), _outcome(static, *args())
        assert got == want, (args, got, want)
        outcomes.append(want[0])
    assert set(outcomes) == {"ok", "raised"}
