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
]


@pytest.mark.parametrize("name, body, inputs", CASES, ids=[c[0] for c in CASES])
def test_observe_regression(name, body, inputs):
    source = (gen_observe.PRELUDE + "\n".join("    " + ln for ln in body)
              + f"\n    return {gen_observe.RESULT}\n")
    out = runner.compare(source, inputs, gen_observe.make_observed)
    assert out.kind == "same", str(out)

