"""A comprehension with more than one `for`, any of which may iterate a tensor array (a list
grown in a graph loop) or `range` of a tensor: each `for` is one `comp_map` into a shared
accumulator (`operators.predicates_comp.Comprehension`), as the nested statements

    out = []
    for a in arr:
        for b in other:
            out.append(a * b)

convert:

    [a * b for a in arr for b in other]
 -> _d2s.comp_list(lambda _acc: _d2s.comp_map(arr, lambda _item_1: [
        _d2s.comp_map(other, lambda _item_2: [_acc.add(a * b)
                                              for b in (_item_2,)], 'list', _acc)
        for a in (_item_1,)], 'list', _acc))

Over Python iterables each `comp_map` is the comprehension over them (the items in Python's
order); over a graph iterable it is a graph loop whose state is the list being built (a
tensor array). A later `for`'s iterable is evaluated where the earlier targets are bound, as
Python evaluates it. The `acc.keep` filter of an earlier `for` (a filtered comprehension,
`predicates.filtered_comprehension`) stays on that `for`.

A generator expression with more `for`s and no filter stays lazy where its first iterable is
a Python one (Python evaluates that one when it makes the generator); over a graph iterable
it is the nest (`operators.comp_arrays.comp_gen`).
"""
from __future__ import annotations

import copy

import gast

from ..pyct import templates
from ..pyct.naming import RESERVED


def _param(fn):
    fn.args.args[0].ctx = gast.Param()
    return fn


def nested(node, namer, acc):
    """The `comp_map` nest of the multi-`for` list comprehension `node`, whose element is
    already `acc.item(...)`; its value is the accumulator (the list is `acc.out`)."""
    body = node.elt
    for g in reversed(node.generators):
        item = namer.new("item")
        one = gast.ListComp(elt=body, generators=[gast.comprehension(
            target=g.target, iter=gast.Tuple(elts=[templates.name(item)], ctx=gast.Load()),
            ifs=g.ifs, is_async=0)])
        fn = _param(templates.replace_as_expression("lambda item: one", item=item, one=one))
        body = templates.replace_as_expression(f"{RESERVED}.comp_map(xs, fn, 'list', acc)",
                                               xs=g.iter, fn=fn, acc=acc)
    return body


def unfiltered(node, namer):
    """`[elt for ... for ...]` without filters as `_d2s.comp_list(lambda _acc: <nest>)`."""
    acc = namer.new("acc")
    # (the item itself, not a lambda: a name the comprehension binds must not look like a
    # read of the function's name to the analyses of loops around it)
    node.elt = templates.replace_as_expression("acc.add(elt)", acc=acc, elt=node.elt)
    build = _param(templates.replace_as_expression("lambda acc: nest", acc=acc,
                                                   nest=nested(node, namer,
                                                               templates.name(acc))))
    return templates.replace_as_expression(f"{RESERVED}.comp_list(build)", build=build)


def generator(node, namer):
    """`(elt for ... for ...)` without filters as `_d2s.comp_gen(xs, lambda _first: <the
    generator over _first>, lambda _first: <the nest over _first>)` (`xs`: its first
    iterable)."""
    first = namer.new("first")
    xs = node.generators[0].iter
    lazy_node = copy.deepcopy(node)
    lazy_node.generators[0].iter = templates.name(first)
    lazy = _param(templates.replace_as_expression("lambda first: gen", first=first,
                                                  gen=lazy_node))
    built = gast.ListComp(elt=node.elt, generators=node.generators)
    built.generators[0].iter = templates.name(first)
    eager = _param(templates.replace_as_expression("lambda first: built", first=first,
                                                   built=unfiltered(built, namer)))
    return templates.replace_as_expression(f"{RESERVED}.comp_gen(xs, lazy, eager)", xs=xs,
                                           lazy=lazy, eager=eager)
