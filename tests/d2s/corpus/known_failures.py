"""Corpus cases that fail when converted, with a one-line diagnosis each: the transpiler's bug
list. They run as strict xfails, so fixing one makes its test fail until it is removed here.

STATIC: failures of `test_static` (one conversion, every argument set).
DYNAMIC: failures of `test_dynamic_batch` (`InputSpec([None, ...])`, batch sizes 1, 3, 7).
"""
from __future__ import annotations

_BOOL_INSTEAD_OF_OPERAND = (
    "`a or b` / `a and b` on non-bool tensors give a bool tensor (logical_or/logical_and) "
    "instead of the operand Python returns: `m or 0.5` gives 1.0 where eager gives 0.5")
_ARRAY_FROM_SUB_BLOCK = (
    "`while True` + tensor break growing a list: the while op's tensor-array input (%t17) is "
    "defined inside a cond sub-block, not where the loop reads it (executor NameError v_t17)")

STATIC: dict[str, str] = {
    "assert_print_len_cast.print_tensor_sep_end": (
        "print of a tensor ignores sep= and end=: prints 'mean Variable: t0 - shape ...' "
        "where eager prints 'mean=<tensor>;'"),
    "assert_print_len_cast.len_of_list": (
        "a list rebound to different lengths in the two branches of a tensor if is rejected by "
        "cond (no tensor-array fallback, no conversion error naming the variable)"),
    "calls.generator_helper": (
        "convert_call converts a generator function (`yield` in a for): the generated body "
        "returns None instead of a generator"),
    "misc.walrus_in_while": (
        "walrus in a while condition (`while (s := ...) < 10`) binds `s` only inside the "
        "loop-test function: NameError after the loop"),
    "for.builtin_all_over_generator": (
        "builtin all()/any() over tensor comparisons is not converted: all() calls bool() on a "
        "static Variable"),
    "break_continue.break_over_list_by_index": (
        "tensor `break` in `for i in range(len(xs))` makes `i` a tensor, then `xs[i]` indexes "
        "the Python list with a static Variable"),
    "if.closure_reads_updated_variable": (
        "a closure defined before a tensor while reads `scale`, which the loop body reassigns: "
        "the body function rebinds it locally, so the closure sees the initial value (wrong "
        "values; without the case's iteration cap the program loops forever)"),
    "if.python_int_or_float_from_branches": (
        "Python numbers of different types from the two branches of a tensor if (int 1 vs "
        "float 2.5) take the first branch's dtype (int64): 2.5 becomes 2 (wrong values)"),
    "while.list_items_updated_in_tensor_loop": (
        "a Python list of tensors updated by index in a tensor while (`xs[0] = xs[0] + xs[1]`) "
        "is carried as one tensor: setitem of a [2] value into a [] selection"),
    "logical.or_returns_operand_value": _BOOL_INSTEAD_OF_OPERAND,
    "logical.and_returns_operand_value": _BOOL_INSTEAD_OF_OPERAND,
    "logical.builtin_max_of_scores": (
        "builtin max() of two tensor scalars is not converted: max() calls bool() on a static "
        "Variable"),
    "layers.GreedyUnroll": _ARRAY_FROM_SUB_BLOCK,
    "return.helper_with_early_return_in_loop": (
        "helper returning a Python int (the loop index) under a tensor condition inside a loop: "
        "return slot is None on the other path, cond rejects (True, 0) vs (False, None)"),
}

DYNAMIC: dict[str, str] = {
    "for.enumerate_tensor_rows": (
        "`for i, row in enumerate(x)` over a tensor with an unknown batch dim calls len(x) "
        "(plain `for row in x` becomes a while op; enumerate does not)"),
    "for.min_with_batch_dim": (
        "builtin min(3, x.shape[0]) with an unknown batch dim calls bool() on the shape tensor "
        "(min/max of a Python int and a tensor are not converted)"),
    "layers.GreedyUnroll": _ARRAY_FROM_SUB_BLOCK,
}
