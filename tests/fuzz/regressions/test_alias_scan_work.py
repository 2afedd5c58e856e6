"""The alias check of a list that may become a tensor array (`aliases.other_references`)
scans the heap only for referrers it cannot account for. The collector is paused while
tracing, so every branch traced used to leave frames and snapshots that referred to the list:
each later check judged more of them, with heap scans (12,273 `gc.get_referrers` calls and
90 s for the function below, found as a fuzz campaign's hang). The check now frees that
garbage first. Each scan walks the whole heap (a user's heap of a million objects made it
seconds a trace), so the check scans for all the objects of one level at once: 180 scans for
this function when each object had its own, 72 now. Counted in heap scans, not seconds."""
import gc
import pathlib

from .. import gen_state, runner

CASE = pathlib.Path(__file__).parent / "growing" / "trace_left_garbage_alias_scan.txt"


def test_alias_checks_of_a_many_branch_trace_scan_the_heap_a_bounded_number_of_times(
        monkeypatch):
    calls = []
    real = gc.get_referrers

    def counted(*objs):
        calls.append(len(objs))
        return real(*objs)

    monkeypatch.setattr(gc, "get_referrers", counted)
    out = runner.compare_saved(CASE, gen_state.make_box)
    assert out.kind == "same", str(out)
    assert 0 < len(calls) < 120, len(calls)
