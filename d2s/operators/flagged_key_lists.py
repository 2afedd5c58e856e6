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

from . import key_ranks
from .control_flow import ifelse
from .key_flags import check_order, flagged_items, flags_of, refuse_iteration
from .lists import list_append
from .loop_initial import python_items
from .str_arrays import empty_str_array
from .variables import is_variable

_KEYS, _VALUES = type({}.keys()), type({}.values())


def key_list(x, what: str, sort: bool = False):
    """The keys of `x` (a dict or its keys view) present on this run, as a list the run sizes
    (sorted where `sort`), in the order of the run (`key_ranks`); None where `x` is no such
    dict."""
    if type(x) is _VALUES and not sort:
        return _values_list(x, what)
    mapping = x if type(x) is dict else x.mapping if type(x) is _KEYS else None
    flags = flags_of(mapping) if mapping is not None else {}
    ranks = None if sort else _ranks(mapping, what)
    if not (flags or ranks) or len({type(k) for k in mapping}) != 1 or type(
            next(iter(mapping))) not in (str, int):
        return None
    if not sort and ranks is None:
        check_order(mapping, what)  # (the keys' order, where the run decides it: refused)
    out = empty_str_array() if type(next(iter(mapping))) is str else python_items(
        rt.static.create_array("int64"))
    keys = sorted(mapping) if sort else list(mapping)
    return _in_run_order(out, {k: (k, flags.get(k)) for k in keys}, ranks, mapping, what)


def _ranks(mapping, what: str):
    """The ranks of the keys of `mapping` where the run decides their order (`key_ranks`),
    else None."""
    if mapping is None:
        return None
    ranks = key_ranks.ranks_of(mapping)
    return ranks if ranks is not None and check_order(mapping, what, ranks=ranks) else None


def _values_list(x, what: str):
    """`list(d.values())` of such a dict: its values present on this run (a tensor array,
    where they are tensors of one dtype and rank), in the order of the run."""
    ranks = _ranks(x.mapping, what)
    items = flagged_items(x)
    if items is None and ranks is not None:
        items = [(v, None) for v in x]
    if items is None or not all(is_variable(v) or is_tensor(v) for v, _ in items) or len(
            {(str(v.dtype), tuple(v.shape)) for v, _ in items}) != 1:
        return None  # (refused where read: `key_flags.refuse_iteration`)
    if ranks is None:
        check_order(x.mapping, what)
    first = items[0][0]
    out = rt.static.create_array(first.dtype)
    out._static_shape = tuple(first.shape)
    return _in_run_order(out, dict(zip(x.mapping, items, strict=True)), ranks, x.mapping,
                         what)


def _in_run_order(out, items: dict, ranks, mapping, what: str):
    """`out` with the `items` (key -> (item, its flag)) appended in the keys' order on this
    run: as they are without `ranks`; else each order the ranks may give in a branch, the run
    taking the one its ranks hold (`key_ranks.holds`)."""
    if ranks is None:
        return _appended(out, list(items.values()))
    orders = key_ranks.orders(ranks)
    if orders is None:
        check_order(mapping, what)  # (refused: too many orders)

    def run(i, out):
        ordered = [items[k] for k in orders[i]]
        if i == len(orders) - 1:
            return _appended(out, ordered)
        (out,) = ifelse(key_ranks.holds(ranks, orders[i]),
                        lambda out: (_appended(out, ordered),),
                        lambda out: (run(i + 1, out),), (out,), ("out",))
        return out
    return run(0, out)


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
