"""`out = ()` before a loop whose condition is a tensor and `out = tuple(kept)` in its body
(issue 35): the loop carries `out` as a tensor array marked a tuple, so the call returns
eager's tuple, `()` where the loop did not run (it was a TypeError: "'out' is a Python tuple
changed inside a loop whose condition is a tensor")."""
import numpy as np

import d2s
import runtime as rt


class Collect(rt.nn.Layer):
    """Keeps the scaled inputs of each step, exposed as a tuple."""

    def __init__(self):
        super().__init__()
        self.gain = 2.0

    def forward(self, x):
        kept = []
        out = ()
        for i in range(rt.cast(rt.clip(x[0], 0.0, 3.0), "int64")):
            kept.append(x * self.gain * i)
            out = tuple(kept)
        return len(out), out


def collect_ref(xv):
    n = int(np.clip(xv[0], 0.0, 3.0))
    return n, tuple(xv * 2.0 * i for i in range(n))


def steps(x):
    kept = []
    out = ()
    k = 0
    while x.sum() > k:  # a Python int the loop makes a tensor, kept as Python ints
        kept.append(k)
        out = tuple(kept)
        k += 1
    return out


def test_a_tuple_rebound_from_a_grown_list_in_a_graph_loop():
    eager, static = Collect(), d2s.to_static(Collect(), full_graph=True)
    for xv in (np.array([2.0, 1.0], "float32"), np.array([0.0, 1.0], "float32"),
               np.array([3.0, -1.0], "float32")):
        n, want = collect_ref(xv)
        for run in (eager, static):
            got_n, got = run(rt.to_tensor(xv))
            assert got_n == n and type(got) is tuple and len(got) == n
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.numpy(), w)
    assert len(static.forward.program_cache) == 1


def test_a_tuple_of_python_ints_rebound_in_a_while():
    static = d2s.to_static(steps, full_graph=True)
    for total in (-1.0, 0.5, 3.0):
        want = tuple(range(max(0, int(np.ceil(total)))))
        for run in (steps, static):
            assert run(rt.to_tensor([total])) == want
    assert len(static.program_cache) == 1
