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


def grow_by_concat(x, n):
    out = ()
    for i in range(n):
        out = out + (x * (i + 1.0),)
    feats = ()
    i = 0
    while i < n:
        feats += (x.sum() * i,)
        i += 1
    return len(out), out, feats


def test_a_tuple_grown_by_concatenation_in_graph_loops():
    """`out = out + (t,)` and `out += (t,)`: the tuple of tensors becomes a tensor array
    marked a tuple (was the TypeError "a Python tuple changed inside a loop")."""
    static = d2s.to_static(grow_by_concat)
    for k in (3, 0, 1):
        xv = np.array([1.0, -2.0], "float32")
        n = rt.to_tensor(np.array(k, "int64"))
        x_e, x_s = rt.to_tensor(xv, stop_gradient=False), rt.to_tensor(xv, stop_gradient=False)
        e, s = grow_by_concat(x_e, n), static(x_s, n)
        assert s[0] == e[0] == k
        assert type(s[1]) is tuple and type(s[2]) is tuple and len(s[1]) == len(s[2]) == k
        for got, want in zip(s[1], [xv * (i + 1.0) for i in range(k)], strict=True):
            np.testing.assert_allclose(got.numpy(), want)
        for got, want in zip(s[2], [xv.sum() * i for i in range(k)], strict=True):
            np.testing.assert_allclose(got.numpy(), want)
        if k:
            sum(t.sum() for t in e[1]).backward()
            sum(t.sum() for t in s[1]).backward()
            np.testing.assert_allclose(x_s.grad.numpy(), x_e.grad.numpy())
            np.testing.assert_allclose(x_s.grad.numpy(), np.full(2, k * (k + 1) / 2))
    assert len(static.program_cache) == 1
