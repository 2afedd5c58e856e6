"""`raise NewError(...) from err` where the run decides whether it raises (under a tensor
`if`, in a graph loop, in a `try` body the program runs): the exception the call raises has
eager's `__cause__` (a new exception of `err`'s class and message, each call its own) and
`__suppress_context__`; `raise X from None` has no cause; raised in an `except` clause, its
`__context__` is (a new exception like) the one handled, shown as eager shows it ("During
handling of the above exception"), also where the trace raises it. Before, the program's
raise op kept only the class and message (`__cause__` None: the traceback lost "The above
exception was the direct cause"), and a raise in an `except` clause had its context hidden.
Eager vs static over inputs that raise and inputs that do not, through one program."""
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
    message, cause and context (class, args, whether one is the other) and whether the
    context is suppressed."""
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001
        cause, context = e.__cause__, e.__context__
        return ("raised", type(e), str(e).split("\n")[0], type(cause),
                None if cause is None else cause.args, type(context),
                None if context is None else context.args, context is cause,
                e.__suppress_context__)
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
    rt.seed(0)  # (which inputs raise depends on the weights: not on the tests run before)
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


def _in_a_handler(kind, by_a_tensor):
    def handled(x, table):
        try:
            w = table["scale"]
        except KeyError as err:
            if (x.sum() > 0) if by_a_tensor else table.get("strict", True):
                if kind == "plain":
                    raise ValueError("no scale")
                if kind == "from None":
                    raise ValueError("no scale") from None
                raise ValueError("no scale") from err
            w = 0.5
        return x * w
    return handled


@pytest.mark.parametrize("by_a_tensor", [True, False])
@pytest.mark.parametrize("kind", ["plain", "from None", "from err"])
def test_raised_in_an_except_clause_keeps_eagers_cause_and_context(kind, by_a_tensor):
    fn = _in_a_handler(kind, by_a_tensor)
    cases = [lambda: (t(1.0, 2.0), {}), lambda: (t(-1.0, -2.0), {"strict": False}),
             lambda: (t(1.0, 2.0), {"scale": 3.0})]
    _compare(fn, d2s.to_static(fn), cases)



def _clause_with_a_name(kind):
    def handled(x):
        try:
            if x.sum() > 0:  # (the clause is a branch of the program, its `raise` too)
                raise KeyError("no scale")
            w = 2.0
        except KeyError as err:  # noqa: F841
            if x.max() > 1.0:
                if kind == "plain":
                    raise ValueError("no scale")
                if kind == "from None":
                    raise ValueError("no scale") from None
                raise
            w = 0.5
        return x * w
    return handled


def _clause_without_a_name(kind):
    def handled(x):
        try:
            if x.sum() > 0:
                raise KeyError("no scale")
            w = 2.0
        except KeyError:
            if x.max() > 1.0:
                if kind == "plain":
                    raise ValueError("no scale")
                if kind == "from None":
                    raise ValueError("no scale") from None
                raise
            w = 0.5
        return x * w
    return handled


@pytest.mark.parametrize("make", [_clause_with_a_name, _clause_without_a_name])
@pytest.mark.parametrize("kind", ["plain", "from None", "bare"])
def test_raised_in_an_except_clause_the_program_runs(kind, make):
    """Eager's `__context__` is the exception the clause handles (a bare `raise`: none, it
    is that exception again), with `as name` or without."""
    fn = make(kind)
    cases = [lambda: (t(1.0, 2.0),), lambda: (t(0.5, 0.2),), lambda: (t(-1.0, -2.0),)]
    _compare(fn, d2s.to_static(fn), cases)
