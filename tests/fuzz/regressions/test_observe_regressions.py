"""Failures the observe fuzzer (`gen_observe`) found, shrunk and kept. Each runs through
`runner.compare` as the fuzzer does: eager vs one converted program over inputs taking
different paths; the argument object's fields are compared too."""
import pytest

from .. import gen_observe, runner

# (name, body of f after gen_observe.PRELUDE, inputs)
CASES = [
    # Bools appended in a tensor while nested in another: the outer loop's array lost the
    # mark of a list of Python numbers, and sum() of it built branches of two dtypes (bool for
    # the empty list, int64 for the total): an internal OpTypeError.
    ("bools_summed_after_nested_whiles", [
        "while k < x[0]:", "    k = k + 1.0", "    j = rt.zeros([])",
        "    while j < rt.abs(y[0]) + 0.5:", "        j = j + 1.0", "        flags.append(True)"],
     [([0.75, 0.75, 2.75], [1.25, -0.25, 0.75]), ([-1.25, -0.25, -0.75], [0.25, 0.5, 1.0]),
      ([2.25, 1.0, 1.0], [-2.75, 1.0, 1.0])]),
    # A list of Python numbers that a graph loop in one branch of a tensor `if` makes a tensor
    # array while the other branch leaves it a list: the list was not made an array for the
    # `cond` (internal ValueError: branches of different structures; campaign of 120).
    ("number_list_array_in_one_branch", [
        "if rt.sum(h) > 1.0:", "    while k < rt.abs(x[0]) + 0.5:", "        k = k + 1.0",
        "        nums.insert(0, 0)"],
     [([2.75, 2.75, 1.25], [0.25, 2.25, 0.25]), ([-1.25, -1.25, -1.25], [1.25, 0.75, -2.75]),
      ([0.25, 0.75, -1.25], [1.25, 0.75, -2.75])]),
    # Ints a graph loop carried item by item (the loop kept the length), grown in an inner
    # loop, then popped under a tensor `if` in a third loop: the array lost the mark of
    # numbers a tensor `if` merged, and sum(nums) was a 0-d int64 Tensor for eager's int
    # (seed 17010 of 2,000, 5 cases).
    ("ints_carried_grown_then_popped", [
        "while k < x[0]:", "    k = k + 1.0", "    nums.insert(0, 5)",
        "    if len(nums) > 1:", "        h = h + nums.pop()",
        "for i in range(rt.cast(rt.clip(x[1] + 1.0, 0.0, 3.0), 'int64')):",
        "    k1 = rt.zeros([])", "    while k1 < rt.abs(x[0]) + 0.5:", "        k1 = k1 + 1.0",
        "        nums.append(1)",
        "k2 = rt.zeros([])", "while k2 < rt.abs(x[0]) + 0.5:", "    k2 = k2 + 1.0",
        "    if y[0] > x[1]:", "        if len(nums) > 1:", "            h = h + nums.pop()"],
     [([1.25, 2.75, 1.25], [-0.25, -1.25, -1.25]), ([-1.25, -0.25, -0.75], [0.75, 0.75, 1.25]),
      ([1.25, 0.25, -2.75], [1.25, 2.25, 1.25])]),
    # An early return under a tensor `if`, a list popped under another (so the else branch is
    # traced again), then `seen.add(pair)`: the retrace found the first trace's pair in the
    # set (internal ValueError naming a Variable made inside a cond block; seed 17010, 2).
    ("set_added_after_an_early_return", [
        "if x[2] < 0.5:", f"    return {gen_observe.RESULT}",
        "if x[0] > 1.0:", "    nums.pop()",
        "pair = (int(x[0] > 0.0), int(y[1] > 0.0))", "if pair in seen:", "    h = h + 1.0",
        "seen.add(pair)"],
     [([2.25, 0.75, 0.75], [-0.25, 1.25, -0.25]), ([-1.25, -0.25, -2.25], [1.25, 0.75, -2.75]),
      ([2.25, 0.75, -1.25], [0.75, 0.25, 0.25])]),
]


@pytest.mark.parametrize("name, body, inputs", CASES, ids=[c[0] for c in CASES])
def test_observe_regression(name, body, inputs):
    source = (gen_observe.PRELUDE + "\n".join("    " + ln for ln in body)
              + f"\n    return {gen_observe.RESULT}\n")
    out = runner.compare(source, inputs, gen_observe.make_observed)
    assert out.kind == "same", str(out)

