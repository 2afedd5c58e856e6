"""Logs that say why: at verbosity 1 each retrace names the argument (or guard) and what
changed; at verbosity 2 each pass says how long it took."""
import logging
import re

import numpy as np
import pytest

import d2s
import runtime as rt
from d2s import converters, logging_utils, transpile


@pytest.fixture(autouse=True)
def _verbosity_reset(monkeypatch):
    monkeypatch.delenv(logging_utils.VERBOSITY_ENV, raising=False)
    logging_utils._SET.update(code=None, verbosity=None)
    yield
    logging_utils._SET.update(code=None, verbosity=None)


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "d2s"]


class Gate(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.mode = "double"

    def forward(self, x):
        if self.mode == "double":
            return x * 2
        return x + 1


def test_each_retrace_names_what_changed_at_verbosity_1(caplog):
    @d2s.to_static
    def scale(x, k):
        return x * k

    d2s.set_verbosity(1)
    with caplog.at_level(logging.INFO, logger="d2s"):
        a = scale(rt.ones([2]), 3)
        b = scale(rt.ones([3]), 3)
        c = scale(rt.ones([3]), 4)
        scale(rt.ones([3]), 4)  # cached: no retrace
    np.testing.assert_array_equal(a.numpy(), [3, 3])
    np.testing.assert_array_equal(b.numpy(), [3, 3, 3])
    np.testing.assert_array_equal(c.numpy(), [4, 4, 4])
    retraces = [m.split(".<locals>.")[1] for m in _messages(caplog) if m.startswith("retraced")]
    assert retraces == ["scale (trace 2): argument 'x': tensor [2] float32 -> tensor [3] float32",
                        "scale (trace 3): argument 'k': int 3 -> int 4"]


def test_a_retrace_for_a_changed_attribute_names_the_guard(caplog):
    net = d2s.to_static(Gate())
    d2s.set_verbosity(1)
    x = rt.ones([2])
    with caplog.at_level(logging.INFO, logger="d2s"):
        np.testing.assert_array_equal(net(x).numpy(), [2, 2])
        net.mode = "add"
        np.testing.assert_array_equal(net(x).numpy(), [2, 2])
    retraces = [m for m in _messages(caplog) if m.startswith("retraced ")]
    assert retraces == ["retraced Gate.forward (trace 2): self.mode changed"]


def test_each_pass_logs_its_time_at_verbosity_2(caplog):
    def fresh(x):
        return x * 2 if rt.mean(x) > 0 else x

    d2s.set_verbosity(2)
    transpile._CACHE.pop(fresh, None)
    with caplog.at_level(logging.INFO, logger="d2s"):
        d2s.to_static(fresh)(rt.ones([3]))
    passes = [m for m in _messages(caplog) if m.startswith("pass ")]
    assert len(passes) == len(converters.PASSES)
    for i, (name, _) in enumerate(converters.PASSES, 1):
        m = re.fullmatch(rf"pass {i}/{len(converters.PASSES)} \({name}\) done on fresh "
                         r"\(.*:\d+\) in (\d+\.\d{3}) ms", passes[i - 1])
        assert m is not None, passes[i - 1]
        assert 0 <= float(m.group(1)) < 10_000
    d2s.set_verbosity(1)
    caplog.clear()
    transpile._CACHE.pop(fresh, None)
    with caplog.at_level(logging.INFO, logger="d2s"):
        d2s.to_static(fresh)(rt.ones([3]))
    assert not any(m.startswith("pass ") for m in _messages(caplog))
