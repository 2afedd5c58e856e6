"""Changes one static program cannot represent raise d2s.ConversionError at the user's line,
saying what changed and what to write instead, with no internal names."""
import re

import pytest

import d2s
import runtime as rt

from .helpers import t

INTERNAL = re.compile(r"\b(t\d+|_retval\w*|_if_true_\d+|_loop_body_\d+)\b")


def _refused(fn, *args, error=d2s.ConversionError):
    with pytest.raises(error) as info:
        d2s.to_static(fn)(*args)
    msg = str(info.value)
    assert not INTERNAL.search(msg), msg
    assert __file__ in msg or "line" in msg
    return msg


def key_in_one_branch(x):
    d = {"a": x}
    if rt.mean(x) > 0:
        d["b"] = x * 2.0
    return d["a"]


def key_in_one_branch_of_a_passed_dict(x, d):
    if rt.mean(x) > 0:
        d["b"] = x * 2.0
    return d["a"]


def test_dict_key_set_in_one_branch():
    # a local dict converts (the key gets a presence flag, `branch_keys`); so does one the
    # caller holds: after each call it has the key where the run took the branch
    sf = d2s.to_static(key_in_one_branch)
    for v in ([1.0], [-1.0]):
        assert sf(t(v)).tolist() == key_in_one_branch(t(v)).tolist() == v
    sp = d2s.to_static(key_in_one_branch_of_a_passed_dict)
    de, ds = {"a": t([1.0])}, {"a": t([1.0])}
    for v in ([-1.0], [1.0], [-2.0], [3.0]):
        key_in_one_branch_of_a_passed_dict(t(v), de)
        sp(t(v), ds)
        assert {k: x.tolist() for k, x in ds.items()} == {k: x.tolist() for k, x in de.items()}


def aliased_list_lengths(x):
    items = [x]
    seen = items
    if rt.mean(x) > 0:
        items.append(x * 2.0)
    return rt.stack(seen).sum()


def test_aliased_list_length_depending_on_a_tensor_if():
    # `items` would become a tensor array; `seen` would keep the old list (eager: the same)
    msg = _refused(aliased_list_lengths, t([1.0]))
    assert "the list 'items' has a length that depends on a tensor condition" in msg
    assert "reachable as the local name 'seen'" in msg


def aliased_in_loop(x, n):
    outs = [x]
    keep = outs
    i = 0
    while i < n:
        outs.append(x * 2.0)
        i += 1
    return rt.stack(keep).sum()


def test_aliased_list_grown_in_a_graph_loop():
    # was a silent wrong result: `keep` stayed the one-element list
    msg = _refused(aliased_in_loop, t([1.0]), t(3.0))
    assert "the list 'outs' is appended to in a loop whose condition is a tensor" in msg
    assert "reachable as the local name 'keep'" in msg


class Holder:
    pass


def attr_in_one_branch(x, o):
    if rt.mean(x) > 0:
        o.extra = x
    return x + 1.0


def test_attribute_first_set_in_one_branch():
    # an attribute of an object that outlives the call, set on one path only: one program
    # cannot leave it absent on the other
    msg = _refused(attr_in_one_branch, t([1.0]), Holder())
    assert "o.extra is set in the if branch only" in msg


def grow_through_helper(x):
    log = []
    box = {"log": log}            # another reference (a container): it would miss appends

    def rec(v):
        log.append(v)

    i = rt.zeros([])
    while i < rt.sum(x):
        rec(x)
        i = i + 1.0
    return x + len(box["log"])


def test_list_grown_through_a_closure_and_held_elsewhere_in_a_tensor_while():
    # (held by the closure variable only, it becomes a tensor array: test_array_helpers.py)
    msg = _refused(grow_through_helper, t([2.0]))
    assert "the list log changes length inside a loop whose condition is a tensor" in msg
    assert "also reachable as a dict holding it" in msg


def returns_differ(x):
    out = [x]
    if rt.mean(x) > 0:
        return out + [x]
    return out


def test_returned_list_length_depending_on_a_tensor_if():
    # the returned list is a tensor array: it comes back as a list of Tensors
    sf = d2s.to_static(returns_differ)
    for v in ([1.0], [-1.0]):
        got, want = sf(t(v)), returns_differ(t(v))
        assert [g.numpy().tolist() for g in got] == [w.numpy().tolist() for w in want]


def returns_kinds_differ(x):
    if rt.mean(x) > 0:
        return x, x
    return x


def test_returned_structure_depending_on_a_tensor_if():
    msg = _refused(returns_kinds_differ, t([1.0]))
    assert "the returned value has a different structure" in msg


def returns_grown_list(x):
    items = [x]
    if rt.mean(x) > 0:
        items.append(x * 2.0)
    return items


def test_returning_a_list_that_became_a_tensor_array_gives_a_list_of_tensors():
    sf = d2s.to_static(returns_grown_list)
    for v in ([1.0], [-1.0]):
        got, want = sf(t(v)), returns_grown_list(t(v))
        assert type(got) is list and len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            assert a.numpy().tolist() == b.numpy().tolist()
    assert len(sf.program_cache) == 1


def pairs_mixed_in_graph_loop(x, n):
    pairs = []
    i = 0
    while i < n:
        pairs.append((x * i, x + i))
        pairs.append((x * i,))       # another structure: one array per part cannot hold it
        i += 1
    return pairs[0][0]


def test_list_items_of_two_structures_whose_length_depends_on_a_tensor():
    # (a list of tuples of one structure is a tensor array per part: test_array_structs.py)
    msg = _refused(pairs_mixed_in_graph_loop, t([1.0]), t(2))
    assert "a tuple of another structure is appended to a list whose length depends" in msg
