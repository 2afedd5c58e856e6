"""A comprehension over a list that is a tensor array (grown in a graph loop).

    [f(h) for h in hs]   ->   _d2s.comp_map(hs, lambda _item_1: [f(h) for h in (_item_1,)][0],
                                            'list')

(`d2s.converters.lists`). Over a Python iterable it is the comprehension itself (a list, or a
generator for a generator expression). Over a tensor array (or a list of tuples / dicts as
tensor arrays, `StructArray`, or `range` of a tensor) it is one graph loop, exactly as the statement

    out = []
    for h in hs:
        out.append(f(h))

converts (also over a tensor whose first dim is known only when the program runs, as a
`for` over it is a graph loop): the result is a tensor array of the items (`rt.stack`, `len`,
indexing, `sum`, iteration read it; returned, it is the list of Tensors eager code returns). A filtered one
(`[f(h) for h in hs if h.sum() > 0]`) appends under a graph `if` in that loop; one with more
`for`s is a nest of `comp_map`s appending to one accumulator (`converters.nested_comps`).
Over a set holding values the converted code computed it is refused (an item per item:
`traced_keys.check_unique`).
"""
from __future__ import annotations

from . import key_ranks
from .computed_keys import set_item
from .key_flags import check_order, flags_of, refuse_iteration
from .lists import StructArray, list_append
from .set_algebra import set_items
from .loops import TensorEnumerate, TensorRange, TensorZip, for_loop
from .traced_keys import check_unique
from .variables import is_variable

# what only a graph loop iterates: lists as tensor arrays, and `range`, `enumerate` and
# `zip` over a length known when the program runs (`range(n)` of a tensor `n`)
GRAPH_ITERABLES = (StructArray, TensorRange, TensorEnumerate, TensorZip)


def _graph_iterable(xs) -> bool:
    """Whether only a graph loop iterates `xs`: a tensor array (or `GRAPH_ITERABLES`), or a
    tensor whose first dim is known only when the program runs (`rt.nonzero(m)`, a slice
    by a loop counter)."""
    if isinstance(xs, GRAPH_ITERABLES):
        return True
    return is_variable(xs) and (xs.is_array or bool(xs.ndim) and xs.shape[0] < 0)


def comp_map(xs, fn, kind: str, acc=None):
    """`acc`: the list a filtered comprehension builds (`predicates_comp.Comprehension`),
    where `fn(item)` appends to it under the item's condition instead of giving the item;
    over a tensor array it is the graph loop's state."""
    if _graph_iterable(xs):
        return _graph_comp(xs, fn, acc)
    if _run_decided(xs):  # (a dict whose keys, or their order, the run decides: as a `for`
        out = _graph_comp(xs, fn, acc)  # statement over it converts)
        return iter(out) if kind == "gen" and isinstance(out, list) else out
    refuse_iteration(xs)  # (a dict with a key a tensor `if` set on one path)
    check_unique(xs, "a comprehension over the items")  # (a set of computed values)
    if kind == "gen":
        return (fn(x) for x in xs)
    return [fn(x) for x in xs]


_VIEWS = (dict, type({}.keys()), type({}.values()), type({}.items()))


def _run_decided(xs) -> bool:
    """Whether `xs` is a dict (or view) with keys on some paths only (`key_flags`) or keys
    whose order the run decides (`key_ranks`; refused where not known)."""
    if not isinstance(xs, _VIEWS):
        return False
    mapping = getattr(xs, "mapping", xs)
    return check_order(mapping, "a comprehension", ranks=key_ranks.ranks_of(mapping)) or \
        bool(flags_of(mapping))


def _graph_comp(xs, fn, acc):
    """`[fn(x) for x in xs]` as the statement `for x in xs: out.append(fn(x))` converts
    (`loops.for_loop`): over a tensor array, or a dict (or view) whose keys the run decides
    (each key's item under its presence flag, in the order of the run); a list the run
    sizes."""
    if acc is None:
        return for_loop(xs, lambda item, out: list_append(out, fn(item)), ([],),
                        ("comprehension",))

    def body(item, out):
        acc.out = out
        fn(item)
        return acc.out
    acc.out = for_loop(xs, body, (acc.out,), ("comprehension",))
    return acc


def dict_comp(xs, fn):
    """`{k: v for x in xs}` (`fn(x)`: the pair): over a dict (or view) whose keys the run
    decides, as the statement `for x in xs: out[k] = v` converts (each key's pair under its
    presence flag, in the order of the run); else the comprehension itself."""
    if _run_decided(xs):
        def body(item, out):
            key, value = fn(item)
            set_item(value, out, key)
            return out
        return for_loop(xs, body, ({},), ("comprehension",))
    set_items(xs, "a comprehension")
    return {k: v for k, v in map(fn, xs)}


def comp_gen(xs, lazy, eager):
    """A generator expression with more than one `for` and no filter, whose first iterable
    is `xs` (`converters.nested_comps.generator`): Python's lazy generator over a Python
    iterable; over a graph iterable the items built in graph loops (`eager(xs)`: a Python
    list, iterated, or the tensor array itself, which `sum`, `rt.stack`, ... take)."""
    if _graph_iterable(xs):
        out = eager(xs)
        return iter(out) if isinstance(out, list) else out
    return lazy(xs)
