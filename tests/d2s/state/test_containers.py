"""Containers changed in place at any depth, through methods and closures."""
import numpy as np

import runtime as rt

from .helpers import check

POS, NEG = ([1.0, 2.0],), ([-1.0, -3.0],)


def nested_dict_under_if(x):
    cache = {"l0": {"k": x, "v": x * 0.0}}
    if rt.mean(x) > 0:
        cache["l0"]["k"] = x * 2.0
    else:
        cache["l0"]["v"] = x + 1.0
    return cache["l0"]["k"] + cache["l0"]["v"]


def ref_nested_dict_under_if(x):
    return x * 2.0 if x.mean() > 0 else x + x + 1.0


def test_nested_dict_item_under_tensor_if():
    check(nested_dict_under_if, ref_nested_dict_under_if, [POS, NEG])


def dict_methods_in_loop(x):
    d = {"a": x, "b": x * 0.0}
    i = rt.zeros([])
    while i < rt.sum(rt.abs(x)):
        d.update({"a": d["a"] + 1.0})
        d.setdefault("b", x)
        d["b"] = d["b"] + d.pop("a") * 0.5
        d["a"] = x
        i = i + 1.0
    return d["b"]


def ref_dict_methods_in_loop(x):
    b = np.zeros_like(x)
    i = 0.0
    while i < np.abs(x).sum():
        b = b + (x + 1.0) * 0.5
        i += 1.0
    return b


def test_dict_update_setdefault_pop_in_tensor_while():
    check(dict_methods_in_loop, ref_dict_methods_in_loop, [POS, NEG, ([0.2, 0.3],)])


def closure_log(x):
    log = [x * 0.0]

    def record(v):
        log.append(v)

    if rt.mean(x) > 0:
        record(x)
    else:
        record(x * 2.0)
    return log[-1] + log[0]


def ref_closure_log(x):
    return x if x.mean() > 0 else 2.0 * x


def test_a_closure_appends_to_a_list_in_both_branches():
    check(closure_log, ref_closure_log, [POS, NEG])


def list_items_through_alias(x):
    xs = [x, x * 2.0]
    same = xs
    if rt.sum(x) > 0:
        same[0] = same[0] + same[1]
    return xs[0]


def test_list_item_set_through_an_alias():
    check(list_items_through_alias, lambda x: 3.0 * x if x.sum() > 0 else x, [POS, NEG])
