"""`reach_paths.gradient_sites` through a differentiated `while` loop whose body detaches the
carried value under a tensor `if` (truncated backpropagation): the entry value and a value
the body reads reach the loss under `Carries` conditions, and `reach_values.top_level` makes
the loop carry them. The program stays valid (`model_check`), its values and gradients do not
change, and the flags are the NumPy reference's on inputs that take every path through one
program."""
import numpy as np
import pytest

import runtime as rt
from runtime.program import model_check
from runtime.program.reach_paths import gradient_sites
from runtime.program.reach_values import top_level
from runtime.program.reached import Carries
from runtime.program.split import split_program
from runtime.program.verify import verify


def _program():
    main = rt.static.Program()
    with rt.static.program_guard(main):
        x = rt.static.data("x", [3], "float64")
        n = rt.static.data("n", [], "int64")
        a = rt.static.data("a", [3], "float64")
        for v in (x, a):
            v.stop_gradient = False

        def body(i, h):
            h = rt.tanh(h * a)
            return [i + 1, rt.static.nn.cond(h.mean() > 0.3, lambda: h.detach() * 0.5,
                                             lambda: h)]

        _, h = rt.static.nn.while_loop(lambda i, h: i < n, body, [rt.zeros([], "int64"), x])
        loss = (h * h).sum()
        forward = list(main.global_block().ops)
        grads = rt.static.gradients([loss], [x, a])
    return main, loss, grads, forward


def _reference(x, n, a):
    """(loss, x reached, a reached)."""
    h, x_reached, a_reached = x, True, False
    for _ in range(n):
        h = np.tanh(h * a)
        a_reached = True
        if h.mean() > 0.3:
            h = h * 0.5
            x_reached = a_reached = False
    return (h * h).sum(), x_reached, a_reached


def test_reach_through_a_loop_that_may_cut_is_a_carries_condition():
    main, loss, _, forward = _program()
    sites = gradient_sites(main, ["x", "a"], [loss.name], forward)
    assert sorted(sites) == ["a", "x"]
    for name, source in (("x", 1), ("a", "a")):
        ((c,),) = sites[name]
        assert isinstance(c, Carries) and c.k == 1 and c.source == source


def test_carried_flags_match_the_reference():
    main, loss, _, forward = _program()
    part = split_program(main, len(forward)).forward  # (as a converted call's forward part)
    sites = gradient_sites(part, ["x", "a"], [loss.name])
    made: dict = {}
    flags = [top_level(part, sites[name][0][0], made) for name in ("x", "a")]
    fetch = [loss.name] + [f.name for f in flags]
    model_check.check(part, ["x", "n", "a"], fetch)
    exe = rt.static.Executor()
    a = np.array([0.9, -1.2, 1.5])
    seen = set()
    for x, n in (([1.0, 2.0, 0.5], 0), ([1.0, 2.0, 0.5], 1), ([-1.0, -0.2, 0.5], 3),
                 ([0.1, 0.2, -0.4], 2), ([1.0, 0.5, 0.5], 3), ([0.9, 0.2, 1.7], 1)):
        x = np.array(x)
        got = exe.run(part, {"x": x, "n": np.int64(n), "a": a}, fetch)
        want, *reached = _reference(x, n, a)
        seen.add(tuple(reached))
        np.testing.assert_allclose(got[0], want, rtol=1e-12)
        assert [bool(f) for f in got[1:]] == reached, (x, n)
    assert seen == {(True, False), (True, True), (False, False), (False, True)}


@pytest.mark.parametrize("n", [0, 3])
def test_gradients_do_not_change(n):
    main, loss, grads, forward = _program()
    verify(main)
    feed = {"x": np.array([-1.0, -0.2, 0.5]), "n": np.int64(n), "a": np.array([0.9, -1.2, 1.5])}
    exe = rt.static.Executor()
    before = exe.run(main, feed, [loss, *grads])
    made: dict = {}
    for ((c,),) in gradient_sites(main, ["x", "a"], [loss.name], forward).values():
        top_level(main, c, made)
    verify(main)
    after = exe.run(main, feed, [loss, *grads])
    assert len(before) == len(after) == 3
    for u, v in zip(before, after, strict=True):
        np.testing.assert_array_equal(u, v)
