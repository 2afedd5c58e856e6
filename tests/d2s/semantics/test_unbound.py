"""Item 12: a name bound in one branch of a tensor `if` only. Eager code raises
`UnboundLocalError` only on a path that reads it unbound; static code does the same when the
program runs (same class, same message), and runs on every input where eager code runs (it
was a conversion error for every input). Never a filler value: every read of the
placeholder is checked."""
from __future__ import annotations

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.operators import UndefinedNameError


def returned(x):
    if rt.mean(x) > 0:
        y = x + 1
    return y


def read_under_another_condition(x):
    if x.sum() > 0:
        y = x * 2
    if x.max() > 1:
        return y + 1
    return x


def reassigned_under_a_condition(x):
    if x.sum() > 0:
        scale = x.max()
    if x.min() < -5:
        scale = scale * 0.5  # reads it: unbound when the first condition was false
    return x * 3 if x.max() > 100 else x + 0


class Gate(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:
            gated = rt.nn.functional.relu(h)
        return gated.sum()  # unbound when h.sum() <= 0


def _outcome(fn, x):
    try:
        out = fn(x)
    except Exception as e:  # noqa: BLE001  (the outcome compared is the exception)
        return type(e), str(e).splitlines()[0]
    return "value", np.asarray(out.numpy()).tolist()


@pytest.mark.parametrize("fn,rows", [
    (returned, [[1.0, 2.0], [-1.0, -2.0]]),
    (read_under_another_condition, [[1.0, 2.0], [-1.0, -2.0], [-3.0, 2.0], [0.5, 0.4]]),
    (reassigned_under_a_condition, [[1.0, 2.0], [-1.0, -2.0], [-9.0, 3.0], [-9.0, -3.0]]),
])
def test_unbound_only_where_eager_reads_it(fn, rows):
    static = d2s.to_static(fn)
    outcomes = set()
    for row in rows:
        x = rt.to_tensor(np.asarray(row, "float32"))
        want, got = _outcome(fn, x), _outcome(static, x)
        if want[0] is UnboundLocalError:
            assert got[0] is UnboundLocalError and got[1] == want[1]
        else:
            assert got == want
        outcomes.add(want[0])
    assert UnboundLocalError in outcomes and "value" in outcomes  # both paths exercised
    assert len(static.program_cache) == 1


def test_layer_with_a_one_branch_name_trains_and_checks():
    rt.seed(0)
    net = Gate()
    static = d2s.to_static(Gate())
    static.set_state_dict(net.state_dict())
    outcomes = []
    for x in (rt.ones([1, 2]), -rt.ones([1, 2])):
        want, got = _outcome(net, x), _outcome(static, x)
        assert got == want
        outcomes.append(want[0])
        if want[0] == "value":
            static(x).backward()
            assert static.fc.weight.grad is not None
    assert sorted(map(str, outcomes)) == sorted(map(str, ["value", UnboundLocalError]))


def test_non_tensor_value_in_one_branch_is_still_a_conversion_error():
    def f(x):
        if x.sum() > 0:
            label = "positive"
        return x, label
    with pytest.raises(UndefinedNameError, match="'label' is bound in only one branch"):
        d2s.to_static(f)(rt.ones([2]))


def test_saved_model_keeps_the_check(tmp_path):
    import os
    static = d2s.to_static(read_under_another_condition)
    static(rt.ones([2]))
    prefix = os.path.join(str(tmp_path), "unbound")
    d2s.save(static, prefix, input_spec=[d2s.InputSpec([None])])
    loaded = d2s.load(prefix)
    np.testing.assert_allclose(loaded(rt.to_tensor([1.0, 2.0])).numpy(), [3.0, 5.0])
    np.testing.assert_allclose(loaded(rt.to_tensor([-1.0, 0.5])).numpy(), [-1.0, 0.5])
    with pytest.raises(UnboundLocalError, match="local variable 'y'") as info:
        loaded(rt.to_tensor([-3.0, 2.0]))
    assert "test_unbound.py" in "\n".join([str(info.value)] + getattr(info.value,
                                                                      "__notes__", []))
