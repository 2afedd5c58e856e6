"""Failures the state fuzzer found, shrunk (by hand and with the line shrinker) and kept.
Each runs through `runner.compare` exactly as the fuzzer does: eager vs one converted program
over inputs taking different paths; the state of the object passed in is compared too."""
import pytest

from .. import gen_state, runner

# (name, body of f after the prelude in gen_state.PRELUDE, inputs)
CASES = [
    # o.t = x left a static Variable on the object passed in (no write-back).
    ("attribute_written_back", ["h = h + x"],
     [([2.75, 2.75, 2.75], [-2.75, -2.75, -2.75]), ([-2.75, -2.75, -2.75], [1.25, 1.0, 1.0])]),
    # A helper writing through an alias under a tensor if: the write never reached `buf`.
    ("alias_helper_under_if", ["if rt.mean(x) > 0.0:", "    zero_first(alias)",
                               "    buf[1] = (y)[1]"],
     [([1.25, 0.25, 0.75], [-1.25, 2.25, 0.25]), ([-1.25, -0.25, -0.75], [1.0, 1.0, 1.0])]),
    # The scratch trace for initial values used copies: an aliased in-place write inside a
    # tensor while (with a Python if and an attribute change) was lost.
    ("alias_in_while_with_python_if", [
        "k2 = rt.zeros([])", "while k2 < rt.abs(x[0]) + 0.5:", "    k2 = k2 + 1.0",
        "    if len(d) == 2:", "        buf[1] = (o.t - y)[1]", "    o.n += 1"],
     [([2.75, 0.75, 0.25], [0.75, -0.25, -2.75]), ([-0.75, -0.25, -2.75], [-1.25, 0.25, 2.25])]),
    # A Python for with a tensor return inside a tensor while: d2s's own loop wrappers hid
    # the user's body from the walk (internal error: a block variable used outside).
    ("python_for_with_tensor_return_in_while", [
        "k2 = rt.zeros([])", "while k2 < rt.abs(x[0]) + 0.5:", "    k2 = k2 + 1.0",
        "    for i in range(2):", "        if rt.mean(x) > 0.0:",
        "            return h, buf, alias, lst, d, cell", "        add_to(alias, buf + 1.0)"],
     [([1.25, 2.25, 0.25], [2.25, -2.75, -0.25]), ([-1.25, -1.25, -0.75], [0.25, 0.75, -0.25])]),
    # Nested tensor whiles changing a nested dict: the condition probe left scratch values in
    # the dict, which became the loop's initial values (internal error at run time).
    ("nested_whiles_nested_dict", [
        "k2 = rt.zeros([])", "while k2 < rt.abs(x[0]) + 0.5:", "    k2 = k2 + 1.0",
        "    k1 = rt.zeros([])", "    while k1 < rt.abs(x[0]) + 0.5:", "        k1 = k1 + 1.0",
        '        d["a"]["k"] = lst[-1]', '        d["b"] = d["b"] + cell + x'],
     [([0.25, 2.75, 1.25], [1.25, 0.25, 1.25]), ([2.25, -1.0, 0.5], [0.5, 0.5, 0.5])]),
    # A tensor if that changes nothing (the write is in a Python else never taken): its
    # state name got the cond's new Variable object while the alias kept the old one, so a
    # later write through the alias missed the name (a silent wrong result, campaign of
    # 2,000 same-shape examples).
    ("unchanged_state_keeps_identity", [
        "if rt.max(buf) < 1.5:", "    if True:", "        h = h + y", "    else:",
        "        buf[1] = (cell + x)[1]", "alias[2] = (cell + x)[2] * 2.0"],
     [([0.25, 0.25, 2.25], [-2.75, 1.25, 2.25]), ([0.25, 0.25, 2.25], [2.75, 1.25, 2.25])]),
    # A Python for turned graph loop (tensor return flag) that leaves `buf` unchanged: the
    # name got the loop's new Variable while the alias kept the old one (silent wrong).
    ("loop_unchanged_state_keeps_identity", [
        "for i in range(2):", "    if x.shape[0] == 3:", "        bump(x)", "    else:",
        '        buf[1] = (d["b"] * 0.5)[1]', "    if rt.max(buf) < 1.5:",
        "        return h, buf, alias, lst, d, cell", "else:", "    if x.shape[0] == 3:",
        "        buf[2] = (h * 0.5)[2]"],
     [([2.25, -2.75, -0.25], [2.25, 0.75, 0.75]), ([0.25, 0.25, 1.25], [0.75, 0.25, 0.75])]),
    # A tuple returned early inside a tensor if / tensor while (_retval None on one path).
    ("early_return_tuple", [
        "if rt.mean(x) > 0.0:", "    return h, buf, alias, lst, d, cell",
        "k2 = rt.zeros([])", "while k2 < rt.abs(x[0]) + 0.5:", "    k2 = k2 + 1.0",
        "    if y[0] > x[1]:", "        return h, buf, alias, lst, d, cell", "    bump(x)"],
     [([1.25, 1.25, 0.25], [-1.25, 0.75, 2.25]), ([-1.25, -2.0, -0.25], [2.0, 0.75, 2.25]),
      ([-1.25, -2.0, -0.25], [-2.0, 0.75, 2.25])]),
    # A tensor while inside the else branch of a tensor if, with the prelude's helpers and
    # aliases unused (failed once inside a full run, same-shape campaign; not reproduced
    # alone: kept so that it runs on every suite run).
    ("while_in_else_branch", [
        "if rt.mean(x) > 0.0:", "    h = h + x", "else:", "    h = h + x",
        "    k1 = rt.zeros([])", "    i = 0", "    while k1 < rt.abs(x[0]) + 0.5:",
        "        k1 = k1 + 1.0", "        h = h + x", "    h = h + x", "h = h + x",
        "for i in range(2):", "    h = h + y"],
     [([2.75, 2.75, 2.75], [-2.75, -2.75, -2.75]), ([-2.75, -2.75, -2.75], [-2.75, -2.75, -2.75]),
      ([-2.75, -2.75, -2.75], [-2.75, -2.75, -2.75])]),
    # `i` bound in one branch of a tensor if, then only the target of a later `for i in`:
    # liveness counted the loop body function's parameter `i` (read by the functions nested
    # in it) as a read of the earlier `i`, so the if carried it (internal UndefinedNameError;
    # state3 campaign, seed 101, 3 of 300).
    ("loop_target_after_one_branch_binding", [
        "if rt.mean(x) > 0.0:", "    i = 0", "    h = h * 2.0",
        "for i in range(2):", "    if rt.mean(x) > 0.0:", "        if i == 1:",
        "            continue", "    zero_first(alias)"],
     [([2.75, 0.25, 2.75], [-0.25, -1.25, -2.75]), ([-0.25, -0.25, -2.75], [-2.75, -1.25, -2.75]),
      ([-0.25, -2.75, 1.25], [-0.25, -2.75, 1.25])]),
    # A tensor `if` whose branches leave `lst` with different lengths, after earlier tensor
    # returns and loops: the frames of finished branch functions, kept by the traceback of
    # the first attempt, counted as other references ('_lst_3' in _if_true_5), a false
    # refusal (17 of 26 refusals of the state campaign, seed 101; not shrunk further).
    ("finished_branch_frames_are_not_references", [
        "if rt.mean(x) > 0.0:",
        "    return h, buf, alias, lst, d, cell",
        "for i in range(2):",
        "    cell = cell + d[\"b\"] * 0.5",
        "    k1 = rt.zeros([])",
        "    i = 0",
        "    while k1 < rt.abs(x[0]) + 0.5:",
        "        k1 = k1 + 1.0",
        "        d.update({\"b\": h * 0.5})",
        "        d[\"a\"][\"k\"] = h * 0.5",
        "        if rt.mean(x) > 0.0:",
        "            return h, buf, alias, lst, d, cell",
        "    d.update({\"b\": d[\"b\"] * 0.5})",
        "if x.shape[0] == 3:",
        "    if True:",
        "        push(x * 2.0)",
        "        pairs.append((h * 0.5, {\"y\": h * 0.5 * 0.5}))",
        "    else:",
        "        h = h + pairs.pop()[0]",
        "        if rt.max(buf) < 1.5:",
        "            return h, buf, alias, lst, d, cell",
        "else:",
        "    if rt.max(buf) < 1.5:",
        "        return h, buf, alias, lst, d, cell",
        "    cell = cell + y",
        "    if rt.sum(h) > 1.0:",
        "        zero_first(alias)",
        "        o.k += 1",
        "    else:",
        "        lst.pop(0)",
        "        o.k += 1",
        "        buf[1] = (cell + x)[1]"],
     [([2.75, 2.75, 0.25], [0.25, -2.75, 1.25]), ([-0.25, -2.75, -2.75], [-2.75, 1.25, 0.25]), ([0.75, -1.25, -0.25], [-2.75, 2.25, -1.25])]),

]


