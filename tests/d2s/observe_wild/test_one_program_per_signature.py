"""Python state a training step changes on objects it is given (a counter, a flag, a history
of losses, a log dict, a set of seen keys, the state of a trainer kept in a `SimpleNamespace`),
called again and again with one input signature: the state after each call and every result
are eager's, and one program serves every call (`static.program_cache.traces`), also when the
history gets computed numbers (`loss.item()`, a tensor) beside Python values, under a tensor
`if` and in a graph loop. A list only appended to is not guarded by what it holds: after each
call the items are appended again, the computed ones from the program's outputs.

Where the result depends on such state (`x * len(hist)`), a call traces again, as it must.
Also: one Tensor held in two places, the step rebinding one of them after reading the other,
leaves the other place's Tensor as eager code does."""
import argparse
import collections
import types

import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import assert_same_leaves

INPUTS = [[1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [1.0, 2.0], [-2.0, 1.0], [0.5, 0.5]]


class Trainer:
    def __init__(self):
        self.calls = 0
        self.history = []
        self.log = {"steps": 0, "losses": []}
        self.seen = set()
        self.state = types.SimpleNamespace(warm=False, history=[], best=None)
        self.args = argparse.Namespace(every=2, notes=[])


def counters_and_flags(x, tr):
    tr.calls += 1
    tr.state.warm = True
    tr.log["steps"] += 1
    tr.seen.add("step")
    return x * 2.0


def history_of_losses(x, tr):
    loss = (x * x).mean()
    tr.history.append(float(loss))
    tr.log["losses"].append(loss.item())
    return loss


def mixed_appends(x, tr):
    loss = x.sum()
    tr.history.append(loss.item())
    tr.history.append("end of step")
    tr.history.append(loss * 2.0)
    tr.args.notes.append((tr.calls, "note"))
    return loss


def nested_state(x, tr):
    loss = x.abs().mean()
    tr.state.history.append(loss.item())
    tr.state.best = loss
    tr.args.notes.append(float(loss) * 2.0)
    return loss + 1.0


def through_a_local_name(x, tr):
    history, notes = tr.history, tr.args.notes  # (local names for lists only appended to)
    history.append(x.mean().item())
    notes.append("seen")
    history.append(x * 0.5)
    return x + 1.0


def under_a_tensor_if(x, tr):
    tr.calls += 1
    if x.mean() > 0:
        tr.history.append(1)
        tr.log["steps"] += 1
    else:
        tr.history.append(-1)
    tr.history.append(x.max().item())
    return x - 1.0


def in_a_graph_loop(x, tr):
    i = rt.zeros([], "int64")
    while i < (x > 0).astype("int64").sum():
        tr.calls += 1
        tr.log["steps"] += 2
        i += 1
    tr.history.append(float(i))
    tr.history.append("looped")
    return x * i.astype("float32")


def mixed_appends_reference(x, tr):
    s = float(np.sum(x))
    tr.history += [s, "end of step", s * 2.0]
    tr.args.notes.append((tr.calls, "note"))
    return s


def _state(tr) -> dict:
    return {"calls": tr.calls, "history": list(tr.history), "log": tr.log,
            "seen": sorted(tr.seen), "state": vars(tr.state), "args": vars(tr.args)}


def _run(fn, static_fn):
    eager_tr, static_tr = Trainer(), Trainer()
    for n, v in enumerate(INPUTS, 1):
        x = rt.to_tensor(np.array(v, "float32"))
        assert_same_leaves(static_fn(x, static_tr), fn(x, eager_tr), f"call {n}")
        assert_same_leaves(_state(static_tr), _state(eager_tr), f"state after call {n}")
    return static_tr


@pytest.mark.parametrize("fn", [counters_and_flags, history_of_losses, mixed_appends,
                                nested_state, through_a_local_name, under_a_tensor_if,
                                in_a_graph_loop])
def test_state_is_eagers_with_one_program(fn):
    static = d2s.to_static(fn)
    tr = _run(fn, static)
    assert static.program_cache.traces == 1
    assert len(tr.history) in (0, len(INPUTS), 2 * len(INPUTS), 3 * len(INPUTS))


def test_mixed_appends_match_numpy():
    static = d2s.to_static(mixed_appends)
    tr, ref = Trainer(), Trainer()
    for v in INPUTS:
        static(rt.to_tensor(np.array(v, "float32")), tr)
        mixed_appends_reference(np.array(v, "float32"), ref)
    assert [type(h) for h in tr.history] == [float, str, rt.Tensor] * len(INPUTS)
    for got, want in zip(tr.history, ref.history, strict=True):
        got = float(got) if isinstance(got, rt.Tensor) else got
        assert got == pytest.approx(want) if isinstance(want, float) else got == want
    assert tr.args.notes == ref.args.notes
    assert static.program_cache.traces == 1


def scale_by_history(x, tr):
    tr.history.append(x.sum().item())
    return x * len(tr.history)  # the result depends on how many items there are


@pytest.mark.filterwarnings("ignore:d2s. scale_by_history has been traced")
def test_a_result_that_depends_on_the_list_traces_again():
    static = d2s.to_static(scale_by_history)
    _run(scale_by_history, static)
    assert static.program_cache.traces == len(INPUTS)


class Shared(rt.nn.Layer):
    """`a` and `b` start as one Tensor; `forward` reads `b`, then rebinds `a`."""

    def __init__(self, reads_a):
        super().__init__()
        t = rt.to_tensor([1.0, 2.0])
        self.a, self.b, self.reads_a = t, t, reads_a

    def forward(self, x):
        y = x * self.b
        self.a = (self.a + y) if self.reads_a else y * 2.0
        return y + self.a


class Box:
    pass


def rebind_one_of_two(x, box):
    y = x * box.b
    box.a = box.a * 2.0 + y
    return y


def _places(o):
    return {"a": o.a, "b": o.b, "same": o.a is o.b}


@pytest.mark.parametrize("reads_a", [True, False])
def test_one_tensor_in_two_places_layer(reads_a):
    eager, model = Shared(reads_a), Shared(reads_a)
    static = d2s.to_static(model)
    for n, v in enumerate(INPUTS, 1):
        x = rt.to_tensor(np.array(v, "float32"))
        assert_same_leaves(static(x), eager(x), f"call {n}")
        assert_same_leaves(_places(model), _places(eager), f"after call {n}")
    # (one program while both places hold one Tensor, one after: `a` has a Tensor of its own)
    assert model.forward.program_cache.traces == 2


def test_one_tensor_in_two_places_argument():
    def make():
        box, t = Box(), rt.to_tensor([1.0, 2.0])
        box.a = box.b = t
        return box

    eager, box = make(), make()
    static = d2s.to_static(rebind_one_of_two)
    for n, v in enumerate(INPUTS, 1):
        x = rt.to_tensor(np.array(v, "float32"))
        assert_same_leaves(static(x, box), rebind_one_of_two(x, eager), f"call {n}")
        assert_same_leaves(_places(box), _places(eager), f"after call {n}")
        assert box.b.numpy().tolist() == [1.0, 2.0]  # never written through `a`
    assert static.program_cache.traces == 2


def new_list_each_call(x, tr):
    tr.state.best = [x.sum().item(), x.mean()]  # a new list in a place, every call
    tr.log["last"] = {"loss": float(x.max())}
    return x


def lazily_made_lists(x, tr):
    tr.log.setdefault("sums", []).append(float(x.sum()))
    tr.log["sums"].append("s")
    if "maxes" not in tr.log:
        tr.log["maxes"] = []
    tr.log["maxes"].append(x.max())
    tr.log.setdefault("calls", []).append(1)
    return x * 2.0


@pytest.mark.parametrize("fn, programs", [(new_list_each_call, 2), (lazily_made_lists, 2)])
def test_containers_put_in_places_are_eagers(fn, programs):
    """A list or dict the call puts in a place holds the values computed by this call (it
    was left out, or the first call's was reused); a key made on the first call is there on
    the next ones, so they append to its list (one more program: the key's absence decided
    the first)."""
    static = d2s.to_static(fn)
    tr = _run(fn, static)
    assert static.program_cache.traces == programs
    if fn is lazily_made_lists:
        assert len(tr.log["sums"]) == 2 * len(INPUTS) and tr.log["calls"] == [1] * len(INPUTS)


class Smoother:
    def __init__(self):
        self.window = collections.deque(maxlen=3)


def smoothed(x, sm):
    sm.window.append(x.mean().item())
    return x * 2.0


def test_a_deque_changed_is_a_clear_error():
    """A deque is not followed (its `maxlen` drops items as they are appended): the trace's
    value would have stayed in it and later calls would not append. The call raises at the
    user's function, and the deque holds what it held."""
    sm = Smoother()
    sm.window.append(0.5)
    with pytest.raises(d2s.StateChangeError, match=r"smoothed \(File .*line \d+\) changes "
                       r"sm\.window, a collections\.deque"):
        d2s.to_static(smoothed)(rt.ones([2]), sm)
    assert list(sm.window) == [0.5]


def step_with_stats(x, stats):
    """A dict of Python values passed in, read and written at constant keys."""
    stats["seen"] = True
    stats["steps"] += 1
    for _ in range((x > 0).astype("int64").sum()):  # a graph loop
        stats["positives"] += 1
    if x.sum() > 0:  # a tensor if
        stats["up"] += 1
    stats["last"] = x.sum().item()
    if stats["up"] > 2:  # on the counter the program carries: a graph condition
        return x * stats["scale"] * 10.0
    return x * stats["scale"]


def step_with_stats_reference(x, stats):
    stats["seen"] = True
    stats["steps"] += 1
    stats["positives"] += int((x > 0).sum())
    stats["up"] += int(x.sum() > 0)
    stats["last"] = float(x.sum())
    return x * stats["scale"] * (10.0 if stats["up"] > 2 else 1.0)


def test_a_dict_of_counters_passed_in_gets_one_program():
    """Keyed by its values, each new count traced a new program; keyed by identity once a
    program writes in it, its counters are program state, and what the trace read is guarded or fed: the result
    follows a key the caller changes (`scale`, here carried with the counters)."""
    def make():
        return {"scale": 2.0, "steps": 0, "positives": 0, "up": 0}

    static = d2s.to_static(step_with_stats)
    eager, got, ref = make(), make(), make()
    for n, v in enumerate(INPUTS, 1):
        if n == 4:
            for d in (eager, got, ref):
                d["scale"] = 0.5
        x = np.array(v, "float32")
        want = step_with_stats(rt.to_tensor(x), eager)
        assert_same_leaves(static(rt.to_tensor(x), got), want, f"call {n}")
        np.testing.assert_allclose(want.numpy(), step_with_stats_reference(x, ref), rtol=1e-6)
        assert_same_leaves(got, eager, f"after call {n}")
        assert_same_leaves(ref, eager, f"reference after call {n}")
    assert static.program_cache.traces == 1


def scaled_and_counted(x, stats):
    stats["steps"] += 1
    return x * stats["scale"]


def test_a_key_read_as_python_traces_again_when_changed():
    static = d2s.to_static(scaled_and_counted)
    stats = {"scale": 2.0, "steps": 0}
    outs = [static(rt.ones([2]), stats).numpy().tolist() for _ in range(2)]
    stats["scale"] = 0.5
    outs += [static(rt.ones([2]), stats).numpy().tolist() for _ in range(2)]
    assert outs == [[2.0, 2.0]] * 2 + [[0.5, 0.5]] * 2 and stats["steps"] == 4
    assert static.program_cache.traces == 2


def fill_metrics(x, metrics):
    metrics["loss"] = x.sum().item()
    metrics["done"] = True
    metrics["seen"].append(x.max().item())
    return x


def fill_tensor_metrics(x, metrics):
    metrics["loss"] = x.sum().item()
    metrics["total"] = x.sum()
    return x


def test_a_dict_holding_a_tensor_gets_computed_numbers():
    """A dict passed in that holds a tensor (after the first call, `metrics["total"]`) is
    traced with a copy of it: a number set in it from `.item()` was promoted to program state
    on the copy, which every trace makes anew (`AssertionError: d2s bug: numbers kept
    changing between traces`). The caller's dict gets the number, as eagerly."""
    static = d2s.to_static(fill_tensor_metrics)
    got, want = {"loss": 0.0}, {"loss": 0.0}
    for v in INPUTS[:4]:
        x = rt.to_tensor(np.array(v, "float32"))
        static(x, got)
        fill_tensor_metrics(x, want)
        assert_same_leaves(got, want, "metrics")


def test_a_fresh_dict_per_call_gets_its_own_values():
    """`metrics = {...}` made per step and filled by the converted call: keyed by its values,
    every call after the first reused the first call's program, which wrote into the first
    call's dict (the later ones kept their zeros, silently)."""
    static = d2s.to_static(fill_metrics)
    for v in INPUTS[:3]:
        x = rt.to_tensor(np.array(v, "float32"))
        got, want = ({"loss": 0.0, "done": False, "seen": []} for _ in range(2))
        static(x, got)
        fill_metrics(x, want)
        assert_same_leaves(got, want, "metrics")
    kept, want = ({"loss": 0.0, "done": False, "seen": []} for _ in range(2))
    traces = static.program_cache.traces
    for v in INPUTS:  # one dict the caller keeps: one more program, for every call
        x = rt.to_tensor(np.array(v, "float32"))
        static(x, kept)
        fill_metrics(x, want)
        assert_same_leaves(kept, want, "kept metrics")
    assert static.program_cache.traces == traces + 1


def appends_in_a_graph_loop(x, tr):
    for i in range((x > 0).astype("int64").sum()):
        tr.history.append(x.sum() * 1.0)
    return x * 2.0


def appends_under_a_tensor_if(x, tr):
    if x.mean() > 0:
        tr.history.append(x.sum().item())
    return x * 2.0


class Recorder(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = rt.nn.Linear(2, 2)
        self.outs = []

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            self.outs.append(y.mean())
        return y


@pytest.mark.parametrize("fn", [appends_in_a_graph_loop, appends_under_a_tensor_if])
def test_a_list_only_appended_to_as_a_tensor_array(fn):
    """A list whose appends a tensor decides becomes a tensor array made from the items it
    held; only appended to (its items not read), it was guarded by those items, which every
    call changes (a program per call). After each run the new items are appended to the
    caller's list (an alias of it sees them)."""
    static = d2s.to_static(fn)
    tr = _run(fn, static)
    assert static.program_cache.traces == 1
    assert tr.history and tr.state.history == []


def test_a_layer_list_appended_under_a_tensor_if():
    rt.seed(3)
    model = Recorder()
    eager = Recorder()
    eager.fc = model.fc
    static = d2s.to_static(model)
    alias = model.outs
    for n, v in enumerate(INPUTS, 1):
        x = rt.to_tensor(np.array([v], "float32"))
        assert_same_leaves(static(x), eager(x), f"call {n}")
        assert_same_leaves(model.outs, eager.outs, f"outs after call {n}")
    assert alias is model.outs and 0 < len(alias) < len(INPUTS)
    assert model.forward.program_cache.traces == 1


def log_records(x, tr):
    tr.history.append({"step": x.shape[0], "tags": ["train"], "state": tr.state})
    tr.history.append(("done", [x.ndim]))
    return x


def test_records_appended_are_new_each_call():
    """Python records a call appends (a dict, a tuple holding a list) are new objects on each
    eager call: a caller that changes one record changes only that one. Objects that existed
    before the call (`tr.state`) stay the same object."""
    static = d2s.to_static(log_records)
    eager, got = Trainer(), Trainer()
    for v in INPUTS[:3]:
        x = rt.to_tensor(np.array(v, "float32"))
        log_records(x, eager)
        static(x, got)
    for tr in (eager, got):
        tr.history[0]["tags"].append("edited")
        tr.history[1][1].append(0)
    assert repr(got.history) == repr(eager.history)
    assert got.history[2]["state"] is got.state and got.history[2] is not got.history[0]
    assert static.program_cache.traces == 1


def keep_batch_info(x, tr):
    tr.state.best = {"rows": x.shape[0], "tags": ["seen"]}
    tr.log["state"] = tr.state  # (an object that existed before the call: the same one)
    return x


def test_a_record_set_on_an_object_is_new_each_call():
    """`tr.state.best = {...}` makes a new dict on each eager call; replayed, every call set
    the trace's one dict again, with what the caller had added to it since."""
    static = d2s.to_static(keep_batch_info)
    eager, got = Trainer(), Trainer()
    for n, v in enumerate(INPUTS[:3], 1):
        x = rt.to_tensor(np.array(v, "float32"))
        keep_batch_info(x, eager)
        static(x, got)
        for tr in (eager, got):
            tr.state.best["tags"].append(n)
        assert repr(got.state.best) == repr(eager.state.best)
        assert got.log["state"] is got.state
    assert static.program_cache.traces == 1
