"""`reach_values.top_level`: the flag saying whether some trip of a differentiated `while` loop
took a branch of a tensor `if` in its body. The loop carries it as one more loop variable (and
saves it, as every carried value is); the program stays valid (`model_check`), its values and
gradients do not change, and the flag is the NumPy reference's on inputs that take every
path through one program."""
import numpy as np
import pytest

import runtime as rt
from runtime.program import model_check
from runtime.program.reach_values import top_level
from runtime.program.reached import Ran, Trips, reach_conditions
from runtime.program.split import split_program
from runtime.program.verify import verify


def _program():
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [3], "float64")
        n = rt.static.data("n", [], "int64")
        a = rt.static.data("a", [3], "float64")
        b = rt.static.data("b", [3], "float64")
        for v in (a, b):
            v.stop_gradient = False

        def body(i, h):
            return [i + 1, rt.static.nn.cond(h.mean() > 0, lambda: rt.tanh(h * a),
                                             lambda: rt.tanh(h + b))]

        _, h = rt.static.nn.while_loop(lambda i, h: i < n, body, [rt.zeros([], "int64"), x])
        loss = (h * h).sum()
        forward = list(main.global_block().ops)
        grads = rt.static.gradients([loss], [a, b])
    return main, loss, grads, forward


def _reference(x, n, a, b):
    h, took = x, set()
    for _ in range(n):
        took.add(h.mean() > 0)
        h = np.tanh(h * a) if h.mean() > 0 else np.tanh(h + b)
    return (h * h).sum(), took


def test_reach_of_a_branch_in_a_loop_body_is_a_trips_condition():
    main, _, _, forward = _program()
    sites = reach_conditions(main, ["a", "b"], forward)
    assert len(sites) == 2
    for name, truth in (("a", True), ("b", False)):
        (site,) = sites[name]
        (c,) = site
        assert isinstance(c, Trips) and len(c.site) == 1 and c.site[0].truth is truth


def test_some_trip_took_the_branch_flags_match_the_reference():
    main, loss, _, forward = _program()
    part = split_program(main, len(forward)).forward  # (as a converted call's forward part)
    made: dict = {}
    sites = reach_conditions(part, ["a", "b"])
    assert len(sites) == 2
    flags = {name: top_level(part, site[0], made) for name, (site,) in sites.items()}
    ran = top_level(part, Ran(sites["a"][0][0].saves), made)
    fetch = [loss.name, flags["a"].name, flags["b"].name, ran.name]
    model_check.check(part, ["x", "n", "a", "b"], fetch)
    exe = rt.static.Executor()
    a, b = np.array([0.5, -1.0, 2.0]), np.array([0.3, 0.2, -0.4])
    seen = set()
    for x, n in (([1.0, 2.0, 0.5], 3), ([-1.0, -2.0, 0.5], 1), ([-0.5, 0.1, 0.2], 4),
                 ([1.0, 2.0, 0.5], 0), ([0.2, -3.0, 0.1], 2)):
        x = np.array(x)
        got = exe.run(part, {"x": x, "n": np.int64(n), "a": a, "b": b}, fetch)
        want, took = _reference(x, n, a, b)
        seen.add(frozenset(took))
        np.testing.assert_allclose(got[0], want, rtol=1e-12)
        assert [bool(f) for f in got[1:]] == [True in took, False in took, n > 0]
    assert seen == {frozenset({True}), frozenset({False}), frozenset({True, False}),
                    frozenset()}


@pytest.mark.parametrize("n", [0, 2])
def test_gradients_do_not_change(n):
    main, loss, grads, forward = _program()
    verify(main)
    feed = {"x": np.array([-0.5, 0.1, 0.2]), "n": np.int64(n), "a": np.array([0.5, -1.0, 2.0]),
            "b": np.array([0.3, 0.2, -0.4])}
    exe = rt.static.Executor()
    before = exe.run(main, feed, [loss, *grads])
    made: dict = {}
    for (site,) in reach_conditions(main, ["a", "b"], forward).values():
        top_level(main, site[0], made)
    verify(main)
    after = exe.run(main, feed, [loss, *grads])
    assert len(before) == len(after) == 3
    for u, v in zip(before, after):
        np.testing.assert_array_equal(u, v)
