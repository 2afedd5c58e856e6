"""Cases the breadth and state fuzzers found for issue 35, kept as found (inputs and the first
error in the header): each now runs the same as eager code through one converted function.

- `breadth_cell_compared_by_value`: an internal `bool() of a tensor` at a tensor `if` after
  a graph loop (a closure cell compared with `==` while looking for other references to a
  growing list; session 22: its `mixed.append(i)` of a loop counter into a list of float32
  tensors appends `rt.to_tensor(i, dtype='float32')`, as the refusal of an int beside float
  tensors says, which eager's list would keep as an int);
- `breadth_arrays_made_inside_branches`: refused as "out is a list of length 3 in the if
  branch and 2 in the else branch" (arrays made inside both branches after an append);
- `state_same_shape_attribute_carried_by_name`: refused as "o.t is changed ... only once its
  values have their loop shapes" (an attribute the loop carries by name, stored from the
  loop's parameter on each trace, taken for a change the probe had missed);
- `observe_sets_branch_keys_need_many_attempts` (session 21, observe-sets seed 34001): an
  internal "d2s bug: the tensor `if` ... kept changing shape": nested tensor `if`s each giving
  dict keys holding Python numbers presence flags, a float list given an int (number kinds)
  and early returns needed more than five traces of the outer `if`, each adding flag outputs
  (the bound is twelve now; each such trace adds outputs, so it ends);
- `state_early_return_beside_an_empty_list_marker` (session 22, state seed 36601): an internal
  "cond: the branches return different structures" for an early `return h, ..., lst, ...`
  under a tensor `if` in a graph loop whose list `lst` was popped empty before it: the loop's
  probe marks `lst` an empty list whose items are unseen, and the returned tuple held that
  marker in one branch and the plain list in the other (some inputs raise eager's
  `IndexError: pop from empty list`, the others return);
- `observe_number_or_tensor_returned_from_a_try` (session 23, observe seed 38201): a value
  that is a Python float on some runs (`num = 1.5`, a tensor under a tensor `if`) returned in
  a tuple under a tensor `if` inside a `try`: the return's `if` (whose other branch holds the
  return value's placeholder, unbound) did not carry the value's "is a number" flag, so the
  call returned a float32 tensor where eager returns the float 1.5;
- `observe_sets_lambda_parameter_named_like_a_branch_local` (session 23, observe-sets seed
  38402): `map(lambda p: p[0], seen)` in a graph loop whose tensor `if` binds `p` by a `for`
  on one branch: liveness read the lambda's own parameter as the function's `p`, so the `if`
  was refused ("'p' is bound in only one branch ... and is used after it"; outside a loop the
  generated code read an unbound `_p_2`);
- `dict_keys_popped_under_an_if_in_a_graph_loop` (session 23, dict-keys seed 38401; on main
  before the session, masked by a key-order refusal until then): `d.pop("a", ...)` under a
  tensor `if` in a graph loop left 'a' in the dict after the loop (`len(d)` 2 where eager has
  1): the loop now carries the key's presence flag, true on entry."""
import pathlib

import pytest

from .. import GENERATORS, runner

CASES = {"breadth_arrays_made_inside_branches": "breadth",
         "dict_keys_popped_under_an_if_in_a_graph_loop": "dict-keys",
         "observe_sets_lambda_parameter_named_like_a_branch_local": "observe-sets",
         "breadth_cell_compared_by_value": "breadth",
         "state_same_shape_attribute_carried_by_name": "state-same-shape"}
SAME_OR_SAME_ERROR = {"state_early_return_beside_an_empty_list_marker": "state",
                      "observe_number_or_tensor_returned_from_a_try": "observe"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_found_case_runs_as_eager(name):
    path = pathlib.Path(__file__).parent / "found35" / f"{name}.txt"
    out = runner.compare_saved(path, GENERATORS[CASES[name]]()[1])
    assert out.kind == "same", str(out)


@pytest.mark.parametrize("name", sorted(SAME_OR_SAME_ERROR))
def test_found_case_returns_or_raises_as_eager(name):
    path = pathlib.Path(__file__).parent / "found35" / f"{name}.txt"
    out = runner.compare_saved(path, GENERATORS[SAME_OR_SAME_ERROR[name]]()[1])
    assert out.kind in ("same", "same_error"), str(out)


@pytest.mark.slow  # (~15 s: the nested ifs are traced again on each of the outer ones' traces)
def test_nested_ifs_that_need_many_traces_run_as_eager():
    name = "observe_sets_branch_keys_need_many_attempts.txt"
    path = pathlib.Path(__file__).parent / "found35" / name
    out = runner.compare_saved(path, GENERATORS["observe-sets"]()[1])
    assert out.kind == "same", str(out)
