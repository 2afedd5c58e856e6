"""A lambda's parameter named like a local of the function (`map(lambda p: p[0], pairs)` after
`for p in pairs:` under a tensor `if`) is the lambda's own: liveness read it as the function's
`p`, so the `if` gave `p` out (the generated code read an unbound `_p_2`: NameError) or was
refused in a graph loop ("'p' is bound in only one branch ..."). Eager vs static vs NumPy."""
import gast
import numpy as np

import d2s
import runtime as rt
from d2s.pyct import liveness
from tests.d2s.observe_wild.helpers import assert_same_leaves


def after_if(x):
    h = x * 1.0
    pairs = [(0, 1), (2, 3)]
    if rt.mean(x) > 0.0:
        for p in pairs:
            h = h + p[1]
    return h + len(list(map(lambda p: p[0], pairs)))  # noqa: C417  (the idiom tested)


def in_graph_loop(x):
    h = x * 1.0
    pairs = [(0, 1)]
    k = rt.zeros([])
    while k < x[0] * 2.0:
        k = k + 1.0
        h = h + len(list(map(lambda p: p[0], pairs)))  # noqa: C417
        if rt.mean(x) > 0.0:
            for p in pairs:
                h = h + p[1]
    return h


def _ref_after_if(x):
    return x + (4.0 if x.mean() > 0 else 0.0) + 2.0


def test_converted_values_match_eager_and_numpy():
    for fn in (after_if, in_graph_loop):
        static = d2s.to_static(fn)
        for row in ([0.75, 0.75, 0.75], [-0.5, 0.2, 0.1], [1.5, 0.5, 0.0]):
            x = rt.to_tensor(np.asarray(row, "float32"))
            assert_same_leaves(static(x), fn(x))  # (dtype, shape, stop_gradient, values)
            if fn is after_if:
                np.testing.assert_allclose(static(x).numpy(),
                                           _ref_after_if(np.asarray(row, "float32")))
        assert len(static.program_cache) == 1


def test_a_lambdas_parameters_are_not_reads_of_the_function():
    body = gast.parse("y = list(map(lambda p, q=r: p + q + s, xs))").body
    assert liveness.live_in(body, frozenset()) == {"list", "map", "r", "s", "xs"}
