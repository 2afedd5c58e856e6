"""`out.stop_gradient` read by converted code after a tensor `if` detached `out` on one path
(a teacher's features detached when confident, a target network's output): eager code reads
True on the runs that took the detach and False on the others; the converted call read the
trace's flag (False) on every run (silent: `if out.stop_gradient:` took the wrong branch and a
returned flag was wrong). The read gives the run's flag. Eager vs static vs the path each
input takes; gradients of the parameter where the flag is False."""
import numpy as np

import d2s
import runtime as rt
from runtime import nn

from .helpers import assert_same_leaves


class Teacher(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:                                  # confident: no gradient to the teacher
            out = h.detach()
        else:
            out = h * 2.0
        frozen = out.stop_gradient
        if out.stop_gradient:                            # a Python test of the run's flag
            out = out + 1.0
        return out, frozen


def test_the_flag_read_is_the_runs():
    rt.seed(0)
    eager, static = Teacher(), Teacher()
    static.set_state_dict(eager.state_dict())
    conv = d2s.to_static(static)
    w, b = eager.fc.weight.numpy(), eager.fc.bias.numpy()
    for v in ([[5.0, 5.0]], [[-5.0, -5.0]], [[3.0, 1.0]]):
        x = np.array(v, "float32")
        detached = bool((x @ w + b).sum() > 0)
        (oe, fe), (os_, fs) = eager(rt.to_tensor(x)), conv(rt.to_tensor(x))
        assert fe is detached
        assert_same_leaves((os_, fs), (oe, fe))
        for net, out in ((eager, oe), (static, os_)):
            if not detached:
                out.sum().backward()
            assert (net.fc.weight.grad is None) is detached
            net.clear_gradients()
    assert len(conv.forward.program_cache) == 1
