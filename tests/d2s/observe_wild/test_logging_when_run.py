"""Logging calls in converted code (`logger.info(...)`, `logging.warning(...)`,
`logging.log(level, ...)`) log when the program runs the line, as eager code does: only on
the branch a tensor `if` takes, with that call's argument values (a tensor, `loss.item()` as
eager's Python float, a shape as an int), at the logger's level in force then, with eager's
file, line and function name in the record. The call ran once while tracing instead: a
warning logged on inputs that do not take the branch, later calls logged nothing (silent:
training logs missed every later step)."""
import io
import logging

import numpy as np

import d2s
import runtime as rt

log = logging.getLogger("tests.d2s.observe_wild.step")


def step(x, it):
    loss = (x * x).mean()
    if loss > 1:                                       # a tensor if
        logging.getLogger().warning("large loss %.3f at step %d", loss.item(), it)
        x = x / 2
    log.info("x=%s n=%d", x, x.shape[0])
    log.debug("only at DEBUG %s", x.sum())
    log.log(logging.ERROR, "argmax %s", int(x.argmax()))
    return x


def _logged(fn):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(
        "%(levelname)s %(name)s %(filename)s:%(lineno)d %(funcName)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    old = log.level
    try:
        for level, v in ((logging.INFO, [0.5, 0.1]), (logging.INFO, [3.0, 1.0]),
                         (logging.DEBUG, [0.1, 0.2])):  # (the level changed between calls)
            log.setLevel(level)
            fn(rt.to_tensor(np.float32(v)), 7)
    finally:
        root.removeHandler(handler)
        log.setLevel(old)
    return stream.getvalue()


def test_logging_calls_log_when_the_program_runs_the_line():
    want = _logged(step)
    static = d2s.to_static(step)
    assert _logged(static) == want
    assert want.count("large loss 5.000 at step 7") == 1
    assert "test_logging_when_run.py:24 step" in want and "only at DEBUG Tensor(" in want
    assert len(static.program_cache) == 1
