"""Set algebra of sets holding computed values where the converter cannot see an operand is a
set (a helper's parameter, `self.a & self.b`, a set held in a dict or returned by a helper,
`sorted(s1 ^ s2)`, a global frozenset on the left, `[s1] == [s2]`, a method through an
alias): Python's operator would compare the trace's objects, silently (`len(seen & KNOWN)`
one lower). Sets converted code makes refuse it at the user's line (`operators.made_sets`);
sets of Python values keep eager's values and types, also where they leave the call."""
import numpy as np
import pytest

import d2s
import runtime as rt
from d2s.errors import ConversionError

KNOWN = {(0, 1), (1, 1)}
FROZEN = frozenset(KNOWN)
ONE = {(1, 1)}


def _pairs(a):
    seen = set()
    seen.add((int(a[0] > 0), 1))
    return seen


def _count_common(seen):
    return len(seen & KNOWN)


def helper_parameter(a):
    seen = _pairs(a)
    seen.add((0, 1))
    return a + _count_common(seen)


def held_in_dict(a):
    state = {"seen": _pairs(a), "steps": 0}
    return a + len(ONE - state["seen"])


def returned_by_helper(a):
    return a + float(_pairs(a) <= ONE)


def frozen_on_the_left(a):
    common = FROZEN & _pairs(a)
    return a + len(common)


def plain_on_the_left(a):
    return a + len(KNOWN - _pairs(a))


def in_a_list(a):
    sets = [_pairs(a), {(1, 1)}]
    return a + float(sets[0] <= sets[1])


def lists_compared(a):
    return a + float([_pairs(a)] == [{(1, 1)}])


def unbound_method(a):
    common = set.intersection(_pairs(a), KNOWN)
    return a + len(common)


def union_then_helper(a):
    grown = KNOWN.union(_pairs(a))
    return a + _count_common(grown)


def frozen_union_then_helper(a):
    grown = FROZEN | _pairs(a)
    return a + _count_common(grown)


def frozen_in_a_set(a):
    groups = {frozenset({(1, 1)})}
    return a + float(frozenset(_pairs(a)) in groups)


class PairTracker(rt.nn.Layer):
    def forward(self, a):
        self.cur = _pairs(a)
        self.ref = {(1, 1)}
        return a + len(self.cur & self.ref)


CASES = [helper_parameter, held_in_dict, returned_by_helper, frozen_on_the_left,
         plain_on_the_left, in_a_list, lists_compared, unbound_method, union_then_helper,
         frozen_union_then_helper, frozen_in_a_set]
LINES = {helper_parameter: "return len(seen & KNOWN)", held_in_dict: 'ONE - state["seen"]',
         returned_by_helper: "_pairs(a) <= ONE", frozen_on_the_left: "FROZEN & _pairs(a)",
         plain_on_the_left: "KNOWN - _pairs(a)", in_a_list: "sets[0] <= sets[1]",
         lists_compared: "[_pairs(a)] == [{(1, 1)}]",
         unbound_method: "set.intersection(_pairs(a), KNOWN)",
         union_then_helper: "return len(seen & KNOWN)",
         frozen_union_then_helper: "return len(seen & KNOWN)",
         frozen_in_a_set: "frozenset(_pairs(a)) in groups"}


def _x(v):
    return rt.to_tensor(np.array([v], "float32"))


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_refused_at_the_users_line(fn):
    eager = [float(fn(_x(v)).numpy()[0]) for v in (1.0, -1.0)]
    assert len(set(eager)) == 2 or fn in (frozen_in_a_set,)  # (the inputs take both paths)
    with pytest.raises(ConversionError) as e:
        d2s.to_static(fn)(_x(1.0))
    msg = str(e.value)
    assert __file__ in msg and LINES[fn] in msg, msg
    assert "holding a value computed by the converted code" in msg
    assert "with `in`" in msg or "in a tensor" in msg  # (what to write instead)
    for internal in ("_retval", "Variable(%", "<undefined", "MadeSet", "MadeFrozenSet"):
        assert internal not in msg


