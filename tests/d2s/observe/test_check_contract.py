"""`d2s check` compares the whole contract ("What is the same as eager" in docs/d2s.md): with
a deliberately broken converted call (the fix of each class undone by patching `running.Entry`)
it reports the Python type, dtype, `stop_gradient` and gradient-presence disagreement; with
the real one it agrees."""
import numpy as np
import pytest

import runtime as rt
from d2s import check as checker
from d2s import running


def summary(x):
    return x * 2, x.sum().item()


def ids_of(x):
    ids = rt.to_tensor([0, 1, 2], dtype="int64", stop_gradient=False)
    return ids, ids + (x > 0).astype("int64")  # the sum has no gradient path: True


class TwoHeads(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.head_a = rt.nn.Linear(3, 1)
        self.head_b = rt.nn.Linear(3, 1)

    def forward(self, x):
        if x.mean() > 0:
            return self.head_a(x)
        return self.head_b(x)


def _check(fn, spec):
    lines: list = []
    sf = checker.static_function_for(fn, None, [checker.parse_spec(spec)])
    found = checker.check(sf, [checker.parse_spec(spec)], out=lines.append)
    return found, "\n".join(lines)


def _after_init(monkeypatch, change):
    init = running.Entry.__init__

    def broken(self, *args, **kwargs):
        init(self, *args, **kwargs)
        change(self)

    monkeypatch.setattr(running.Entry, "__init__", broken)


CASES = {
    "type": (summary, "float32[3]", lambda e: setattr(e, "python_out", []),
             "output 1: eager gave a float"),
    "stop_gradient": (ids_of, "float32[3]", lambda e: setattr(e, "flagged_out", []),
                      ("eager gave a tensor with stop_gradient=False, static one with "
                       "stop_gradient=True")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_reports_a_broken_contract(monkeypatch, case):
    fn, spec, change, message = CASES[case]
    assert _check(fn, spec)[0] is None  # the real converted call agrees
    _after_init(monkeypatch, change)
    found, text = _check(fn, spec)
    assert found is not None and not found.eager_failed
    assert message in found.message and "DISAGREE" in text


def test_check_reports_a_dtype_difference(monkeypatch):
    assert _check(summary, "float32[3]")[0] is None
    finish = running.Entry.finish

    def wider(self, *args, **kwargs):
        out = finish(self, *args, **kwargs)
        return (out[0].astype("float64"), out[1])

    monkeypatch.setattr(running.Entry, "finish", wider)
    found, _ = _check(summary, "float32[3]")
    assert found is not None and "output 0: eager gave float32[3], static gave float64[3]" \
        in found.message


def test_check_reports_gradient_presence(monkeypatch):
    rt.seed(0)
    assert _check(TwoHeads(), "float32[2,3]")[0] is None
    monkeypatch.setattr(running, "gradient_sites", lambda program, names, outs: {})
    found, _ = _check(TwoHeads(), "float32[2,3]")
    assert found is not None
    assert "no gradient eagerly, one from the converted call" in found.message
    assert "parameter linear_" in found.message


def test_check_reports_gradient_values():
    x = rt.to_tensor(np.ones((2, 3), "float32"))
    layer = TwoHeads()
    layer(x).sum().backward()
    eager = {p.name: None if p.grad is None else p.grad.numpy() for p in layer.parameters()}
    static = {k: None if v is None else v * 2 for k, v in eager.items()}
    why = checker._gradient_difference(eager, static)
    assert why is not None and why.startswith("the gradient of parameter")
