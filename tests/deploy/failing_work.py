"""Functions whose first call fails on purpose, for the test of what a failed trace leaves."""
import runtime as rt


class LazyHead(rt.nn.Layer):
    """Sets itself up on the first call, then raises (a set-up step that wants one more
    call, as some lazy Layers do); the second call computes."""

    def __init__(self):
        super().__init__()
        self.ready = False
        self.calls = 0
        self.fc = rt.nn.Linear(3, 2)

    def forward(self, x):
        self.calls += 1
        if not self.ready:
            self.ready = True
            raise RuntimeError("set up: call again")
        return self.fc(x) * 2.0


class KeepsTensor(rt.nn.Layer):
    """Stores a computed tensor on itself, then raises: the stored value is a graph value
    while tracing and must not stay."""

    def __init__(self):
        super().__init__()
        self.last = None
        self.note = "before"

    def forward(self, x):
        self.note = "after"
        self.last = x * 3.0
        raise KeyError("no result")


def needs_positive(x, log: list):
    log.append("entered")
    if rt.mean(x) > 0:  # a tensor condition: both branches are traced
        return x * 2.0
    raise ValueError("negative input")
