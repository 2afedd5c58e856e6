"""A key a dict had before a graph loop, popped under a tensor `if` in the loop's body (a
cache entry consumed once, a pending loss used up): eager code has no key after the trips
that popped it. The converted call left it in the dict, silently (`len(d)` 2 where eager has
1, `"a" in d` True). Now the loop carries the key's presence flag (true on entry): `len`,
`in`, `.get`, `sorted(d)` follow the run, also of a dict the body changes only as an object
(not a name the loop carries: it was refused at the loop). Eager vs static vs NumPy over inputs
taking both paths and zero, one and three trips, through one program."""
import numpy as np

import d2s
import runtime as rt
from tests.d2s.observe_wild.helpers import assert_same_leaves


def consume_once(x, y):
    h = x * 1.0
    d = {"a": h * 2.0}
    for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        if x[0] > 0.5:
            h = h + d.pop("a", y * 0.0)
        else:
            d["n"] = d.get("n", 0) + 1
    return h, len(d), "a" in d, sorted(d), d.get("a", x * 0.0 - 5.0)


def popped_through_a_helper(x, y):
    h = x * 1.0
    d = {"a": h * 2.0}
    for _ in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), "int64")):
        if x[0] > 0.5:
            h = h + d.pop("a", y * 0.0)
    return h, len(d)


def _ref(x, y):
    h, d = x.copy(), {"a": x * 2.0}
    for _ in range(int(np.clip(x[1] + 1.0, 0.0, 3.0))):
        if x[0] > 0.5:
            h = h + d.pop("a", y * 0.0)
        else:
            d["n"] = d.get("n", 0) + 1
    return h, len(d), "a" in d, sorted(d)


ROWS = (([2.75, 0.75, 2.25], [0.75, -0.25, -0.25]),   # pops on the first trip
        ([-0.75, 1.25, -2.25], [2.25, -1.25, -0.25]),  # never pops: counts
        ([2.0, -1.5, 0.25], [-1.25, 2.25, 2.25]))      # no trip


def test_the_popped_key_is_gone_as_eager():
    static = d2s.to_static(consume_once)
    for xs, ys in ROWS:
        x, y = (rt.to_tensor(np.asarray(v, "float32")) for v in (xs, ys))
        want, got = consume_once(x, y), static(x, y)
        assert_same_leaves(got, want)
        ref = _ref(np.asarray(xs, "float32"), np.asarray(ys, "float32"))
        np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-6)
        assert got[1:4] == ref[1:]
    assert len(static.program_cache) == 1


def test_a_dict_the_loop_does_not_carry_follows_the_run_too():
    # (refused at the loop before: the loop carries the key's flag as a held place now)
    static = d2s.to_static(popped_through_a_helper, full_graph=True)
    for xs, ys in ROWS:
        x, y = (rt.to_tensor(np.asarray(v, "float32")) for v in (xs, ys))
        assert_same_leaves(static(x, y), popped_through_a_helper(x, y))
    assert len(static.program_cache) == 1
