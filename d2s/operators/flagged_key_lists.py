"""`sorted(d)`, `list(d)`, `tuple(d)` (also of `d.keys()`; `list(d.values())`) of a dict whose keys a tensor `if`
set on some paths only (`key_flags`): eager code has the keys present on this run, so the
result is a list of the keys whose length the run decides, each key appended under its
presence flag as `if flag: out.append(k)` converts (a tensor array of the keys: of str ids
for strs, `str_arrays`). `len`, `in`, `==` of its items, iteration and returning it follow the
run (the call gives the list of keys). Keys of other types than one of str or int keep the
refusal (`key_flags.refuse_iteration`). `sum(d.values())` adds each value under its key's
presence flag, as a `for` over the values converts (`loops._over_flagged_keys`)."""
from __future__ import annotations

import runtime as rt
from runtime.core import is_tensor
from runtime.ops import combine

from .control_flow import ifelse
from .key_flags import check_order, flagged_items, flags_of, refuse_iteration
from .lists import list_append
from .loop_initial import python_items
from .str_arrays import empty_str_array
from .variables import is_variable

_KEYS, _VALUES = type({}.keys()), type({}.values())


def key_list(x, what: str, sort: bool = False):
    """The keys of `x` (a dict or its keys view) present on this run, as a list the run sizes
    (sorted where `sort`); None where `x` is no such dict."""
    if type(x) is _VALUES and not sort:
        return _values_list(x, what)
    mapping = x if type(x) is dict else x.mapping if type(x) is _KEYS else None
    flags = flags_of(mapping) if mapping is not None else {}
    if not flags or len({type(k) for k in mapping}) != 1 or type(next(iter(mapping))) not in (
            str, int):
        return None
    if not sort:
        check_order(mapping, what)  # (the keys' order, where the run decides it: refused)
    out = empty_str_array() if type(next(iter(mapping))) is str else python_items(
        rt.static.create_array("int64"))
    keys = sorted(mapping) if sort else list(mapping)
    return _appended(out, [(k, flags.get(k)) for k in keys])


def _values_list(x, what: str):
    """`list(d.values())` of such a dict: its values present on this run (a tensor array,
    where they are tensors of one dtype and rank)."""
    items = flagged_items(x)
    if items is None or not all(is_variable(v) or is_tensor(v) for v, _ in items) or len(
            {(str(v.dtype), tuple(v.shape)) for v, _ in items}) != 1:
        return None  # (refused where read: `key_flags.refuse_iteration`)
    check_order(x.mapping, what)
    first = items[0][0]
    out = rt.static.create_array(first.dtype)
    out._static_shape = tuple(first.shape)
    return _appended(out, items)


def joined(x, how: str):
    """What `rt.stack(d.values())` / `rt.concat(...)` joins (`combine.SEQUENCE_READS`): of a
    dict whose keys exist on some paths only, its values present on this run (a tensor array);
    refused at the user's line where they differ in dtype or rank."""
    if type(x) is not _VALUES or not flags_of(x.mapping):
        return x
    values = _values_list(x, f"rt.{how}()")
    if values is None:
        refuse_iteration(x, f"rt.{how}()")
    return values


combine.SEQUENCE_READS.append(joined)


def _appended(out, items: list):
    """`out` with each item appended, under its flag where it has one."""
    for item, flag in items:
        if flag is None:
            out = list_append(out, item)
            continue

        def present(out, item=item):
            return (list_append(out, item),)

        def absent(out):
            return (out,)
        (out,) = ifelse(flag, present, absent, (out,), ("out",))
    return out


def values_sum(x, start):
    """`sum(d.values(), start)` of such a dict: the values present on this run added in
    order to `start` (a number on the runs where none is present, `number_or_tensor`); None
    where `x` is no such view."""
    items = flagged_items(x) if type(x) is _VALUES else None
    if items is None:
        return None
    total = start
    for value, flag in items:
        if flag is None:
            total = total + value
            continue

        def present(total, value=value):
            return (total + value,)

        def absent(total):
            return (total,)
        (total,) = ifelse(flag, present, absent, (total,), ("total",))
    return total
