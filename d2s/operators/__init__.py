"""What generated code calls, as `_d2s.<name>` (the only module generated code uses).

Each operator decides at trace time from the values it gets: a graph value (a `Variable` of
the program being traced) builds graph ops; anything else runs as plain Python, exactly as the
user wrote it. The generated-code API, by converter:

- ifelse: `ifelse(pred, true_fn, false_fn, args, names)`, `ifexp(pred, true_fn, false_fn)`
- loops: `while_loop(test, body, args, names)`, `for_loop(iterable, body, args, names,
  extra_test)`
- logical: `and_(a, *lazy)`, `or_(a, *lazy)`, `not_(x)`, `in_(x, c)`, `not_in(x, c)`,
  `eq_`, `ne_`, `is_none(x)`, `is_not_none(x)`, `type_is(t, C)`, `type_is_not(t, C)`
  (`type(v) is C`: `run_types`); in conditions `truth_and_`, `truth_or_`,
  `truth(x)`; `comp_filter(c)` (comprehension `if`)
- asserts: `assert_`, `raise_` (tensor-conditioned raises become run-time checks)
- try_except: `try_state`, `try_raise`, `try_ok`, `try_failed`, `try_caught`,
  `try_caught_error`, `try_error`, `try_handling`, `try_end`, `try_hold`, `try_reraise`,
  `try_forward` (run-time errors reach the `except` clauses)
- builtin_calls: `print_`, `len_`, `range_`, `enumerate_`, `zip_`, `max_`,
  `min_`, `all_`, `any_`, `sum_`, `reversed_`, `list_`, `tuple_`, `bool_`, `int_`, `float_`,
  `round_`, `divmod_`, `isinstance_`, `list_query`, `zip_star`, `dict_get`,
  `dict_setdefault`, `shape`, `size`, `tensor_attribute(x, name)`, `set_tensor_name`,
  `id_`, `hash_`;
  `set_item(value, obj, key)`
  (`obj[key] = value`: a dict given a key the program computed, `computed_keys`);
  `get_item(obj, key)`, `aug_item(aug_read(obj, key), op, value)` (`d[k]`, `d[k] += v` of
  a name bound to a dict; the item read before the right side, as Python does);
  `set_flag(value, obj, name)` (`p.stop_gradient = v`: replayed per call, `tensor_flags`)
- lists: `list_append(lst, x)`, `list_pop(lst, *i)`, `list_method(lst, name, *args)`,
  `dict_changed(d, call)`; `del_item(obj, key)` (`del obj[key]`: a dict key on some paths
  only raises eager's KeyError where it is absent, `key_flags`)
- subscripts: `getitem_(obj, i)` (`LABELS[int(t)]`: a Python table indexed by a number the
  program computes, `python_picks`)
- call_trees: `call(f)` (converts user functions at trace time), `call_item(obj, i)`
  (`layers[i](x)`: a tensor `i` is a `switch_case` over the layers)
- state helpers: `Undefined(name)`, `attr(obj, name)`
- functions called in a `try` body: `try_collect`, `fn_state`, `fn_exit`; comprehension
  filters: `comp_list`, `comp_iter`; `and`/`or` values computed by statements: `chain_value`
"""
from .calls import call  # noqa: F401
from .print_values import format_text, formatted, fstring, percent_text  # noqa: F401
from .builtins import (  # noqa: F401
    all_,
    any_,
    assert_,
    bool_,
    divmod_,
    enumerate_,
    float_,
    frozenset_,
    int_,
    isinstance_,
    len_,
    list_,
    list_query,
    max_,
    min_,
    sum_,
    print_,
    round_,
    range_,
    reversed_,
    set_,
    shape,
    size,
    sorted_,
    tuple_,
    zip_,
)
from .none_or_tensor import printing as _printing

print_ = _printing(print_)  # (a value None on some runs prints None there)
from .exceptions import raise_  # noqa: F401
from .computed_keys import (  # noqa: F401
    aug_item, aug_read, dict_display, dict_setdefault, get_item, set_item)
from .tensor_flags import set_flag  # noqa: F401
from .identity_calls import hash_, id_  # noqa: F401
from .made_sets import made_set, set_op, type_, unbound_set_method  # noqa: F401
from .type_queries import hasattr_, typing as _typing  # noqa: F401
from .run_types import type_is, type_is_not  # noqa: F401
from .attribute_reads import attrgetter_, getattr_, vars_  # noqa: F401
from .container_types import typing as _containers

type_ = _containers(_typing(type_))  # (eager's class of a graph value, of a tensor array)
from .set_algebra import set_items  # noqa: F401
from .block_values import Guarded, Pending  # noqa: F401
from .control_flow import ifelse, ifexp  # noqa: F401
from . import logical as _logical
_logical.STR_IF[:] = [ifexp]  # (`label or "none"` of a str the run chooses: `logical.or_`)
from .loops import for_loop, while_loop  # noqa: F401
from .lists import dict_changed, list_append, list_method, list_pop  # noqa: F401
from .key_flags import del_item  # noqa: F401
from .switch import call_item  # noqa: F401
from .python_picks import getitem_  # noqa: F401
from .text import format_, percent, raise_made, repr_, str_, text  # noqa: F401
from .math_calls import math_  # noqa: F401
from .numpy_calls import numpy_  # noqa: F401
from .list_slices import slice_  # noqa: F401
from .tensor_attributes import set_tensor_name, tensor_attribute  # noqa: F401
from ..errors import ConversionError  # noqa: F401  (`except`: never the user's clauses)
from .try_except import (  # noqa: F401
    fn_exit,
    fn_state,
    try_caught,
    try_collect,
    try_end,
    try_caught_error,
    try_error,
    try_failed,
    try_forward,
    try_guard,
    try_handling,
    try_hold,
    try_ok,
    try_raise,
    try_reraise,
    try_state,
    try_uncaught,
)
from .sequence_order import seq_order  # noqa: F401
from .logical import (  # noqa: F401
    and_,
    chain_value,
    comp_filter,
    eq_,
    in_,
    is_none,
    is_not_none,
    not_,
    ne_,
    not_in,
    or_,
    truth,
    truth_and_,
    truth_or_,
)
from .predicates_comp import comp_iter, comp_list  # noqa: F401
from .comp_arrays import comp_gen, comp_map, dict_comp  # noqa: F401
from .struct_columns import zip_star  # noqa: F401
from .key_flags import dict_get  # noqa: F401
from .variables import Undefined, UndefinedNameError, attr  # noqa: F401


def _register() -> None:
    import sys

    from .. import transpile
    transpile.use_operators(sys.modules[__name__])


_register()
