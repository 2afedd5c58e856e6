"""Sets a converted call makes and returns or stores (on `self`, inside a stored dict) are new
objects on every call, as each eager call makes them: the program returned (or stored) the
trace's set every time, so a caller that added to it changed what later calls gave. One set
both stored and returned stays one object (tests/d2s/observe_state/
test_set_algebra_unseen_operands.py)."""
import numpy as np

import d2s
import runtime as rt


class Tagger(rt.nn.Layer):
    def forward(self, x):
        self.tags = {"seen", "train"}
        self.record = {"ids": {7}, "mask": [True, False]}
        if x.mean() > 0:                   # a tensor if: both paths in one program
            y = x * 2.0
        else:
            y = x - 1.0
        return y, {3, 4}, {"a": {1}}


def _use_and_change(model, xv):
    y, s, d = model(rt.to_tensor(np.array(xv, "float32")))
    s.add(5)
    d["a"].add(2)
    model.tags.add("changed")
    model.record["ids"].add(8)
    return y.numpy().tolist()


def _observed(model, xv):
    y, s, d = model(rt.to_tensor(np.array(xv, "float32")))
    return (y.numpy().tolist(), s, d, set(model.tags),
            {k: set(v) if isinstance(v, set) else v for k, v in model.record.items()},
            type(model.tags), type(s))


def test_returned_and_stored_python_values_are_new_each_call():
    eager, static = Tagger(), d2s.to_static(Tagger())
    for xv in ([1.0, 2.0], [-3.0, 1.0], [0.5, 0.25]):
        assert _use_and_change(static, xv) == _use_and_change(eager, xv)
        got, want = _observed(static, xv), _observed(eager, xv)
        assert got == want
        assert got[1] == {3, 4} and got[2] == {"a": {1}} and got[3] == {"seen", "train"}
        assert got[4]["ids"] == {7} and got[5] is got[6] is set
