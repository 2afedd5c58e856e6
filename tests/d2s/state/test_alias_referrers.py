"""The heap scans of the alias check (`aliases._Referrers`): one `gc.get_referrers` pass for
many objects gives each object the referrers a scan of its own gives (the check's own lists
left out), so the check pays one pass over the heap per level it looks up, not one per
object it judges."""
import gc

from d2s.operators.aliases import _Referrers


def closing_over(value):
    def read():
        return value
    return read


def test_one_scan_gives_each_object_its_own_referrers(monkeypatch):
    calls = []
    real = gc.get_referrers

    def counted(*objs):
        calls.append(len(objs))
        return real(*objs)

    monkeypatch.setattr(gc, "get_referrers", counted)
    grown, other = [1.0], [2.0]
    by_key = {"outs": grown}
    pair = (grown, other)
    nested = [other]
    read = closing_over(grown)
    heap = _Referrers()
    heap.up([grown, other], 1, set())
    assert calls == [3]  # both objects and the mark of the call's own argument tuple
    # (a running frame's locals are not visible to the collector: no frame here)
    want = {id(grown): {id(by_key), id(pair), id(read.__closure__[0])},
            id(other): {id(pair), id(nested)}}
    for x in (grown, other):
        got = {id(h) for h in heap.of(x)}
        assert got == want[id(x)], [type(h).__name__ for h in heap.of(x)]
    assert calls == [3]  # (answered from the scan)


def test_the_scans_lists_are_not_referrers_and_levels_stop_where_nothing_is_held():
    grown = [0.5]
    inner = (grown,)
    outer = [inner]
    heap = _Referrers()
    heap.up([grown], 5, set())
    assert [type(h) for h in heap.of(inner)] == [list]
    assert heap.of(inner)[0] is outer
    assert all(not heap.owns(h) for h in heap.of(grown))
    heap.forget()
    assert not heap.owns(outer)
