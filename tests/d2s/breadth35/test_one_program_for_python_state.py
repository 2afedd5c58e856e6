"""Python state a converted call changes but does not read (issue 35): a flag set on an object
passed in (`state.warm = True`), a counter (`self.calls += 1`), a list it only appends to
(`self.history.append(n)`, `log.append(n)` of an argument, a global log) is replayed after
each call and guards no program, so one program serves every call (each call traced again
before); state the trace reads still guards its program (a second program where it differs)."""
import numpy as np

import d2s
import runtime as rt

XS = [np.random.RandomState(i).randn(2, 3).astype("float32") for i in range(5)]
EVENTS = []


class Warmup:
    def __init__(self):
        self.warm = False
        self.seen = 0


def scaled(state, x):
    state.warm = True           # written, never read
    state.seen += x.shape[0]    # a counter: program state
    EVENTS.append("scaled")     # a global list only appended to
    return x * 2.0


def test_a_flag_a_counter_and_a_global_log_share_one_program():
    static = d2s.to_static(scaled)
    eager_state, static_state = Warmup(), Warmup()
    EVENTS.clear()
    for i, x in enumerate(XS):
        want = x * 2.0
        np.testing.assert_allclose(scaled(eager_state, rt.to_tensor(x)).numpy(), want)
        np.testing.assert_allclose(static(static_state, rt.to_tensor(x)).numpy(), want)
        assert static_state.warm is eager_state.warm is True
        assert static_state.seen == eager_state.seen == 2 * (i + 1)
        assert EVENTS == ["scaled"] * (2 * (i + 1))
    assert len(static.program_cache) == 1 and static.program_cache.traces == 1


class Streaming(rt.nn.Layer):
    """Counts its calls and keeps a history of batch sizes, as a streaming model does."""

    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(3, 3)
        self.calls = 0
        self.history = []

    def forward(self, x):
        self.calls += 1
        self.history.append(x.shape[0])
        y = self.fc(x)
        if y.mean() > 0:        # a tensor condition in the same program
            return y * 2.0
        return -y


def test_a_layer_counting_calls_and_logging_sizes_keeps_one_program():
    eager, static = Streaming(), Streaming()
    static.set_state_dict(eager.state_dict())
    static = d2s.to_static(static)
    w, b = eager.fc.weight.numpy(), eager.fc.bias.numpy()
    signs = set()
    for i, x in enumerate(XS + [-x for x in XS]):
        y = x @ w + b
        want = y * 2.0 if y.mean() > 0 else -y
        signs.add(bool(y.mean() > 0))
        for layer in (eager, static):
            np.testing.assert_allclose(layer(rt.to_tensor(x)).numpy(), want, rtol=1e-5)
            assert layer.calls == i + 1 and layer.history == [2] * (i + 1)
    assert signs == {True, False}  # both branches of the one program ran
    assert len(static.forward.program_cache) == 1


def log_and_scale(x, log):
    log.append(x.shape[0])
    return x * 3.0


def count_logged(x, log):
    log.append(1)
    return x * len(log)  # reads the list: its items guard the program


def test_an_argument_list_only_appended_to_is_not_a_key():
    static = d2s.to_static(log_and_scale)
    log, ref = [], []
    for x in XS:
        np.testing.assert_allclose(static(rt.to_tensor(x), log).numpy(), x * 3.0)
        log_and_scale(rt.to_tensor(x), ref)
        assert log == ref
    assert len(log) == len(XS) and static.program_cache.traces == 1


def test_a_list_the_function_reads_still_guards_its_program():
    static = d2s.to_static(count_logged)
    log, ref = [], []
    for x in XS[:3]:
        got = static(rt.to_tensor(x), log).numpy()
        np.testing.assert_allclose(got, count_logged(rt.to_tensor(x), ref).numpy())
        assert log == ref
    assert static.program_cache.traces == 3  # len(log) differs on every call
