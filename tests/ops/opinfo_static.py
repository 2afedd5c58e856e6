"""The ops of runtime/program (control flow, tensor arrays, Print/Assert): all exempt here
because they take sub-blocks or tensor arrays, which an OpInfo sample cannot express; each is
tested, with values and gradients, in tests/static/."""
from __future__ import annotations

_FLOW = "a structural op built by rt.static.nn / backward; tests/static/test_control_flow.py"
_ARRAY = "a tensor-array op (list-valued); tests/static/test_control_flow.py"
_JOIN = "+ of tensor arrays (list-valued); tests/d2s/semantics/test_tensor_array_concatenation.py"
_SPLIT = ("rt.split by a count or sections the program computes (array-valued, or parts "
          "sized when it runs); "
          "tests/d2s/breadth35/test_counter_sized_splits_and_pools.py")

OPINFOS: list = []
EXEMPT = {
    "cond": _FLOW, "while": _FLOW, "switch_case": _FLOW, "recompute": _FLOW,
    "write_persistable": "Tensor.set_value in static mode; tests/static/test_program.py",
    "create_array": _ARRAY, "array_write": _ARRAY, "array_read": _ARRAY,
    "array_length": _ARRAY, "array_stack": _ARRAY, "array_concat": _ARRAY,
    "array_slice": _ARRAY, "array_grad_read": _ARRAY, "array_grad_drop": _ARRAY,
    "array_grad_put": _ARRAY, "array_grad_add": _ARRAY, "array_unstack": _ARRAY,
    "array_split_like": _ARRAY, "array_slice_grad": _ARRAY,
    "array_delete": _ARRAY, "array_grad_insert": _ARRAY,
    "array_insert": _ARRAY, "array_grad_remove": _ARRAY, "array_grad_inserted": _ARRAY,
    "array_pack": _ARRAY, "array_fill_like": _ARRAY, "array_join": _JOIN, "array_grad_head": _JOIN,
    "array_grad_tail": _JOIN,
    "array_split": _SPLIT, "array_split_grad": _SPLIT, "split_sections": _SPLIT,
    "array_of_rows": ("x.tolist() of a 1-D value the run sizes (array-valued); "
                      "tests/d2s/breadth35/test_tolist_of_a_run_decided_length.py"),
    "print": "prints at run time; tests/static/test_control_flow.py",
    "py_print": "prints at run time; tests/static/test_control_flow.py",
    "py_format": "makes an f-string at run time; tests/d2s/observe_wild/test_fstrings_made_when_run.py",
    "py_warn": "warns at run time; tests/d2s/observe_wild/test_warnings_when_run.py",
    "py_log": "logs at run time; tests/d2s/observe_wild/test_logging_when_run.py",
    "grad_hook": "calls a register_hook hook at run time; tests/d2s/api/test_grad_hooks.py",
    "assert": "raises at run time; tests/static/test_control_flow.py",
    "checked_number": "a number converted code computes, checked as eager checks it (quantile's "
                      "q, norm's p); tests/d2s/breadth35/test_op_numbers_computed_by_the_program_2.py",
    "raise": "raises at run time; tests/d2s/semantics/test_raise.py",
    # `.grad` of an eager tensor, read and written when a converted training step runs
    "grad_read": "reads .grad at run time; tests/d2s/training/",
    "grad_expect_none": "raises at run time; tests/d2s/training/test_train_step_errors.py",
    "grad_accumulate": "adds to .grad at run time; tests/d2s/training/",
    "grad_write": "writes .grad at run time; tests/d2s/training/",
    "grad_clear": "clears .grad at run time; tests/d2s/training/",
    "grad_present": "whether .grad is set at run time; tests/d2s/training/test_step_untaken_branch.py",
    "backward_cut_check": "raises at run time; tests/d2s/training/test_detach_reach.py",
    "param_updated": "records an optimizer's updates at run time; "
                     "tests/d2s/training/test_step_under_tensor_if.py",
    "lr_schedule_step": "advances a scheduler at run time; "
                        "tests/d2s/training/test_step_under_tensor_if.py",
    "array_number_pairs": "[value, kind] pairs of Python numbers; "
                          "tests/d2s/observe_state/test_number_kinds_lists.py",
    "array_tensor_items": "[value, is_tensor] items of Python numbers and tensors; "
                          "tests/d2s/breadth35/test_mixed_number_and_tensor_lists.py",
    "array_tensors_as_items": "[value, is_tensor] items of Python numbers and tensors; "
                              "tests/d2s/breadth35/test_mixed_number_and_tensor_lists.py",
    "array_tensor_items_grad": "[value, is_tensor] items of Python numbers and tensors; "
                               "tests/d2s/breadth35/test_mixed_number_and_tensor_lists.py",
}