def test_attributes_set_in_the_call():
    layer = PairTracker()
    assert float(layer(_x(1.0)).numpy()[0]) == 2.0  # (eager: {(1, 1)} & {(1, 1)})
    with pytest.raises(ConversionError, match=r"self\.cur & self\.ref"):
        d2s.to_static(layer)(_x(1.0))


def plain_algebra(a, tags):
    base = {1, 2, 3}
    extra = set(tags)
    common = base & extra
    both = frozenset(common) | {9}
    groups = {frozenset({1}), both}
    order = sorted(base ^ extra)
    return (a * len(common), base - extra, both, type(base), type(both), base <= extra | base,
            [base, common], {"g": groups}, order, frozenset({2}) in groups, str(common))


def _leaves(out):
    return [(type(v), v) for v in out[1:]]


@pytest.mark.parametrize("tags", [(1, 5), (2, 3, 4)])
def test_plain_sets_keep_eagers_values_and_types(tags):
    static = d2s.to_static(plain_algebra)
    eager, got = plain_algebra(_x(1.0), tags), static(_x(1.0), tags)
    np.testing.assert_array_equal(eager[0].numpy(), got[0].numpy())
    assert _leaves(eager) == _leaves(got)
    assert [type(s) for s in got[6]] == [set, set] and type(got[2]) is frozenset
    assert {type(g) for g in got[7]["g"]} == {frozenset}
    again = static(_x(1.0), tags)  # (the program's second call: the same types)
    assert _leaves(again) == _leaves(eager)


class Vocab(rt.nn.Layer):
    """Sets of Python values kept on the layer: plain sets after each call, as eager."""

    def forward(self, a, names):
        self.seen_names = set(names) | {"<pad>"}
        self.frozen = frozenset(self.seen_names)
        return a + len(self.seen_names & {"<pad>", "cat"}), self.seen_names


def test_sets_stored_on_self_are_plain():
    eager, static = Vocab(), Vocab()
    conv = d2s.to_static(static)
    for names in (("cat", "dog"), ("cat", "dog")):
        (want, names_e), (got, names_s) = eager(_x(1.0), names), conv(_x(1.0), names)
        np.testing.assert_array_equal(want.numpy(), got.numpy())
        assert names_e is eager.seen_names and names_s is static.seen_names  # (one object)
        assert type(static.seen_names) is set and type(static.frozen) is frozenset
        assert static.seen_names == eager.seen_names and static.frozen == eager.frozen


def membership_still_converts(a):
    seen = _pairs(a)
    hits = sum(p in seen for p in KNOWN)  # (what the refusals advise)
    return a + hits


def test_membership_of_a_made_set_follows_the_run():
    static = d2s.to_static(membership_still_converts)
    for v, want in ((1.0, 2.0), (-1.0, 0.0), (3.0, 4.0)):
        assert float(static(_x(v)).numpy()[0]) == want
        assert float(membership_still_converts(_x(v)).numpy()[0]) == want


class Record:
    pass


class Tagger(rt.nn.Layer):
    """Sets put on an argument, in a list the caller passed, and on an object the call made."""

    def forward(self, a, cfg, log):
        cfg.tags = frozenset({"train"})
        log.append({int(len(log))})
        rec = Record()
        rec.ids = {1, 2}
        self.last = rec
        return a * 2


def test_sets_on_arguments_and_new_objects_are_plain():
    eager, static = Tagger(), Tagger()
    conv = d2s.to_static(static)
    log_e, log_s = [], []
    for _ in range(2):
        cfg_e, cfg_s = Record(), Record()
        eager(_x(1.0), cfg_e, log_e)
        conv(_x(1.0), cfg_s, log_s)
        assert (type(cfg_s.tags), cfg_s.tags) == (type(cfg_e.tags), cfg_e.tags)
        assert [type(s) for s in log_s] == [type(s) for s in log_e] and log_s == log_e
        assert (type(static.last.ids), static.last.ids) == (set, eager.last.ids)
