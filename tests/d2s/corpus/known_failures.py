"""Corpus cases that fail when converted, with a one-line diagnosis each: the transpiler's bug
list. They run as strict xfails, so fixing one makes its test fail until it is removed here.

STATIC: failures of `test_static` (one conversion, every argument set).
DYNAMIC: failures of `test_dynamic_batch` (`InputSpec([None, ...])`, batch sizes 1, 3, 7).
"""
from __future__ import annotations

_BREAK_FLAG_DROPPED = (
    "tensor `break` that ends the loop body: the `_brk` flag set in the if-branch function is "
    "neither returned from the branch nor loop-carried, so the break is silently ignored "
    "(wrong values)")
_SETITEM_IN_BRANCH = (
    "subscript assignment (`y[0] = ...`, `x[0] += ...`) inside a tensor if is not treated as a "
    "write of the container: its new value leaks out of the cond block")
_UNKNOWN_DIM_IS_MINUS_ONE = (
    "`x.shape[0]` of an InputSpec None dim gives the Python int -1, not a shape tensor, so "
    "Python arithmetic/comparisons/range() on it bake wrong values into the program")
_GLOBAL_DICT_SETITEM = (
    "a helper that assigns into a module-global dict (`_SHARED[k] = ...`) inside a Python if: "
    "the converted if treats `_SHARED` as a local -> UnboundLocalError")

STATIC: dict[str, str] = {
    "while.shape_grows_in_loop": (
        "`x.shape[0]` of a while-loop var whose shape changes per iteration returns the Python "
        "int -1 instead of a runtime shape tensor"),
    "break_continue.nested_outer_break_after_inner": _BREAK_FLAG_DROPPED,
    "break_continue.break_over_enumerate": _BREAK_FLAG_DROPPED,
    "break_continue.break_value_used_after": _BREAK_FLAG_DROPPED,
    "return.bare_return_after_work": _SETITEM_IN_BRANCH,
    "misc.augmented_assign_subscript": _SETITEM_IN_BRANCH,
    "assert_print_len_cast.print_tensor_sep_end": (
        "print of a tensor ignores sep= and end=: prints 'mean Variable: t0 - shape ...' "
        "where eager prints 'mean=<tensor>;'"),
    "assert_print_len_cast.len_of_list": (
        "a list rebound to different lengths in the two branches of a tensor if is rejected by "
        "cond (no tensor-array fallback, no conversion error naming the variable)"),
    "list_dict.append_in_tensor_while": (
        "slicing a tensor array (`outs[-1:]` of a list grown in a tensor while) hands the "
        "Python list to getitem"),
    "list_dict.append_with_tensor_trip_count": (
        "tensor array grown in `for i in range(n_tensor)` then iterated: the executor's "
        "compiled while op reads an undefined value (NameError v_tNN)"),
    "list_dict.dict_update_in_tensor_loop": (
        "dict entries assigned in a tensor while (`state['acc'] = ...`) are not loop-carried: "
        "while_loop gets an empty loop_vars"),
    "calls.generator_helper": (
        "convert_call converts a generator function (`yield` in a for): the generated body "
        "returns None instead of a generator"),
    "misc.walrus_in_while": (
        "walrus in a while condition (`while (s := ...) < 10`) binds `s` only inside the "
        "loop-test function: NameError after the loop"),
    "misc.with_plain_context_manager": (
        "converter crash on a tensor if inside a `with` block "
        "(AttributeError: 'list' object has no attribute '_fields' in ast)"),
    "misc.with_nullcontext_and_no_grad": (
        "converter crash on a tensor conditional inside a `with a, b:` block "
        "(AttributeError: 'list' object has no attribute '_fields' in ast)"),
    "layers.StackWithEarlyExit": (
        "tensor `break` in `for block in self.blocks` (LayerList) makes a while op whose loop "
        "vars include the Layer `block` -> unsupported dtype object"),
    "layers.function_calls_layer": _GLOBAL_DICT_SETITEM,
}

DYNAMIC: dict[str, str] = {
    "if.branch_on_batch_size": _UNKNOWN_DIM_IS_MINUS_ONE,
    "return.return_inside_for_range": _UNKNOWN_DIM_IS_MINUS_ONE,
    "assert_print_len_cast.shape_arithmetic": _UNKNOWN_DIM_IS_MINUS_ONE,
    "misc.reshape_with_unknown_batch": _UNKNOWN_DIM_IS_MINUS_ONE,
    "layers.EarlyReturn": _UNKNOWN_DIM_IS_MINUS_ONE,
    "layers.TimeStepLoop": _UNKNOWN_DIM_IS_MINUS_ONE,
    "layers.function_calls_layer": _GLOBAL_DICT_SETITEM,
}
