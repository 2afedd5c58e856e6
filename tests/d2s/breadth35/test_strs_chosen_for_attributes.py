"""A str that a tensor `if` chooses for an attribute or a dict entry of an object the caller
reaches (a streaming VAD's `self.state = "speech"` / `"silence"`, `status["mode"] = ...`):
converted for local names (a `ChosenStr`), it was refused for places of objects ("'box.mode'
is a string chosen by a tensor condition"). Now the places of changed objects get the run's
str too: written back after the call, read after the `if` (`==`, `.upper()`, returned) as
eager reads it. Eager vs static vs a Python reference over inputs taking both paths through
one program."""
import types

import numpy as np

import d2s
import runtime as rt
from runtime import nn

from tests.d2s.observe_wild.helpers import assert_same_leaves


class StreamingVAD(nn.Layer):
    def __init__(self):
        super().__init__()
        self.state = "silence"
        self.switches = 0

    def forward(self, frame, threshold):
        energy = (frame ** 2).mean()
        before = self.state
        if energy > threshold:
            self.state = "speech"
        else:
            self.state = "silence"
        if self.state != before:
            self.switches += 1
        return energy, self.state.upper(), self.state == "speech"


def vad_ref(frames, threshold):
    state, switches, outs = "silence", 0, []
    for f in frames:
        new = "speech" if float((f ** 2).mean()) > threshold else "silence"
        switches += new != state
        state = new
        outs.append((state.upper(), state == "speech"))
    return outs, state, switches


def test_a_layer_state_str_chosen_by_a_tensor_if():
    rng = np.random.default_rng(1)
    frames = [rng.standard_normal(8).astype("float32") * s for s in (0.1, 2.0, 2.0, 0.1)]
    eager, static = StreamingVAD(), d2s.to_static(StreamingVAD())
    ref, ref_state, ref_switches = vad_ref(frames, 0.5)
    for f, want_ref in zip(frames, ref, strict=True):
        want = eager(rt.to_tensor(f), 0.5)
        got = static(rt.to_tensor(f), 0.5)
        assert want[1:] == want_ref
        assert_same_leaves(got, want)
        assert type(static.state) is str and static.state == eager.state
    assert static.state == ref_state and static.switches == eager.switches == ref_switches
    assert len(static.forward.program_cache) <= 2  # (per `self.state` before the call)


def set_mode(status, box, x):
    status["mode"] = "idle"
    if x.sum() > 0:
        status["mode"] = "train"
        box.tag = f"pos-{len(status)}"
    else:
        box.tag = "neg"
    return x * 2, status["mode"] == "train"


def test_dict_entries_and_attributes_of_arguments():
    converted = d2s.to_static(set_mode)
    for v in ([1.0, 2.0], [-1.0, -2.0], [3.0, -1.0]):
        x = np.asarray(v, "float32")
        s_eager, b_eager = {}, types.SimpleNamespace()
        s_static, b_static = {}, types.SimpleNamespace()
        want = set_mode(s_eager, b_eager, rt.to_tensor(x))
        got = converted(s_static, b_static, rt.to_tensor(x))
        pos = x.sum() > 0
        assert (s_eager, b_eager.tag) == (({"mode": "train"}, "pos-1") if pos else
                                          ({"mode": "idle"}, "neg"))
        assert_same_leaves(got, want)
        assert s_static == s_eager and b_static.tag == b_eager.tag
        assert type(b_static.tag) is str and type(s_static["mode"]) is str
    assert len(converted.program_cache) == 1
