"""A list or dict made anew for each step (`metrics = {}` in the loop over batches) and passed
to a converted step that writes in it: every call's own object gets the call's values, as
eagerly, also where the step reads the object in ways no guard covers (`metrics.get(...)`,
`len(log)`) and where the object holds a tensor (traced through a copy). Keyed by their
values, such objects matched the first call's program, whose writes went into the FIRST
call's object: the later ones stayed empty, silently. They are keyed by identity too now
(`FunctionSpec.bind`: a trace per fresh object, see docs/d2s.md "Known limitations")."""
import dataclasses

import numpy as np
import pytest

import d2s
import runtime as rt

from .helpers import assert_same_leaves

INPUTS = [[1.0, 2.0], [-1.0, -3.0], [2.0, 0.5], [1.0, 2.0], [-2.0, 1.0], [0.5, 0.5]]


def _note(metrics, name, value):
    metrics[name] = value


def step_reading_metrics(x, metrics):
    loss = (x * x).mean()
    if metrics.get("skip", False):  # a read no guard covers: the dict is keyed by value
        return loss
    _note(metrics, "loss", loss.item())
    metrics["rows"] = x.shape[0]
    if x.sum() > 0:  # (a tensor `if`)
        loss = loss * 2.0
    return loss


def step_into_tensor_dict(x, out):
    out["double"] = x * 2.0  # `out` holds a tensor: traced through a copy of it
    out["total"] = (x + out["base"]).sum()
    return x + 1.0


def step_counting_log(x, log):
    log.append(x.sum().item())
    return x * float(len(log))  # reads what the list holds: keyed by its value


def _run(fn, make, call=lambda f, x, obj: f(x, obj)):
    static = d2s.to_static(fn)
    got_all, want_all = [], []
    for v in INPUTS:
        x = rt.to_tensor(np.array(v, "float32"))
        got, want = make(v), make(v)
        got_out, want_out = call(static, x, got), call(fn, x, want)
        got_all.append(got)
        want_all.append(want)
        assert_same_leaves(got_out, want_out, "result")
        assert_same_leaves(got_all, want_all, "the objects of every call so far")
    return static


def test_a_fresh_dict_read_with_get_gets_its_own_values():
    _run(step_reading_metrics, lambda v: {})


def test_a_fresh_dict_holding_a_tensor_gets_its_own_writes():
    _run(step_into_tensor_dict, lambda v: {"base": rt.to_tensor(np.array(v, "float32"))})


def test_a_fresh_list_whose_length_is_read_gets_its_own_appends():
    _run(step_counting_log, lambda v: [0.5])


def test_one_dict_kept_across_calls_still_gets_every_write():
    static = d2s.to_static(step_reading_metrics)
    got, want = {}, {}
    for v in INPUTS:
        x = rt.to_tensor(np.array(v, "float32"))
        assert_same_leaves(static(x, got), step_reading_metrics(x, want), "result")
        assert_same_leaves(got, want, "metrics")


def step_into_many_keys(x, out):
    out["e"] = x * 1.0
    out["b"] = x * 2.0
    out["f"] = x * 3.0
    out["a"] = x * 4.0
    out["d"] = x * 5.0
    out["c"] = x * 6.0
    return x


def test_new_keys_of_a_dict_holding_a_tensor_come_in_eagers_order():
    """The keys a call sets in a dict argument holding a tensor (traced through a copy) were
    written to the caller's dict in the order of a set of them (varying with the string
    hash seed): `list(out)` differed from eager's."""
    for _ in range(3):
        _run(step_into_many_keys, lambda v: {"base": rt.to_tensor(np.array(v, "float32"))})


@dataclasses.dataclass
class StepState:
    steps: int = 0
    losses: list = dataclasses.field(default_factory=list)


def step_into_dataclass(x, st):
    st.steps += 1
    st.losses.append(x.sum().item())
    return x * 2.0


def step_into_a_pair(x, pair):
    metrics, log = pair
    metrics["loss"] = (x * x).mean().item()
    log.append(x.max().item())
    return x - 1.0


def step_into_keywords(x, **extra):
    extra["metrics"]["loss"] = x.sum().item()
    return x + 1.0


@pytest.mark.parametrize("fn, make, call", [
    (step_into_dataclass, lambda v: StepState(), None),
    (step_into_a_pair, lambda v: ({}, []), None),
    (step_into_keywords, lambda v: {}, lambda f, x, obj: f(x, metrics=obj)),
], ids=["dataclass", "tuple", "keyword"])
def test_a_fresh_holder_of_written_objects_gets_its_own_values(fn, make, call):
    """A dataclass, a tuple of a dict and a list, or a dict passed through `**kwargs`, made
    per step: keyed by their values, every call wrote into the first call's objects."""
    _run(fn, make, *([call] if call else []))


class Counted(rt.nn.Layer):
    def __init__(self):
        super().__init__()
        self.calls = 0


def step_counting_in_a_layer(x, pair):
    pair[0].calls += 1
    return x * 2.0


def test_a_layer_in_a_fresh_tuple_is_not_a_written_container():
    """`f(x, (model,))`: the program writes in the Layer, which the key holds by identity,
    not in the tuple: a fresh tuple per call reuses the program (one trace), and the Layer
    counts every call."""
    static = d2s.to_static(step_counting_in_a_layer)
    model = Counted()
    for v in INPUTS:
        static(rt.to_tensor(np.array(v, "float32")), (model,))
    assert (model.calls, static.program_cache.traces) == (len(INPUTS), 1)