def _source(body):
    return (gen_state.PRELUDE + "\n".join("    " + ln for ln in body)
            + f"\n    return {gen_state.RESULT}\n")


@pytest.mark.parametrize("name,body,inputs", CASES, ids=[c[0] for c in CASES])
def test_regression(name, body, inputs):
    out = runner.compare(_source(body), inputs, gen_state.make_box)
    assert out.kind == "same", str(out)


def test_a_branch_that_always_raises_beside_one_that_leaves_the_return_unset():
    """Campaign seed 1016: one branch of a tensor `if` always raises IndexError (a list
    popped empty) and returns from a loop, the other leaves `_retval` unset: the raising
    branch's stand-in values must not touch the unset one (an internal `_retval` error)."""
    import numpy as np

    import d2s
    import runtime as rt

    def f(x, y):
        pairs = []
        h = x * 1.0
        if rt.max(y) < 1.5:
            h = h + pairs.pop()
            for i in range(2):
                if rt.max(y) < 1.5:
                    return h
        else:
            h = x * 2
        return h

    static = d2s.to_static(f)
    x = rt.to_tensor(np.array([1.25, 0.75], "float32"))
    np.testing.assert_allclose(static(x, rt.to_tensor(np.array([0.25, 2.25], "float32"))).numpy(),
                               [2.5, 1.5])
    try:
        static(x, rt.to_tensor(np.array([0.25, 1.25], "float32")))
    except IndexError:
        pass
    else:
        raise AssertionError("eager raises IndexError (pop from empty list) on this input")
